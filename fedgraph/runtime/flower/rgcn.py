r"""Fed-RGCN on Flower: every R-GCN method of the algorithm registry (SP,
FedAvg, FedProx, FedAlign and their -L variants of FedAlign's Table 4, …) as
a ``ServerApp``/``ClientApp`` pair.

The apps drive the simulation's objects: the strategy of the method's
registry builder (:class:`~fedgraph.federated.rgcn.setup.RGCNBuilder`) and
one :class:`~fedgraph.federated.rgcn.client.RGCNClient` per SuperNode, built
by the same builder from the node's shard
of a saved RDF partition (``fedgraph partition aifb --strategy rdf-type
--clients 10 --out DIR``), under FedAlign's protocol
(:func:`~fedgraph.runtime.rgcn_runner.loop_kwargs`: a fixed number of
rounds, every client's test accuracy after each). A run gives the numbers of
:func:`~fedgraph.runtime.rgcn_runner.run_fed_rgcn` on the same partition:
the same per-round accuracies, bases and communication totals.

``[tool.flwr.app.components]``::

    serverapp = "fedgraph.runtime.flower.rgcn:server_app"
    clientapp = "fedgraph.runtime.flower.rgcn:client_app"

The initial global bases come from client 0: its node sends its freshly
seeded bases when it registers (counted as an upload of round 0, as in the
simulation), so the server needs no client's data; the number of clients comes from the
alignment step (:mod:`~fedgraph.runtime.flower.alignment`). The server
never opens ``data``.

A node may instead hold only its own organisation's client folder
(``DIR/clientK`` of the partition, or a copy; node config ``data-dir``):
its nodes and its own predicates, no global id and no global predicate list
(:func:`~fedgraph.partition.rdf_shard.load_rdf_client_folder`). Its R-GCN
then spans its own predicates: only the bases are shared, and no predicate
indexes them, so the nodes need no common relation order and exchange no
name (the class order, which indexes the second layer's bases, is the
task's label set every folder holds). Such a run equals the simulation whose
clients span their own predicates (``build_clients(...,
own_relations=True)``); every node of a run holds its own folder, or none.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fedgraph.federated.algorithms import algorithms, get, parse_assignments
from fedgraph.federated.base import Client, Strategy
from fedgraph.federated.rgcn.setup import RGCNSettings, build_clients, loop_kwargs
from fedgraph.partition.rdf_shard import FederatedRDF
from fedgraph.runtime.flower.alignment import PARTITION_ID, AlignedRun, Alignment
from fedgraph.runtime.flower.client_app import make_client_app
from fedgraph.runtime.flower.config import (
    check_failure_settings,
    field_keys,
    partition_id,
    read_flat_run_config,
)
from fedgraph.runtime.flower.federation import check_partition_id, own_data_dir
from fedgraph.runtime.flower.server_app import make_server_app

#: The :class:`RGCNRunSettings` fields with a run-config key of their own:
#: FedAlign's :math:`\lambda` and the penalty's options under the names its
#: clients' config uses (:mod:`fedgraph.federated.rgcn.terms`). Every other
#: field's key is its name kebab-cased
#: (:func:`~fedgraph.runtime.flower.config.field_keys`).
KEY_ALIASES = {
    "lam": "lambda",
    "one_sided": "lipschitz-one-sided",
    "clip": "lipschitz-clip",
}


@dataclass
class RGCNRunSettings:
    r"""A Fed-RGCN run as the Flower apps see it (defaults: FedAlign's
    settings, as :func:`~fedgraph.runtime.rgcn_runner.run_fed_rgcn`).

    Args:
        data (str): a saved RDF partition folder (``FederatedRDF.save``,
            ``fedgraph partition … --strategy rdf-type``), readable by every
            SuperNode without ``data-dir`` in its node config; the server
            never opens it.
        algorithm (str): an R-GCN method of the algorithm registry
            (``fedgraph algorithms``), stored under its registry name.
        num_rounds (int): rounds. (default: :obj:`20`)
        local_epochs (int): full-graph SGD steps per round. (default: :obj:`5`)
        lr (float): SGD learning rate. (default: :obj:`0.1`)
        num_bases (int): bases per layer. (default: :obj:`100`)
        hidden_channels (int): hidden size. (default: :obj:`16`)
        mu (float): FedProx / FedAlign weight. (default: :obj:`10.0`)
        lam (float): -L penalty weight (key ``lambda``). (default: :obj:`10.0`)
        one_sided (bool): one-sided penalty. (default: :obj:`False`)
        clip (float): 2-norm cap of the penalty's gradient; ``0`` leaves it
            unclipped. (default: :obj:`1.0`)
        set (str): the method's other settings as ``"KEY=VALUE KEY=VALUE"``
            (as ``fedgraph train --set``; e.g. ``"momentum=0.5"``).
        seed (int): model seed. (default: :obj:`0`)
        out (str): folder for ``results.json``/``server.pt`` (empty: none).
        threads (int): ``torch.set_num_threads`` (``0``: leave it).
        reply_timeout (float): seconds to wait for replies (``0``: no limit).
        connect_timeout (float): seconds to wait for the SuperNodes.
            (default: :obj:`120`)
        num_clients (int): SuperNodes to wait for (``0``: as many as the
            nodes report in the alignment step). (default: :obj:`0`)
        min_available_nodes, min_fit_nodes, accept_failures, client_mods:
            failure handling and mods, as in
            :class:`~fedgraph.runtime.flower.FlowerRunSettings`.
        wait_for_failed, pull_backoff: waiting for a failed client and
            Flower's object-pull retry, as in
            :class:`~fedgraph.runtime.flower.FlowerRunSettings`.
        compact_messages (bool): every message in the packed layout (3
            Flower objects), as in
            :class:`~fedgraph.runtime.flower.FlowerRunSettings`; same values.
    """

    data: str
    algorithm: str
    num_rounds: int = 20
    local_epochs: int = 5
    lr: float = 0.1
    num_bases: int = 100
    hidden_channels: int = 16
    mu: float = 10.0
    lam: float = 10.0
    one_sided: bool = False
    clip: float = 1.0
    set: str = ""
    seed: int = 0
    out: str = ""
    threads: int = 0
    reply_timeout: float = 0.0
    connect_timeout: float = 120.0
    num_clients: int = 0
    min_available_nodes: int = 0
    min_fit_nodes: int = 0
    accept_failures: bool = False
    wait_for_failed: float = 0.0
    pull_backoff: float = 0.0
    compact_messages: bool = False
    client_mods: str = ""

    @classmethod
    def from_run_config(cls, run_config: Mapping[str, Any]) -> RGCNRunSettings:
        r"""Parses a Flower ``context.run_config``; unknown keys, wrong types,
        an unknown ``algorithm`` or a bad value raise a :class:`ValueError`
        that names the key."""
        values = read_flat_run_config(cls, run_config, KEYS, "Fed-RGCN")
        try:  # the registry's R-GCN family, names normalised there
            values["algorithm"] = get(values["algorithm"], "rgcn").name
        except ValueError:
            raise ValueError(
                f"Run-config key `algorithm`: could not resolve "
                f"'{run_config['algorithm']}' among choices "
                f"{list(algorithms('rgcn'))}"
            ) from None
        out = cls(**values)
        out.algorithm_settings()  # checked before any SuperNode is asked
        for key, name in (
            ("num-rounds", "num_rounds"),
            ("local-epochs", "local_epochs"),
            ("num-bases", "num_bases"),
            ("hidden-channels", "hidden_channels"),
            ("lr", "lr"),
        ):
            if getattr(out, name) <= 0:
                raise ValueError(
                    f"Run-config key `{key}` must be positive (got {getattr(out, name)})"
                )
        for key, name in (
            ("threads", "threads"),
            ("lipschitz-clip", "clip"),
            ("num-clients", "num_clients"),
        ):
            if getattr(out, name) < 0:
                raise ValueError(
                    f"Run-config key `{key}` must be non-negative (got {getattr(out, name)})"
                )
        check_failure_settings(out)
        return out

    def algorithm_settings(self) -> Any:
        r"""The method's settings: ``mu``, ``lambda``, ``lipschitz-one-sided``
        and ``lipschitz-clip`` where it declares them, then ``set``; a key it
        does not declare, or a bad value, raises a :class:`ValueError`."""
        alg = get(self.algorithm, "rgcn")
        given = {
            "mu": self.mu,
            "lam": self.lam,
            "one_sided": self.one_sided,
            "clip": self.clip,
        }
        own = {k: v for k, v in given.items() if k in alg.defaults()}
        own.update(parse_assignments(self.set.split(), "Run-config key `set`"))
        return alg.parse(own)

    def common(self) -> RGCNSettings:
        r"""The settings every R-GCN method shares."""
        return RGCNSettings(
            self.hidden_channels, self.num_bases, self.lr, self.local_epochs, self.seed
        )

    def loop_kwargs(self) -> dict[str, Any]:
        r"""FedAlign's protocol (:func:`~fedgraph.runtime.rgcn_runner.loop_kwargs`)."""
        return loop_kwargs(self.num_rounds, self.seed)

    def client_kwargs(self) -> dict[str, Any]:
        r"""The :func:`~fedgraph.federated.rgcn.setup.build_clients` options."""
        return {
            "hidden_channels": self.hidden_channels,
            "num_bases": self.num_bases,
            "lr": self.lr,
            "local_epochs": self.local_epochs,
            "seed": self.seed,
        }

    def to_dict(self) -> dict[str, Any]:
        r"""A JSON-able copy (``results.json`` ``settings``)."""
        return dataclasses.asdict(self)


#: run-config key → :class:`RGCNRunSettings` field: every field.
KEYS = field_keys(RGCNRunSettings, KEY_ALIASES)


@functools.lru_cache(maxsize=2)
def load_rdf_federation(data: str) -> Any:
    r"""The :class:`~fedgraph.partition.rdf_shard.FederatedRDF` saved in the
    folder ``data`` (read once per process)."""
    if not Path(data).is_dir():
        raise ValueError(
            f"Run-config key `data` must be a saved RDF partition folder (got "
            f"{data!r}, not a folder); make one with `fedgraph partition aifb "
            "--strategy rdf-type --clients 10 --out DIR`."
        )
    return FederatedRDF.load(data)


@functools.lru_cache(maxsize=2)
def load_rdf_client(path: str) -> Any:
    r"""The node's own RDF client folder, read alone
    (:func:`~fedgraph.partition.rdf_shard.load_rdf_client_folder`), with its
    ``META.json`` (read once per process)."""
    from fedgraph.partition.io import read_client_meta
    from fedgraph.partition.rdf_shard import load_rdf_client_folder

    return load_rdf_client_folder(path), read_client_meta(path)


def rdf_node(cfg: RGCNRunSettings, node_config: Any) -> tuple[Any, int, bool]:
    r"""The node's shard, the number of clients and whether the node holds
    only its own client folder (node config ``data-dir``: the run config's
    ``data`` is then never opened; ``partition-id``, when given, must be the
    folder's client), else its shard ``partition-id`` of ``data``."""
    own = own_data_dir(node_config)
    if own is None:
        fed = load_rdf_federation(cfg.data)
        return (
            fed.shards[partition_id(node_config, fed.num_clients)],
            fed.num_clients,
            False,
        )
    shard, meta = load_rdf_client(own)
    num_clients = int(meta["num_clients"])
    check_partition_id(node_config, own, shard.client_id, num_clients)
    return shard, num_clients, True


def describe_rgcn_node(cfg: RGCNRunSettings, node_config: Any) -> dict[str, Any]:
    r"""A Fed-RGCN node's alignment reply: its ``partition-id``, the
    number of clients of its partition (the server needs no other size:
    the initial bases come from client 0's registration) and whether it
    holds only its own folder (``own-folder``, 0 or 1: all nodes must agree,
    as their models span their own predicates or the global ones)."""
    shard, num_clients, own = rdf_node(cfg, node_config)
    return {
        PARTITION_ID: shard.client_id,
        "num-clients": int(num_clients),
        "own-folder": int(own),
    }


#: The Fed-RGCN apps' alignment step.
RGCN_ALIGNMENT = Alignment(describe_rgcn_node, ("own-folder",))


def build_rgcn_strategy(
    cfg: RGCNRunSettings, aligned: AlignedRun | None = None
) -> tuple[Strategy, int]:
    r"""The strategy of ``cfg.algorithm``, which takes its initial bases from
    client 0's registration (as
    :func:`~fedgraph.runtime.rgcn_runner.run_fed_rgcn`), and the number of
    clients (from the alignment step, else ``num-clients``). The server
    opens no data."""
    num_clients = aligned.num_clients if aligned is not None else cfg.num_clients
    if num_clients < 1:
        raise ValueError(
            "The Fed-RGCN server learns the number of clients in the alignment "
            "step; without one, set run-config key `num-clients`"
        )
    builder = get(cfg.algorithm, "rgcn").build
    return builder.strategy(cfg.common(), cfg.algorithm_settings()), num_clients


def build_rgcn_client(cfg: RGCNRunSettings, node_config: Any) -> tuple[Client, int]:
    r"""This node's :class:`~fedgraph.federated.rgcn.client.RGCNClient`: the
    shard ``partition-id`` of ``data``, or the node's own client folder
    (``data-dir``), whose model spans only its own predicates
    (``build_clients(..., own_relations=True)``: only the bases, which no
    predicate indexes, are shared, so the nodes need no common relation
    order)."""
    shard, _, own = rdf_node(cfg, node_config)
    cid = shard.client_id
    builder = get(cfg.algorithm, "rgcn").build
    if not own:
        fed = load_rdf_federation(cfg.data)
        return builder.clients(fed, cfg.common(), client_ids=[cid])[cid], cid
    g = shard.graph
    lone = FederatedRDF([shard], g.num_nodes, g.num_relations, g.num_classes)
    seed = 0 if builder.shares_bases and cid == 0 else None
    clients = build_clients(
        lone, **cfg.client_kwargs(), client_ids=[0], seed_client=seed,
        own_relations=True,
    )  # fmt: skip
    return clients[0], cid


#: ``[tool.flwr.app.components] serverapp = "fedgraph.runtime.flower.rgcn:server_app"``.
server_app = make_server_app(
    build_rgcn_strategy, RGCNRunSettings.from_run_config, RGCN_ALIGNMENT
)

#: ``[tool.flwr.app.components] clientapp = "fedgraph.runtime.flower.rgcn:client_app"``.
client_app = make_client_app(
    build_rgcn_client, RGCNRunSettings.from_run_config, RGCN_ALIGNMENT
)

__all__ = [
    "RGCNRunSettings",
    "KEYS",
    "KEY_ALIASES",
    "build_rgcn_strategy",
    "build_rgcn_client",
    "describe_rgcn_node",
    "RGCN_ALIGNMENT",
    "load_rdf_federation",
    "load_rdf_client",
    "rdf_node",
    "server_app",
    "client_app",
]
