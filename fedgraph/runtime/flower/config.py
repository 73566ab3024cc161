r"""The Flower run config (``[tool.flwr.app.config]``, kebab-case keys) →
the settings of a federated KGE run.

One run config drives both apps: the ``ServerApp`` reads the loop settings
and builds the strategy, each ``ClientApp`` builds its own client from the
same model settings and its node config's ``partition-id``. Keys and
defaults are those of ``fedgraph train`` (FedLU's settings); settings of a
particular algorithm go under ``extra.NAME`` (``extra.mu_distill = 2.0``,
:attr:`~fedgraph.federated.kge.setup.KGESettings.extra`).
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from fedgraph.federated.kge.setup import KGESettings
from fedgraph.registry import resolve_device
from fedgraph.runtime.loop import SELECTIONS
from fedgraph.training.fusion import FusionSettings

EXTRA_PREFIX = "extra."

#: run-config key holding ``"KEY=VALUE KEY=VALUE"`` settings of the chosen
#: algorithm (as ``fedgraph train --set``): any registered setting, also one
#: that the app's ``[tool.flwr.app.config.extra]`` table does not list (Flower
#: only overrides listed keys).
SET_KEY = "set"


def field_keys(
    cls: type,
    aliases: Mapping[str, str] | None = None,
    exclude: Collection[str] = (),
) -> dict[str, str]:
    r"""Run-config key → field of the dataclass ``cls``: every field but
    those in ``exclude``, kebab-cased (``fit_on`` → ``fit-on``), or under its
    key in ``aliases`` (field → key, ``{"lam": "lambda"}``). So a new field
    always has a key unless it is excluded. Raises a :class:`ValueError` when
    ``aliases`` or ``exclude`` names no field of ``cls``, when a field is both
    aliased and excluded, or when two fields would share one key."""
    aliases = dict(aliases or {})
    excluded = set(exclude)
    names = [f.name for f in dataclasses.fields(cls)]
    for what, given in (("aliases", aliases), ("exclude", excluded)):
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise ValueError(f"`{what}` names no field of {cls.__name__}: {unknown}")
    both = sorted(excluded & set(aliases))
    if both:
        raise ValueError(
            f"`aliases` gives a key to excluded fields of {cls.__name__}: {both}"
        )
    names = [n for n in names if n not in excluded]
    keys = {aliases.get(n, n.replace("_", "-")): n for n in names}
    if len(keys) != len(names):
        raise ValueError(f"`aliases` gives two fields of {cls.__name__} one key")
    return keys


def key_error(exc: ValueError, keys: Mapping[str, str], prefix: str) -> ValueError:
    r"""A settings class's ``exc``, which names fields (`` `fit_on` ``), with
    each field named by its run-config key (`` `fusion.fit-on` ``; ``keys``:
    key after ``prefix`` → field): "Run-config key `…` …" when the message
    starts with one, else "Run-config keys `PREFIX*`: …"."""
    msg = str(exc)
    for key, name in keys.items():
        msg = msg.replace(f"`{name}`", f"`{prefix}{key}`")
    if msg.startswith(f"`{prefix}"):
        return ValueError(f"Run-config key {msg}")
    return ValueError(f"Run-config keys `{prefix}*`: {msg}")


#: run-config key → field of the model-fusion step (FedE §2.2.3,
#: :class:`~fedgraph.training.fusion.FusionSettings`; ``fusion.enabled``
#: switches it on).
FUSION_PREFIX = "fusion."
FUSION_KEYS = {"enabled": "enabled", **field_keys(FusionSettings)}

#: :class:`KGESettings` fields whose run-config key is not their name
#: kebab-cased (none: ``batch_size`` → ``batch-size``, …;
#: :func:`field_keys`).
SETTINGS_KEY_ALIASES: dict[str, str] = {}

#: :class:`KGESettings` fields with no run-config key of their own:
#: ``extra``, the chosen algorithm's settings, comes from the ``extra.*`` keys
#: and ``set``; ``device`` is a node's hardware, not the run's: each SuperNode
#: names its own in its node config (:func:`node_device`).
SETTINGS_UNKEYED = frozenset({"extra", "device"})

#: run-config key → :class:`KGESettings` field (the model/training settings
#: both apps must agree on): every field but :data:`SETTINGS_UNKEYED`.
SETTINGS_KEYS = field_keys(KGESettings, SETTINGS_KEY_ALIASES, SETTINGS_UNKEYED)


def normalize_algorithm(name: str) -> str:
    r"""Registry key of ``name`` (:func:`fedgraph.federated.algorithms.normalize`)."""
    from fedgraph.federated.algorithms import normalize

    return normalize(name)


def _cast(key: str, value: Any, default: Any) -> Any:
    r"""``value`` as the type of ``default`` (TOML gives ``1`` for ``1.0``)."""
    from fedgraph.federated.algorithms import cast_setting

    return cast_setting(f"Run-config key `{key}`", value, default)


def _setting(key: str, value: Any, default: Any) -> Any:
    r"""A :class:`KGESettings` value: cast as :func:`_cast`, or, for a dict
    setting (``model-kwargs``), read from a string of ``KEY=VALUE`` items as
    ``set`` is (the keys are checked by :class:`KGESettings`)."""
    if not isinstance(default, dict):
        return _cast(key, value, default)
    if not isinstance(value, str):
        raise ValueError(
            f"Run-config key `{key}` must be a string of KEY=VALUE items "
            f"(got {value!r})"
        )
    from fedgraph.federated.algorithms import parse_assignments

    return parse_assignments(value.split(), f"Run-config key `{key}`")


def require_names(values: Mapping[str, Any]) -> None:
    r"""Raises a :class:`ValueError` unless ``data`` and ``algorithm`` are
    non-empty strings (every app's run config needs both)."""
    for key in ("data", "algorithm"):
        value = values.get(key)
        if not isinstance(value, str) or not value:
            raise ValueError(
                f"The run config needs `{key}` (a non-empty string, got {value!r})"
            )


def read_flat_run_config(
    cls: type, run_config: Mapping[str, Any], keys: Mapping[str, str], app: str
) -> dict[str, Any]:
    r"""Field name → typed value of a run config whose keys all map to fields
    of the dataclass ``cls`` (``keys``: run-config key → field); each value
    takes its field default's type. Raises a :class:`ValueError` naming an
    unknown key, a wrong type or a missing ``data``/``algorithm``."""
    defaults = {f.name: f.default for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for key, value in run_config.items():
        if key not in keys:
            raise ValueError(
                f"Unknown run-config key `{key}` for {app} (known keys: "
                f"{sorted(keys)}); fix [tool.flwr.app.config] or --run-config."
            )
        default = defaults[keys[key]]
        missing = default is dataclasses.MISSING
        values[keys[key]] = value if missing else _cast(key, value, default)
    require_names(values)
    return values


def extra_defaults() -> dict[str, Any]:
    r"""``extra.KEY`` → default for every setting of a registered KGE
    algorithm (the first declaring algorithm's default where several
    declare a key): what an app's ``[tool.flwr.app.config.extra]`` table may
    list (:func:`fedgraph.federated.algorithms.algorithms`)."""
    from fedgraph.federated.algorithms import algorithms

    out: dict[str, Any] = {}
    for alg in algorithms("kge").values():
        for key, default in alg.defaults().items():
            out.setdefault(EXTRA_PREFIX + key, default)
    return out


def _parse_extra(
    algorithm: str, extra: Mapping[str, Any], assignments: Any
) -> dict[str, Any]:
    r"""The ``extra.*`` values (any KGE algorithm's setting, cast to its
    type; the chosen algorithm's also range-checked) and the ``set`` string
    (the chosen algorithm's settings only)."""
    from fedgraph.federated.algorithms import (
        check_keys,
        check_value,
        get,
        known_settings,
        parse_assignments,
        setting_owners,
    )

    out: dict[str, Any] = {}
    for key, value in extra.items():
        owners = setting_owners(key, "kge")
        if not owners:
            raise ValueError(
                f"Unknown run-config key `{EXTRA_PREFIX}{key}` (algorithm "
                f"settings: {[EXTRA_PREFIX + k for k in known_settings('kge')]})"
            )
        owner = get(algorithm if algorithm in owners else owners[0], "kge")
        f = next(f for f in owner.fields() if f.name == key)
        what = f"Run-config key `{EXTRA_PREFIX}{key}`"
        out[key] = (
            check_value(owner.name, f, value, what)
            if owner.name == algorithm
            else _cast(EXTRA_PREFIX + key, value, f.default)
        )
    if not isinstance(assignments, str):
        raise ValueError(
            f"Run-config key `{SET_KEY}` must be a string of KEY=VALUE items "
            f"(got {assignments!r})"
        )
    try:
        values = parse_assignments(assignments.split(), f"Run-config key `{SET_KEY}`")
        check_keys(values, algorithm, "kge")
        own = {f.name: f for f in get(algorithm, "kge").fields()}
        for key, value in values.items():
            what = f"Run-config key `{SET_KEY}`: {key}"
            out[key] = check_value(algorithm, own[key], value, what)
    except ValueError as exc:
        msg = str(exc)
        raise ValueError(
            msg if msg.startswith("Run-config") else f"Run-config key `set`: {msg}"
        ) from None
    return out


@dataclass
class FlowerRunSettings:
    r"""A federated KGE run as the Flower apps see it.

    Args:
        data (str): a registered federated dataset name or a partition
            folder (``fedgraph partition … --out DIR``), readable on the
            server (for the vocabulary size, unless ``num_entities`` is set)
            and on every client.
        algorithm (str): a key of
            :func:`~fedgraph.federated.kge.setup.kge_algorithms`.
        settings (KGESettings): model and local-training settings.
        num_rounds (int): maximum rounds. (default: :obj:`200`)
        fraction (float): client fraction :math:`F`. (default: :obj:`1.0`)
        eval_every (int): validate every ``k`` rounds. (default: :obj:`5`)
        patience (int): evaluations without improvement before stopping.
            (default: :obj:`3`)
        monitor (str): weighted validation metric. (default: ``"mrr"``)
        selection (str): ``"weighted"``: the test pass uses every client's
            state at the best weighted round; ``"per-client"``: each client's
            own best round (FedLU's code; see
            :func:`~fedgraph.runtime.run_federation`). (default: ``"weighted"``)
        test (bool): evaluate the best round on ``"test"``. (default: True)
        num_clients (int): SuperNodes to wait for (``0``: the dataset's
            number of clients). (default: :obj:`0`)
        num_entities (int): global vocabulary size (``0``: read from
            ``data``; set it and ``num_clients`` and the server never opens
            the data). (default: :obj:`0`)
        out (str): folder for ``results.json`` and ``server.pt`` (empty:
            write nothing). (default: ``""``)
        threads (int): ``torch.set_num_threads`` in each app (``0``: leave
            it). (default: :obj:`0`)
        reply_timeout (float): seconds to wait for a round's replies
            (``0``: no limit). (default: :obj:`0`)
        connect_timeout (float): seconds to wait for the SuperNodes to
            connect. (default: :obj:`120`)
        checkpoint_dir (str): server-side folder for ``last.pt`` (after every
            round) and ``best.pt``; each client then saves its state after
            every message under its node config's ``state-dir``
            (``{state-dir}/{run-name}/client{K}``). Empty: no checkpoints.
            (default: ``""``)
        resume (bool): continue from ``checkpoint_dir/last.pt`` (a new
            Flower run with the same run config; the clients restore their
            saved state). Without ``last.pt`` the run starts afresh; with
            it, a run without ``resume`` is refused (it would overwrite the
            interrupted run's checkpoint). (default: :obj:`False`)
        run_name (str): names the clients' state folders; required with
            ``checkpoint_dir``. (default: ``""``)
        min_available_nodes (int): before each round, wait (up to
            ``connect_timeout``) until this many clients are connected
            (``0``: do not wait). (default: :obj:`0`)
        min_fit_nodes (int): with ``accept_failures``, the fewest training
            replies a round may go on with (``0``: one). (default: :obj:`0`)
        accept_failures (bool): go on without a client that fails (its
            reply is missing from the aggregate, the failure is recorded in
            the round's ``events``); off: the run stops with an error naming
            the client and round. (default: :obj:`False`)
        wait_for_failed (float): seconds an exchange waits for a client that
            failed in it to be reachable again (its node still online, or a
            restarted SuperNode with its ``partition-id``), has it rejoin and
            sends it the same message again; then (or when it is back with a
            state other than the one the exchange started from)
            ``accept_failures`` decides. ``0``: no waiting. (default: :obj:`0`)
        pull_backoff (float): seconds before the ``ServerApp`` asks the
            SuperLink again for an object of a reply whose node has not
            finished pushing it, doubling (Flower's default: 1 s;
            :func:`~fedgraph.runtime.flower.polling.shorten_pull_backoff`).
            ``0``: Flower's. (default: :obj:`0`)
        client_mods (str): comma-separated Flower mods the ``ClientApp``
            applies around every handler
            (:mod:`~fedgraph.runtime.flower.mods`). (default: ``""``)
        compact_messages (bool): send every message in the packed layout of
            :func:`~fedgraph.runtime.flower.records.pack_content` (control,
            config, metrics and all tensors as one byte string in one
            record: 3 Flower objects a message, 6 with tensors over one
            Flower array chunk, instead of 6 to 11, each one request per hop
            of a deployment); same values and ledger.
            Client mods then see the packed records. (default: :obj:`False`)
        fusion (FusionSettings, optional): FedE's model fusion after the test
            pass (run-config keys ``fusion.*``; ``None``: no fusion step).
            Each client fuses its tested model with its own single-KG model
            from its node config's ``single-dir`` and reports the three
            models' test metrics; the server writes ``out/fusion/results.json``
            (:func:`~fedgraph.runtime.flower.server_app.run_server`).
            (default: :obj:`None`)
    """

    data: str
    algorithm: str
    settings: KGESettings = field(default_factory=KGESettings)
    num_rounds: int = 200
    fraction: float = 1.0
    eval_every: int = 5
    patience: int = 3
    monitor: str = "mrr"
    selection: str = "weighted"
    test: bool = True
    num_clients: int = 0
    num_entities: int = 0
    out: str = ""
    threads: int = 0
    reply_timeout: float = 0.0
    connect_timeout: float = 120.0
    checkpoint_dir: str = ""
    resume: bool = False
    run_name: str = ""
    min_available_nodes: int = 0
    min_fit_nodes: int = 0
    accept_failures: bool = False
    wait_for_failed: float = 0.0
    pull_backoff: float = 0.0
    client_mods: str = ""
    compact_messages: bool = False
    fusion: FusionSettings | None = None

    @classmethod
    def from_run_config(cls, run_config: Mapping[str, Any]) -> FlowerRunSettings:
        r"""Parses a Flower ``context.run_config``; unknown keys, wrong types
        and an unknown ``algorithm`` raise a :class:`ValueError` that names
        the key."""
        from fedgraph.federated.algorithms import algorithms

        defaults = {f.name: f.default for f in dataclasses.fields(cls)}
        base = KGESettings()
        loop: dict[str, Any] = {}
        settings: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        fusion: dict[str, Any] = {}
        assignments: Any = ""
        for key, value in run_config.items():
            if key == SET_KEY:
                assignments = value
            elif key in LOOP_KEYS:
                name = LOOP_KEYS[key]
                default = defaults[name]
                required = default is dataclasses.MISSING  # data, algorithm
                loop[name] = value if required else _cast(key, value, default)
            elif key in SETTINGS_KEYS:
                name = SETTINGS_KEYS[key]
                settings[name] = _setting(key, value, getattr(base, name))
            elif key.startswith(EXTRA_PREFIX) and len(key) > len(EXTRA_PREFIX):
                extra[key[len(EXTRA_PREFIX) :]] = value
            elif key[len(FUSION_PREFIX) :] in FUSION_KEYS and key.startswith(
                FUSION_PREFIX
            ):
                fusion[key[len(FUSION_PREFIX) :]] = value
            else:
                known = sorted([*LOOP_KEYS, *SETTINGS_KEYS, SET_KEY])
                known += [FUSION_PREFIX + k for k in FUSION_KEYS] + ["extra.NAME"]
                raise ValueError(
                    f"Unknown run-config key `{key}` (known keys: {known}); "
                    "fix [tool.flwr.app.config] or --run-config."
                )
        require_names(loop)
        algorithm = normalize_algorithm(loop["algorithm"])
        kge = algorithms("kge")
        if algorithm not in kge:
            raise ValueError(
                f"Run-config key `algorithm`: could not resolve "
                f"'{loop['algorithm']}' among choices {sorted(kge)}"
            )
        loop["algorithm"] = algorithm
        # any algorithm's `extra.*` key is accepted (an app's config lists
        # them all, since Flower only overrides keys that exist there)
        extra = _parse_extra(algorithm, extra, assignments)
        try:
            parsed = KGESettings(**settings, extra=extra)
        except ValueError as exc:  # name the run-config key, not the field
            raise key_error(exc, SETTINGS_KEYS, "") from None
        out = cls(
            settings=parsed,
            fusion=parse_fusion(fusion),
            **loop,
        )
        out.validate()
        return out

    def validate(self) -> None:
        r"""Checks the loop settings early (before any SuperNode is asked)."""
        if self.num_rounds < 1:
            raise ValueError(
                f"Run-config key `num-rounds` must be positive (got {self.num_rounds})"
            )
        if self.eval_every < 1:
            raise ValueError(
                f"Run-config key `eval-every` must be positive (got {self.eval_every})"
            )
        if not 0 < self.fraction <= 1:
            raise ValueError(
                f"Run-config key `fraction` must lie in (0, 1] (got {self.fraction})"
            )
        if self.selection not in SELECTIONS:
            raise ValueError(
                f"Run-config key `selection` must be one of {list(SELECTIONS)} "
                f"(got {self.selection!r})"
            )
        if self.fusion is not None and not self.test:
            raise ValueError(
                "Run-config key `fusion.enabled` needs `test = true` (the clients "
                "fuse the models they were tested with)"
            )
        check_checkpoint_settings(self)
        check_failure_settings(self)
        for key, value in (
            ("num-clients", self.num_clients),
            ("num-entities", self.num_entities),
            ("threads", self.threads),
            ("patience", self.patience),
        ):
            if value < 0:
                raise ValueError(
                    f"Run-config key `{key}` must be non-negative (got {value})"
                )

    def loop_kwargs(self) -> dict[str, Any]:
        r"""The keyword arguments of :func:`~fedgraph.runtime.run_federation`
        this run config sets (validation every ``eval_every`` rounds, early
        stopping, test of the best round)."""
        return {
            "num_rounds": self.num_rounds,
            "fraction": self.fraction,
            "eval_every": self.eval_every,
            "patience": self.patience,
            "monitor": self.monitor,
            "selection": self.selection,
            "seed": self.settings.seed,
            "test": self.test,
        }

    def to_dict(self) -> dict[str, Any]:
        r"""A JSON-able copy (``results.json`` ``settings``)."""
        out = dataclasses.asdict(self)
        out.update(out.pop("settings"))
        return out


#: :class:`FlowerRunSettings` fields whose run-config key is not their name
#: kebab-cased (none; :func:`field_keys`).
LOOP_KEY_ALIASES: dict[str, str] = {}

#: :class:`FlowerRunSettings` fields with no run-config key of their own:
#: ``settings`` is read from the :data:`SETTINGS_KEYS` (and ``extra.*``,
#: ``set``), ``fusion`` from the ``fusion.*`` keys (:data:`FUSION_KEYS`).
LOOP_UNKEYED = frozenset({"settings", "fusion"})

#: run-config key → :class:`FlowerRunSettings` field (the round loop and
#: I/O): every field but :data:`LOOP_UNKEYED`.
LOOP_KEYS = field_keys(FlowerRunSettings, LOOP_KEY_ALIASES, LOOP_UNKEYED)


def check_checkpoint_settings(cfg: Any) -> None:
    r"""Checks the checkpoint settings shared by the KGE and FedMKGC run
    configs (``checkpoint-dir``, ``resume``, ``run-name``)."""
    if cfg.resume and not cfg.checkpoint_dir:
        raise ValueError("Run-config key `resume` needs `checkpoint-dir`")
    if cfg.checkpoint_dir and not cfg.run_name:
        raise ValueError(
            "Run-config key `checkpoint-dir` needs `run-name` (it names each "
            "client's state folder under its node's `state-dir`)"
        )
    if cfg.run_name and (
        "/" in cfg.run_name or "\\" in cfg.run_name or cfg.run_name in (".", "..")
    ):
        raise ValueError(
            f"Run-config key `run-name` must be a plain folder name (got "
            f"{cfg.run_name!r})"
        )


def use_threads(threads: int) -> int:
    r"""Sets ``torch.set_num_threads(threads)`` in this app's process, at most
    the number of CPUs of the machine it runs on (the run config is written
    once for nodes of any size; torch may crash creating thousands of
    threads), with a warning when it lowers the value. ``0`` leaves torch's
    default. Returns the number set (``0``: none)."""
    import torch

    cpus = os.cpu_count()
    if threads <= 0:
        return 0
    if cpus is not None and threads > cpus:
        warnings.warn(
            f"Run-config key `threads` = {threads} exceeds this machine's "
            f"{cpus} CPUs: using {cpus}",
            stacklevel=2,
        )
        threads = cpus
    torch.set_num_threads(threads)
    return threads


def check_failure_settings(cfg: Any) -> None:
    r"""Checks the failure and mod settings shared by the KGE and Fed-RGCN
    run configs (``min-available-nodes``, ``min-fit-nodes``,
    ``wait-for-failed``, ``pull-backoff``, ``client-mods``)."""
    from fedgraph.runtime.flower.mods import parse_mods

    for key, value in (
        ("min-available-nodes", cfg.min_available_nodes),
        ("min-fit-nodes", cfg.min_fit_nodes),
        ("wait-for-failed", cfg.wait_for_failed),
        ("pull-backoff", cfg.pull_backoff),
    ):
        if value < 0:
            raise ValueError(
                f"Run-config key `{key}` must be non-negative (got {value})"
            )
    if cfg.pull_backoff > 60:
        raise ValueError(
            f"Run-config key `pull-backoff` must lie in [0, 60] s (got "
            f"{cfg.pull_backoff})"
        )
    if cfg.num_clients and cfg.min_fit_nodes > cfg.num_clients:
        raise ValueError(
            f"Run-config key `min-fit-nodes` ({cfg.min_fit_nodes}) exceeds "
            f"`num-clients` ({cfg.num_clients})"
        )
    parse_mods(cfg.client_mods)


def transport_kwargs(cfg: Any) -> dict[str, Any]:
    r"""The :class:`~fedgraph.runtime.flower.GridTransport` options of a
    parsed run config (KGE or Fed-RGCN)."""
    return {
        "reply_timeout": cfg.reply_timeout or None,
        "connect_timeout": cfg.connect_timeout,
        "accept_failures": cfg.accept_failures,
        "min_fit_nodes": cfg.min_fit_nodes,
        "min_available_nodes": cfg.min_available_nodes,
        "wait_for_failed": cfg.wait_for_failed,
        "packed": bool(getattr(cfg, "compact_messages", False)),
    }


def parse_fusion(values: Mapping[str, Any]) -> FusionSettings | None:
    r"""The ``fusion.*`` run-config keys (without the prefix) → the fusion
    step's settings, or ``None`` unless ``fusion.enabled`` is true. Wrong
    types and values raise a :class:`ValueError` naming the key."""
    defaults = {"enabled": False, **dataclasses.asdict(FusionSettings())}
    cast = {
        k: _cast(FUSION_PREFIX + k, v, defaults[FUSION_KEYS[k]])
        for k, v in values.items()
    }
    if not cast.pop("enabled", False):
        return None
    try:
        return FusionSettings(**{FUSION_KEYS[k]: v for k, v in cast.items()})
    except ValueError as exc:  # name the run-config key, not the field
        raise key_error(exc, FUSION_KEYS, FUSION_PREFIX) from None


def single_dir(node_config: Mapping[str, Any]) -> str:
    r"""The node-local folder of this client's single-KG (Independent) model
    for the fusion step (``--node-config "partition-id=K
    single-dir='/path'"``: ``trainerK.pt`` and, for its model settings,
    ``results.json``)."""
    value = node_config.get("single-dir") if hasattr(node_config, "get") else None
    if not isinstance(value, str) or not value:
        raise ValueError(
            "This run fuses each client's model with its single-KG model "
            "(run config `fusion.enabled`), so every SuperNode needs node-config "
            "key `single-dir`, the folder of its Independent model: "
            '--node-config "partition-id=K '
            "single-dir='/path/to/independent'\" (holding trainerK.pt)"
        )
    return value


def node_device(node_config: Mapping[str, Any]) -> str:
    r"""Where this SuperNode's client trains and ranks (``--node-config
    "partition-id=K device='cuda'"``; default ``"cpu"``): a node's hardware
    is the node's, not the run's. The client's payloads and saved states are
    CPU tensors whatever the device (:class:`~fedgraph.federated.KGEClient`),
    so nodes on different devices take part in one run."""
    value = node_config.get("device", "cpu") if hasattr(node_config, "get") else "cpu"
    return resolve_device(value, "Node-config key `device`")


def partition_id(node_config: Mapping[str, Any], num_clients: int) -> int:
    r"""The client index a SuperNode plays (``--node-config
    "partition-id=K"``), checked against the federation size."""
    if "partition-id" not in node_config:
        raise ValueError(
            "The node config has no `partition-id`: start the SuperNode with "
            '--node-config "partition-id=K" (K = 0 … number of clients - 1)'
        )
    value = node_config["partition-id"]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(
            f"Node-config key `partition-id` must be an integer (got {value!r})"
        )
    if not 0 <= value < num_clients:
        raise ValueError(
            f"Node-config key `partition-id` must lie in [0, {num_clients}) for "
            f"this dataset (got {value})"
        )
    return int(value)


__all__ = [
    "FlowerRunSettings",
    "check_checkpoint_settings",
    "check_failure_settings",
    "transport_kwargs",
    "partition_id",
    "node_device",
    "single_dir",
    "parse_fusion",
    "field_keys",
    "key_error",
    "normalize_algorithm",
    "extra_defaults",
    "SET_KEY",
]
