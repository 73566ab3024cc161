r"""Secure aggregation, private entity alignment and DP on uploads in a
Flower deployment.

The Flower apps here are fedgraph's KGE apps
(:mod:`fedgraph.runtime.flower`) plus the run config's ``privacy.*`` keys,
which switch on the defences of :mod:`fedgraph.privacy` (the objects of
``fedgraph train --secagg`` / ``--private-alignment``): the ``ServerApp``
wraps its strategy, each ``ClientApp`` wraps its node's client, and the
wrapped objects exchange their payloads over Flower messages like any other
fedgraph payload. With every defence off they are the plain apps.

* ``privacy.secagg = true``: the client's ``"train"`` reply carries one
  masked integer vector (its entity rows and presence bits, quantised and
  masked pairwise, :mod:`fedgraph.privacy.secagg`); its registration, an
  elliptic-curve public key. The server relays each client the keys of its
  neighbours (``privacy.secagg-neighbours``) in the ``"train"`` message and
  learns only the sums. A client lost mid-round stops the run with an
  error naming it (its masks would not cancel) unless
  ``privacy.secagg-threshold`` is set (at least 2, with
  ``accept-failures = true``): then every round runs SecAgg+'s setup,
  masked-input and unmask exchanges (:mod:`fedgraph.privacy.secagg_plus`)
  and the survivors' sum is recovered.
* ``privacy.private-alignment = true``: in the alignment step each node
  reports its entities' keyed-hash tokens instead of the vocabulary size
  (:class:`PrivateAlignment`: the server's table has a row per token of
  their union), and in every later message the node names its entities by
  those tokens (:mod:`fedgraph.privacy.alignment`) under the
  federation secret, read from the file that the **node** config's
  ``alignment-secret`` names (a hex string, the same on every client node,
  never given to the server: the run config, which the server reads, does
  not hold it). A node whose node config names its own client folder
  (``data-dir``: it holds no global id) always aligns this way.

* ``privacy.dp-epsilon > 0``: each node's client clips and noises its
  uploads (:class:`~fedgraph.privacy.dp.DPUploadClient`, the noise seeded as
  in ``fedgraph train``); ``results.json`` gets each client's
  :math:`(\varepsilon, \delta)` (:func:`dp_report`).
* ``privacy.record-uploads = "last"`` or ``"all"``: the ``ServerApp``
  records what it is handed, after every client-side defence (rows, tokens,
  noised rows, or masked vectors and the aggregate), in the files of
  ``fedgraph train --record-uploads`` under ``out/uploads``
  (:class:`~fedgraph.privacy.record.UploadRecorder`), so that ``fedgraph
  audit OUT`` runs on a deployment. Unlike the defences it combines with
  ``fusion.enabled``: the fusion exchange does not pass through the strategy,
  so the recording holds the training rounds only.

Components (``[tool.flwr.app.components]``, ``examples/flower_private_app``):
``serverapp = "fedgraph.privacy.flower:server_app"`` and ``clientapp =
"fedgraph.privacy.flower:node_app"`` (the process-lived ``ClientApp``,
:mod:`fedgraph.runtime.flower.node`) or ``"fedgraph.privacy.flower:client_app"``
(one process per message).

Flower's own SecAgg+ (``SecAggPlusWorkflow`` with ``secaggplus_mod``) drives
Flower's legacy strategies (``configure_fit``/``aggregate_fit`` over a
``LegacyContext``, the ``"fitins"``/``"fitres"`` records) in four message
stages of its own, outside fedgraph's round loop; the deployment runs
fedgraph's masked-sum protocol instead (its key agreement is Flower's
``generate_shared_key``).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fedgraph.privacy.flower_alignment import (
    PRIVATE_ALIGNMENT,
    SECRET_KEY,
    PrivateAlignment,
    describe_private_node,
    node_secret,
)
from fedgraph.privacy.setup import PrivacySettings
from fedgraph.runtime.flower.alignment import AlignedRun
from fedgraph.runtime.flower.client_app import build_kge_client, make_client_app
from fedgraph.runtime.flower.config import FlowerRunSettings, field_keys, key_error
from fedgraph.runtime.flower.federation import node_data
from fedgraph.runtime.flower.node import WorkerClientApp
from fedgraph.runtime.flower.server_app import build_kge_strategy

#: run-config prefix of the privacy keys.
PRIVACY_PREFIX = "privacy."
#: run-config key (after the prefix) → :class:`PrivacySettings` field: every
#: field, kebab-cased (``record_uploads`` → ``privacy.record-uploads``).
PRIVACY_KEYS = field_keys(PrivacySettings)


def parse_privacy(values: Mapping[str, Any]) -> PrivacySettings | None:
    r"""The ``privacy.*`` run-config keys (without the prefix) → the
    settings, or ``None`` when no defence is on. Wrong types and values
    raise a :class:`ValueError` naming the key."""
    from fedgraph.federated.algorithms import cast_setting

    defaults = PrivacySettings()
    kwargs = {}
    for key, value in values.items():
        if key not in PRIVACY_KEYS:
            raise ValueError(
                f"Unknown run-config key `{PRIVACY_PREFIX}{key}` (privacy keys: "
                f"{[PRIVACY_PREFIX + k for k in PRIVACY_KEYS]})"
            )
        name = PRIVACY_KEYS[key]
        what = f"Run-config key `{PRIVACY_PREFIX}{key}`"
        kwargs[name] = cast_setting(what, value, getattr(defaults, name))
    try:
        out = PrivacySettings(**kwargs)
    except ValueError as exc:  # name the run-config key, not the field
        raise key_error(exc, PRIVACY_KEYS, PRIVACY_PREFIX) from None
    return out if out.active else None


def privacy_defaults() -> dict[str, Any]:
    r"""``privacy.KEY`` → default (what an app's config lists)."""
    base = PrivacySettings()
    return {PRIVACY_PREFIX + k: getattr(base, n) for k, n in PRIVACY_KEYS.items()}


def wrap_strategy(strategy: Any, privacy: PrivacySettings | None, out: str = "") -> Any:
    r"""The server's strategy with ``privacy``'s defences (the server side
    of :func:`~fedgraph.privacy.setup.apply_privacy`; no secret needed) and,
    with ``privacy.record-uploads``, the upload recorder outermost: it
    stores what the ``ServerApp`` is handed under ``out/uploads``
    (:class:`~fedgraph.privacy.record.UploadRecorder`, the files of
    ``fedgraph train --record-uploads``)."""
    if privacy is None:
        return strategy
    from fedgraph.privacy.alignment import KeyedHashStrategy
    from fedgraph.privacy.secagg import SecAggStrategy

    if privacy.private_alignment:
        strategy = KeyedHashStrategy(strategy)
    if privacy.secagg:
        strategy = SecAggStrategy(
            strategy,
            privacy.secagg_neighbours or None,
            privacy.secagg_clip_range,
            privacy.secagg_levels,
            privacy.secagg_threshold,
        )
    if privacy.record_uploads:
        from fedgraph.privacy.record import UploadRecorder
        from fedgraph.privacy.setup import UPLOADS_DIR

        if not out:
            raise ValueError(_RECORD_NEEDS_OUT)
        directory = Path(out) / UPLOADS_DIR
        strategy = UploadRecorder(strategy, directory, privacy.record_uploads)
    return strategy


_RECORD_NEEDS_OUT = (
    "Run-config key `privacy.record-uploads` records under `out`/uploads: "
    "set `out`, the ServerApp's output folder"
)


@functools.lru_cache(maxsize=8)
def noise_multiplier(epsilon: float, delta: float, rounds: int) -> float:
    r""":math:`\sigma` of ``rounds`` uploads at :math:`(\varepsilon, \delta)`
    (:func:`~fedgraph.privacy.accountant.calibrate_noise`, cached: the
    node's client is rebuilt for every message)."""
    from fedgraph.privacy.accountant import calibrate_noise

    return calibrate_noise(epsilon, delta, rounds)


def wrap_client(
    client: Any,
    privacy: PrivacySettings | None,
    fed: Any,
    node_config: Any,
    rounds: int = 1,
    seed: int = 0,
) -> Any:
    r"""The node's client with ``privacy``'s defences, innermost first as
    :func:`~fedgraph.privacy.setup.apply_privacy` stacks them: DP on its
    uploads (noise calibrated for ``rounds`` uploads, seeded by ``seed`` and
    the client id), keyed-hash tokens under the node's secret
    (:func:`node_secret`), SecAgg over the federation's shared index
    (entities; relations for FedR)."""
    if privacy is None:
        return client
    if privacy.dp_epsilon > 0:
        from fedgraph.privacy.dp import DPUploadClient

        sigma = noise_multiplier(privacy.dp_epsilon, privacy.dp_delta, int(rounds))
        client = DPUploadClient(client, privacy.dp_clip, sigma, seed=seed)
    from fedgraph.federated.kge.fede import ENTITY
    from fedgraph.federated.kge.fedr import RELATION, FedRClient
    from fedgraph.privacy.alignment import KeyedHashClient
    from fedgraph.privacy.secagg import SecAggClient

    if privacy.private_alignment:
        client = KeyedHashClient(
            client, node_secret(node_config), fed.entity_names, fed.relation_names
        )
    if privacy.secagg:
        fedr = isinstance(client, FedRClient)
        client = SecAggClient(
            client,
            fed.num_relations if fedr else fed.num_entities,
            privacy.secagg_clip_range,
            privacy.secagg_levels,
            key=RELATION if fedr else ENTITY,
        )
    return client


@dataclasses.dataclass
class PrivateRunSettings(FlowerRunSettings):
    r"""A :class:`~fedgraph.runtime.flower.FlowerRunSettings` plus the
    run config's ``privacy.*`` keys.

    Args:
        privacy (PrivacySettings, optional): the defences (``None``: none).
            (default: :obj:`None`)
    """

    privacy: PrivacySettings | None = None

    @classmethod
    def from_run_config(cls, run_config: Mapping[str, Any]) -> PrivateRunSettings:
        r"""Parses ``run_config`` as :class:`FlowerRunSettings` does, and its
        ``privacy.*`` keys (:func:`parse_privacy`)."""
        own = {k: v for k, v in run_config.items() if k.startswith(PRIVACY_PREFIX)}
        base = FlowerRunSettings.from_run_config(
            {k: v for k, v in run_config.items() if k not in own}
        )
        privacy = parse_privacy({k[len(PRIVACY_PREFIX) :]: v for k, v in own.items()})
        # The recorder alone may run with fusion: it stores the training
        # rounds' replies (and registrations); the fusion exchange, after the
        # test pass, goes to the nodes and back without the strategy.
        if privacy is not None and privacy.defended and base.fusion is not None:
            raise ValueError(
                "Run-config key `fusion.enabled` does not combine with the "
                "`privacy.*` defences (the fusion step evaluates each client's "
                "model outside them)"
            )
        if privacy is not None and privacy.record_uploads and not base.out:
            raise ValueError(_RECORD_NEEDS_OUT)
        if (
            privacy is not None
            and privacy.secagg_threshold
            and not base.accept_failures
        ):
            raise ValueError(
                "Run-config key `privacy.secagg-threshold` recovers the sum of a "
                "round that lost a client: it needs `accept-failures = true`"
            )
        fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(base)}
        return cls(**fields, privacy=privacy)


def keyed_privacy(
    privacy: PrivacySettings | None, keyed: bool
) -> PrivacySettings | None:
    r"""``privacy`` with private alignment switched on when the nodes align
    by keyed names (``keyed``: they hold only their own client folders)."""
    if not keyed or (privacy is not None and privacy.private_alignment):
        return privacy
    return dataclasses.replace(privacy or PrivacySettings(), private_alignment=True)


def build_private_strategy(
    cfg: PrivateRunSettings, aligned: AlignedRun | None = None
) -> tuple[Any, int]:
    r""":func:`~fedgraph.runtime.flower.build_kge_strategy`'s strategy in
    the server side of ``cfg.privacy`` (:func:`wrap_strategy`), keyed by
    token ranks when the nodes aligned by keyed names."""
    strategy, num_clients = build_kge_strategy(cfg, aligned)
    privacy = keyed_privacy(cfg.privacy, aligned is not None and aligned.keyed)
    return wrap_strategy(strategy, privacy, cfg.out), num_clients


def build_private_client(cfg: PrivateRunSettings, node_config: Any) -> tuple[Any, int]:
    r"""The node's KGE client in the client side of ``cfg.privacy``
    (:func:`wrap_client`); a node holding only its own client folder (node
    config ``data-dir``) always speaks keyed tokens of its names."""
    client, cid = build_kge_client(cfg, node_config)
    data = node_data(cfg.data, node_config)
    privacy = keyed_privacy(cfg.privacy, data.own_folder)
    if privacy is None:
        return client, cid
    rounds, seed = cfg.num_rounds, cfg.settings.seed
    return wrap_client(client, privacy, data, node_config, rounds, seed), cid


def wrap_transport(transport: Any, strategy: Any) -> Any:
    r"""The loop's transport: :class:`~fedgraph.privacy.secagg_transport.SecAggTransport`
    (setup, masked input, unmask in each round) when the run recovers
    dropouts (``privacy.secagg-threshold``), else ``transport``."""
    from fedgraph.privacy.secagg import SecAggStrategy
    from fedgraph.privacy.secagg_transport import SecAggTransport
    from fedgraph.privacy.wrap import find_wrapper

    secagg = find_wrapper(strategy, SecAggStrategy)
    if secagg is None or not secagg.threshold:
        return transport
    return SecAggTransport(transport, secagg)


def dp_report(
    privacy: PrivacySettings, history: list[dict[str, Any]], rounds: int
) -> dict[str, Any]:
    r"""Each client's :math:`(\varepsilon, \delta)` after the uploads the
    server received from it (the rounds it trained in, failures left out),
    in the format of ``fedgraph train``'s ``privacy.dp`` (the noise was
    calibrated for ``rounds`` uploads)."""
    from fedgraph.privacy.accountant import gaussian_epsilon, rdp_epsilon

    sigma = noise_multiplier(privacy.dp_epsilon, privacy.dp_delta, int(rounds))
    uploads: dict[int, int] = {}
    for h in history:
        failed = {e["client"] for e in h.get("events", [])}
        for c in h.get("clients", []):
            uploads[int(c)] = uploads.get(int(c), 0) + (c not in failed)
    out = {}
    for c, n in sorted(uploads.items()):
        row = {"uploads": n, "noise_multiplier": sigma, "clip": privacy.dp_clip}
        row["epsilon"] = gaussian_epsilon(sigma, n, privacy.dp_delta)
        row["delta"] = privacy.dp_delta
        rdp = rdp_epsilon(sigma, n, privacy.dp_delta)
        if rdp is not None:
            row["epsilon_rdp"] = rdp
        out[str(c)] = row
    return out


def run_private_server(
    grid: Any, run_config: Mapping[str, Any], **kwargs: Any
) -> tuple[Any, Any]:
    r""":func:`~fedgraph.runtime.flower.run_server` with the private apps'
    strategy, settings, alignment step and transport; with DP, adds the
    ``privacy`` section of ``fedgraph train`` to ``results.json``."""
    from fedgraph.privacy.setup import add_privacy_report
    from fedgraph.runtime.flower import run_server

    strategy, res = run_server(
        grid,
        run_config,
        build_strategy=build_private_strategy,
        parse=PrivateRunSettings.from_run_config,
        alignment=PRIVATE_ALIGNMENT,
        wrap_transport=wrap_transport,
        **kwargs,
    )
    cfg = PrivateRunSettings.from_run_config(run_config)
    results = Path(cfg.out) / "results.json" if cfg.out else None
    if cfg.privacy is not None and results is not None and results.exists():
        report: dict[str, Any] = {"settings": cfg.privacy.to_dict()}
        if cfg.privacy.dp_epsilon > 0:
            report["dp"] = dp_report(cfg.privacy, res.history, cfg.num_rounds)
        add_privacy_report(results, report)
    return strategy, res


def _server_app() -> Any:
    from flwr.app import Context
    from flwr.serverapp import Grid, ServerApp

    app = ServerApp()

    @app.main()
    def main(grid: Grid, context: Context) -> None:
        run_private_server(grid, context.run_config)

    return app


#: ``serverapp = "fedgraph.privacy.flower:server_app"``.
server_app = _server_app()
#: ``clientapp = "fedgraph.privacy.flower:client_app"`` (a process per message).
client_app = make_client_app(
    build_private_client, PrivateRunSettings.from_run_config, PRIVATE_ALIGNMENT
)
#: ``clientapp = "fedgraph.privacy.flower:node_app"`` (process-lived worker).
node_app = WorkerClientApp("fedgraph.privacy.flower:client_app")

__all__ = [
    "PRIVACY_PREFIX",
    "PRIVACY_KEYS",
    "SECRET_KEY",
    "PrivateRunSettings",
    "parse_privacy",
    "privacy_defaults",
    "node_secret",
    "wrap_strategy",
    "wrap_client",
    "build_private_strategy",
    "build_private_client",
    "keyed_privacy",
    "wrap_transport",
    "run_private_server",
    "dp_report",
    "noise_multiplier",
    "PrivateAlignment",
    "PRIVATE_ALIGNMENT",
    "describe_private_node",
    "server_app",
    "client_app",
    "node_app",
]
