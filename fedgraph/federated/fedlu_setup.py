r"""Builders of the FedLU, FedEP and FedS runs for the ``kge_algorithms``
registry of :mod:`fedgraph.federated.kge_setup` (``fedgraph train
--algorithm fedlu|fedep|feds``).

Algorithm settings come from :attr:`KGESettings.extra`: ``mu_distill``
(FedLU, default 2), ``p`` and ``sync_interval`` (FedS, defaults 0.4 and 4).
"""

from __future__ import annotations

from typing import Any

import torch

from fedgraph.federated.base import Client, Strategy
from fedgraph.federated.fedlu import FedLU, FedLUClient
from fedgraph.federated.feds import FedEP, FedS
from fedgraph.federated.feds_client import FedSClient
from fedgraph.federated.kge_setup import KGESettings
from fedgraph.models.kge import resolve_model
from fedgraph.partition.shard import FederatedKG


def _clients(
    fed: FederatedKG, s: KGESettings, cls: type, **kw: Any
) -> dict[int, Client]:
    out: dict[int, Client] = {}
    for shard in fed.shards:
        torch.manual_seed(s.seed * 1009 + shard.client_id)  # as kge_setup.build_clients
        model = resolve_model(
            s.model, shard.num_entities, shard.num_relations, s.dim, gamma=s.gamma
        )
        out[shard.client_id] = cls(
            shard,
            model,
            loss=s.loss,
            lr=s.lr,
            batch_size=s.batch_size,
            num_negatives=s.num_negatives,
            local_epochs=s.local_epochs,
            shared_negatives=s.shared_negatives,
            seed=s.seed,
            **kw,
        )
    return out


def _geometry(s: KGESettings) -> tuple[int, float]:
    probe = resolve_model(s.model, 1, 1, s.dim, gamma=s.gamma)
    return probe.entity_embedding.weight.size(1), probe.embedding_range


def build_fedlu(fed: FederatedKG, s: KGESettings) -> tuple[Strategy, dict[int, Client]]:
    r"""FedLU (§4.1) with ``extra["mu_distill"]`` (default 2)."""
    width, rho = _geometry(s)
    mu = float(s.extra.get("mu_distill", 2.0))
    strategy = FedLU(
        fed.num_entities, width, init_range=rho, mu_distill=mu, seed=s.seed
    )
    return strategy, _clients(fed, s, FedLUClient, mu_distill=mu)


def build_fedep(fed: FederatedKG, s: KGESettings) -> tuple[Strategy, dict[int, Client]]:
    r"""FedEP (FedS §IV-B)."""
    width, rho = _geometry(s)
    return FedEP(fed.num_entities, width, init_range=rho, seed=s.seed), _clients(
        fed, s, FedSClient
    )


def build_feds(fed: FederatedKG, s: KGESettings) -> tuple[Strategy, dict[int, Client]]:
    r"""FedS (§III) with ``extra["p"]`` (0.4) and ``extra["sync_interval"]`` (4)."""
    width, rho = _geometry(s)
    strategy = FedS(
        fed.num_entities,
        width,
        init_range=rho,
        seed=s.seed,
        p=float(s.extra.get("p", 0.4)),
        sync_interval=int(s.extra.get("sync_interval", 4)),
    )
    return strategy, _clients(fed, s, FedSClient)


builders = {"fedlu": build_fedlu, "fedep": build_fedep, "feds": build_feds}

__all__ = ["build_fedlu", "build_fedep", "build_feds", "builders"]
