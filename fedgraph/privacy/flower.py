r"""Secure aggregation and private entity alignment in a Flower deployment.

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
  not hold it).

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
from collections.abc import Mapping
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
from fedgraph.runtime.flower.client_app import (
    build_kge_client,
    load_federation,
    make_client_app,
)
from fedgraph.runtime.flower.config import FlowerRunSettings
from fedgraph.runtime.flower.node import WorkerClientApp
from fedgraph.runtime.flower.server_app import build_kge_strategy, make_server_app

#: run-config prefix of the privacy keys.
PRIVACY_PREFIX = "privacy."
#: run-config key (after the prefix) → :class:`PrivacySettings` field.
PRIVACY_KEYS = {
    "secagg": "secagg",
    "secagg-neighbours": "secagg_neighbours",
    "secagg-clip-range": "secagg_clip_range",
    "secagg-levels": "secagg_levels",
    "secagg-threshold": "secagg_threshold",
    "private-alignment": "private_alignment",
}


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
    except ValueError as exc:
        raise ValueError(f"Run-config keys `{PRIVACY_PREFIX}*`: {exc}") from None
    return out if out.active else None


def privacy_defaults() -> dict[str, Any]:
    r"""``privacy.KEY`` → default (what an app's config lists)."""
    base = PrivacySettings()
    return {PRIVACY_PREFIX + k: getattr(base, n) for k, n in PRIVACY_KEYS.items()}


def wrap_strategy(strategy: Any, privacy: PrivacySettings | None) -> Any:
    r"""The server's strategy with ``privacy``'s defences (the server side
    of :func:`~fedgraph.privacy.setup.apply_privacy`; no secret needed)."""
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
    return strategy


def wrap_client(
    client: Any, privacy: PrivacySettings | None, fed: Any, node_config: Any
) -> Any:
    r"""The node's client with ``privacy``'s defences: keyed-hash tokens
    under the node's secret (:func:`node_secret`), SecAgg over the
    federation's shared index (entities; relations for FedR)."""
    if privacy is None:
        return client
    from fedgraph.federated.kge.fede import ENTITY
    from fedgraph.federated.kge.fedr import RELATION, FedRClient
    from fedgraph.privacy.alignment import KeyedHashClient
    from fedgraph.privacy.secagg import SecAggClient

    if privacy.private_alignment:
        client = KeyedHashClient(client, node_secret(node_config), fed.entity_names)
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
        if privacy is not None and base.fusion is not None:
            raise ValueError(
                "Run-config key `fusion.enabled` does not combine with the "
                "`privacy.*` defences (the fusion step evaluates each client's "
                "model outside them)"
            )
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


def build_private_strategy(
    cfg: PrivateRunSettings, aligned: AlignedRun | None = None
) -> tuple[Any, int]:
    r""":func:`~fedgraph.runtime.flower.build_kge_strategy`'s strategy in
    the server side of ``cfg.privacy`` (:func:`wrap_strategy`)."""
    strategy, num_clients = build_kge_strategy(cfg, aligned)
    return wrap_strategy(strategy, cfg.privacy), num_clients


def build_private_client(cfg: PrivateRunSettings, node_config: Any) -> tuple[Any, int]:
    r"""The node's KGE client in the client side of ``cfg.privacy``
    (:func:`wrap_client`)."""
    client, cid = build_kge_client(cfg, node_config)
    if cfg.privacy is None:
        return client, cid
    fed = load_federation(cfg.data)
    return wrap_client(client, cfg.privacy, fed, node_config), cid


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


#: ``serverapp = "fedgraph.privacy.flower:server_app"``.
server_app = make_server_app(
    build_private_strategy,
    PrivateRunSettings.from_run_config,
    PRIVATE_ALIGNMENT,
    wrap_transport=wrap_transport,
)
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
    "wrap_transport",
    "PrivateAlignment",
    "PRIVATE_ALIGNMENT",
    "describe_private_node",
    "server_app",
    "client_app",
    "node_app",
]
