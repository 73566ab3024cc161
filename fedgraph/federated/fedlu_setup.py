r"""Builders of the FedLU, FedEP and FedS runs for the ``kge_algorithms``
registry of :mod:`fedgraph.federated.kge_setup` (``fedgraph train
--algorithm fedlu|fedep|feds``).

Algorithm settings come from :attr:`KGESettings.extra`: ``mu_distill``
(FedLU, default 2), ``distill_schedule`` (``always`` or ``gated``),
``distill_wait`` (20) and ``distill_tol`` (0.001) (FedLU's distillation
schedule, :class:`~fedgraph.federated.fedlu.FedLU`), ``local_init``
(``global`` or ``own``: where the clients' local tables start),
``global_relations`` (``shared`` or ``own``: the global model's relation
table, :data:`~fedgraph.federated.fedlu.GLOBAL_RELATIONS`), ``p`` and
``sync_interval`` (FedS, defaults 0.4 and 4).
"""

from __future__ import annotations

from typing import Any

from fedgraph.federated.base import Client, Strategy
from fedgraph.federated.fedlu import FedLU, FedLUClient
from fedgraph.federated.feds import FedEP, FedS
from fedgraph.federated.feds_client import FedSClient
from fedgraph.federated.kge_setup import (
    KGESettings,
    algorithm_settings,
    build_clients,
    entity_geometry,
)
from fedgraph.partition.shard import FederatedKG


def build_fedlu(fed: FederatedKG, s: KGESettings) -> tuple[Strategy, dict[int, Client]]:
    r"""FedLU (§4.1) with ``extra["mu_distill"]`` (default 2) and its
    distillation schedule (``distill_schedule``, ``distill_wait``,
    ``distill_tol``)."""
    width, rho = entity_geometry(s)
    x = algorithm_settings("fedlu", s.extra)
    strategy = FedLU(
        fed.num_entities,
        width,
        init_range=rho,
        mu_distill=x["mu_distill"],
        seed=s.seed,
        distill_schedule=x["distill_schedule"],
        distill_wait=x["distill_wait"],
        distill_tol=x["distill_tol"],
        local_init=x["local_init"],
        global_relations=x["global_relations"],
    )
    return strategy, build_clients(
        fed,
        s,
        FedLUClient,
        mu_distill=x["mu_distill"],
        local_init=x["local_init"],
        global_relations=x["global_relations"],
    )


def build_fedep(fed: FederatedKG, s: KGESettings) -> tuple[Strategy, dict[int, Client]]:
    r"""FedEP (FedS §IV-B)."""
    width, rho = entity_geometry(s)
    return FedEP(fed.num_entities, width, init_range=rho, seed=s.seed), build_clients(
        fed, s, FedSClient
    )


def build_feds(fed: FederatedKG, s: KGESettings) -> tuple[Strategy, dict[int, Client]]:
    r"""FedS (§III) with ``extra["p"]`` (0.4) and ``extra["sync_interval"]`` (4)."""
    width, rho = entity_geometry(s)
    x = algorithm_settings("feds", s.extra)
    strategy = FedS(
        fed.num_entities,
        width,
        init_range=rho,
        seed=s.seed,
        p=x["p"],
        sync_interval=x["sync_interval"],
    )
    return strategy, build_clients(fed, s, FedSClient)


builders = {"fedlu": build_fedlu, "fedep": build_fedep, "feds": build_feds}

#: The ``KGESettings.extra`` settings of each builder, with their defaults.
defaults: dict[str, dict[str, Any]] = {
    "fedlu": {
        "mu_distill": 2.0,
        "distill_schedule": "always",
        "distill_wait": 20,
        "distill_tol": 1e-3,
        "local_init": "global",
        "global_relations": "shared",
    },
    "fedep": {},
    "feds": {"p": 0.4, "sync_interval": 4},
}

__all__ = ["build_fedlu", "build_fedep", "build_feds", "builders", "defaults"]
