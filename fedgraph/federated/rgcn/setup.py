r"""Builders of the R-GCN family: FedAlign's methods (Table 4) as a
strategy and one :class:`~fedgraph.federated.rgcn.client.RGCNClient` per
shard, and FedAlign's evaluation protocol for the round loop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from fedgraph.data.rdf_graph import RDFGraph  # noqa: F401
from fedgraph.federated.base import Strategy
from fedgraph.federated.fedavg import FedAvg
from fedgraph.federated.fedprox import FedProx
from fedgraph.federated.rgcn.client import LOCAL_EPOCHS, RGCNClient
from fedgraph.federated.rgcn.fedalign import FedAlign, SyncOnEvaluate
from fedgraph.federated.rgcn.terms import (
    LIPSCHITZ_CLIP,
    LIPSCHITZ_LAMBDA,
    LIPSCHITZ_ONE_SIDED,
)
from fedgraph.federated.separated import Separated
from fedgraph.partition.rdf_shard import FederatedRDF

#: Method names of FedAlign's Table 4.
METHODS = ("sp", "fedavg", "fedprox", "fedalign", "fedavg-l", "fedprox-l", "fedalign-l")


def build_strategy(
    method: str,
    initial_arrays: dict[str, torch.Tensor] | None = None,
    *,
    mu: float = 10.0,
    lam: float = 10.0,
    local_epochs: int = 5,
    one_sided: bool = False,
    clip: float | None = 1.0,
) -> Strategy:
    r"""The strategy of ``method`` (one of :data:`METHODS`): SP, FedAvg,
    FedProx (:math:`\mu`), FedAlign (:math:`\mu`), and with ``-l`` the
    gradient penalty :math:`\lambda` of Eq. 11 on top (``one_sided`` for
    the variant of :func:`~fedgraph.federated.rgcn.lipschitz.gradient_penalty`),
    its own gradient clipped to 2-norm ``clip`` (``None``: unclipped, as
    printed, which diverges to NaN on MUTAG and AIFB at the published
    :math:`\lambda` and lr). Federated ones evaluate with the
    global bases synchronised in (:class:`SyncOnEvaluate`). Without
    ``initial_arrays`` they take the initial bases from the client that
    registers them (:func:`build_clients`' ``seed_client``)."""
    key = method.lower()
    if key not in METHODS:
        raise ValueError(f"Unknown `method` '{method}' (choices: {list(METHODS)})")
    base, lipschitz = key.removesuffix("-l"), key.endswith("-l")
    config: dict[str, Any] = {LOCAL_EPOCHS: local_epochs}
    if lipschitz:
        config[LIPSCHITZ_LAMBDA] = lam
        config[LIPSCHITZ_ONE_SIDED] = one_sided
        if clip is not None:
            config[LIPSCHITZ_CLIP] = clip
    if base == "sp":
        return Separated(config=config)
    if base == "fedavg":
        return SyncOnEvaluate(FedAvg(initial_arrays, config=config))
    if base == "fedprox":
        return SyncOnEvaluate(FedProx(initial_arrays, proximal_mu=mu, config=config))
    return SyncOnEvaluate(FedAlign(initial_arrays, mu=mu, config=config))


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
) -> dict[int, RGCNClient]:
    r"""One :class:`RGCNClient` per shard of ``fed`` (or per id in
    ``client_ids``), each model seeded with ``seed``: a client built alone
    (a Flower node) equals the one built with all the others. Client
    ``seed_client`` sends its initial bases when it registers (the federated
    methods' initial global bases; :obj:`None`: no client does, as SP)."""
    ids = range(fed.num_clients) if client_ids is None else client_ids
    return {
        c: RGCNClient(
            fed.shards[c],
            num_relations=fed.num_relations,
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


def initial_bases_client(method: str) -> int | None:
    r"""The client whose initial bases seed ``method``'s global bases:
    client 0, or :obj:`None` for SP (no global bases)."""
    return None if method.lower() == "sp" else 0


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


def build_rgcn_federation(
    method: str, fed: FederatedRDF, common: RGCNSettings, x: Any
) -> tuple[Strategy, dict[int, RGCNClient]]:
    r"""The strategy and clients of ``method`` on ``fed`` (the registry's
    R-GCN builder); ``x`` holds the method's own settings (``mu``, ``lam``,
    ``one_sided``, ``clip``; ``clip = 0``: unclipped)."""
    clip = getattr(x, "clip", 1.0)
    clients = build_clients(
        fed,
        hidden_channels=common.hidden_channels,
        num_bases=common.num_bases,
        lr=common.lr,
        local_epochs=common.local_epochs,
        seed=common.seed,
        seed_client=initial_bases_client(method),
    )
    strategy = build_strategy(  # initial bases: the seed client's registration
        method,
        mu=getattr(x, "mu", 10.0),
        lam=getattr(x, "lam", 10.0),
        local_epochs=common.local_epochs,
        one_sided=getattr(x, "one_sided", False),
        clip=None if clip == 0 else clip,
    )
    return strategy, clients


__all__ = [
    "METHODS",
    "RGCNSettings",
    "build_rgcn_federation",
    "build_strategy",
    "build_clients",
    "initial_bases_client",
    "loop_kwargs",
]
