r"""Builders of the R-GCN family: a registered method's strategy
(:class:`RGCNBuilder`, each method's own module of
:mod:`fedgraph.federated.rgcn` says how it makes its strategy) and one
:class:`~fedgraph.federated.rgcn.client.RGCNClient` per shard, and
FedAlign's evaluation protocol for the round loop."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from fedgraph.data.rdf_graph import RDFGraph  # noqa: F401
from fedgraph.federated.base import Strategy
from fedgraph.federated.rgcn.client import LOCAL_EPOCHS, RGCNClient
from fedgraph.federated.rgcn.terms import (
    LIPSCHITZ_CLIP,
    LIPSCHITZ_LAMBDA,
    LIPSCHITZ_ONE_SIDED,
)
from fedgraph.partition.rdf_shard import FederatedRDF, own_shard

#: ``make(initial_arrays, config, settings) -> Strategy``: how a method makes
#: its strategy from the initial global bases (:obj:`None`: the seed
#: client's registration), the clients' training config and its settings.
StrategyMaker = Callable[
    [Mapping[str, torch.Tensor] | None, dict[str, Any], Any], Strategy
]


def train_config(local_epochs: int, x: Any) -> dict[str, Any]:
    r"""The clients' training config: ``local_epochs``, and the -L gradient
    penalty of Eq. 11 when the method's settings ``x`` declare its weight
    :math:`\lambda` (``lam``, with ``one_sided`` for the variant of
    :func:`~fedgraph.federated.rgcn.lipschitz.gradient_penalty` and its own
    gradient clipped to 2-norm ``clip``; ``clip = 0``: unclipped, as
    printed, which diverges to NaN on MUTAG and AIFB at the published
    :math:`\lambda` and lr)."""
    config: dict[str, Any] = {LOCAL_EPOCHS: local_epochs}
    if hasattr(x, "lam"):
        config[LIPSCHITZ_LAMBDA] = x.lam
        config[LIPSCHITZ_ONE_SIDED] = x.one_sided
        if x.clip != 0:
            config[LIPSCHITZ_CLIP] = x.clip
    return config


def build_clients(
    fed: FederatedRDF,
    *,
    hidden_channels: int = 16,
    num_bases: int = 100,
    lr: float = 0.1,
    local_epochs: int = 5,
    seed: int = 0,
    client_ids: list[int] | None = None,
    seed_client: int | None = None,
    own_relations: bool = False,
) -> dict[int, RGCNClient]:
    r"""One :class:`RGCNClient` per shard of ``fed`` (or per id in
    ``client_ids``), each model seeded with ``seed``: a client built alone
    (a Flower node) equals the one built with all the others. Client
    ``seed_client`` sends its initial bases when it registers (the federated
    methods' initial global bases; :obj:`None`: no client does, as SP).
    With ``own_relations`` each model spans only its shard's own predicates
    (:func:`~fedgraph.partition.rdf_shard.own_shard`), as a node holding
    only its own client folder builds it: no global relation id or count."""
    ids = range(fed.num_clients) if client_ids is None else client_ids
    shards = {c: fed.shards[c] for c in ids}
    if own_relations:
        shards = {c: own_shard(s) for c, s in shards.items()}
    return {
        c: RGCNClient(
            shards[c],
            num_relations=(
                shards[c].graph.num_relations if own_relations else fed.num_relations
            ),
            num_classes=fed.num_classes,
            hidden_channels=hidden_channels,
            num_bases=num_bases,
            lr=lr,
            local_epochs=local_epochs,
            seed=seed,
            share_initial=c == seed_client,
        )
        for c in ids
    }


def loop_kwargs(rounds: int, seed: int = 0) -> dict[str, Any]:
    r"""FedAlign's protocol as :func:`~fedgraph.runtime.run_federation`
    arguments: ``rounds`` rounds, every client's test accuracy after each,
    no early stopping and no best-round test pass."""
    return {
        "num_rounds": rounds,
        "eval_every": 1,
        "patience": 0,
        "monitor": "accuracy",
        "eval_split": "test",
        "test": False,
        "seed": seed,
    }


@dataclass
class RGCNSettings:
    r"""The settings every R-GCN method shares (FedAlign's defaults).

    Args:
        hidden_channels (int): R-GCN width. (default: :obj:`16`)
        num_bases (int): shared bases :math:`|V|`. (default: :obj:`100`)
        lr (float): local SGD learning rate. (default: :obj:`0.1`)
        local_epochs (int): local epochs per round. (default: :obj:`5`)
        seed (int): model seed. (default: :obj:`0`)
    """

    hidden_channels: int = 16
    num_bases: int = 100
    lr: float = 0.1
    local_epochs: int = 5
    seed: int = 0


@dataclass(frozen=True)
class RGCNBuilder:
    r"""The registry builder of an R-GCN method
    (:attr:`~fedgraph.federated.algorithms.Algorithm.build`): called with
    ``(fed, common, x)`` it gives the strategy and the clients; the Flower
    apps call :meth:`strategy` (the server) and :meth:`clients` (a node)
    apart.

    Args:
        make (StrategyMaker): makes the method's strategy.
        shares_bases (bool, optional): whether the method has global bases,
            which client 0 seeds with its initial ones when it registers
            (:obj:`False`: separated training). (default: :obj:`True`)
    """

    make: StrategyMaker
    shares_bases: bool = True

    def strategy(
        self,
        common: RGCNSettings,
        x: Any,
        initial_arrays: Mapping[str, torch.Tensor] | None = None,
    ) -> Strategy:
        r"""The method's strategy for the shared settings ``common`` and its
        own ``x`` (initial bases: ``initial_arrays``, else the seed client's
        registration)."""
        return self.make(initial_arrays, train_config(common.local_epochs, x), x)

    def clients(
        self,
        fed: FederatedRDF,
        common: RGCNSettings,
        client_ids: list[int] | None = None,
        own_relations: bool = False,
    ) -> dict[int, RGCNClient]:
        r"""The clients of ``fed`` (or those of ``client_ids``):
        :func:`build_clients` with client 0 seeding the global bases when
        the method shares them (``own_relations``: as there)."""
        return build_clients(
            fed,
            hidden_channels=common.hidden_channels,
            num_bases=common.num_bases,
            lr=common.lr,
            local_epochs=common.local_epochs,
            seed=common.seed,
            client_ids=client_ids,
            seed_client=0 if self.shares_bases else None,
            own_relations=own_relations,
        )

    def __call__(
        self, fed: FederatedRDF, common: RGCNSettings, x: Any
    ) -> tuple[Strategy, dict[int, RGCNClient]]:
        clients = self.clients(fed, common)
        return self.strategy(common, x), clients


__all__ = [
    "RGCNSettings",
    "RGCNBuilder",
    "StrategyMaker",
    "train_config",
    "build_clients",
    "loop_kwargs",
]
