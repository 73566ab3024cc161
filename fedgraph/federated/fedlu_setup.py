r"""Builders of the FedLU, FedEP and FedS runs for the ``kge_algorithms``
registry of :mod:`fedgraph.federated.kge_setup` (``fedgraph train
--algorithm fedlu|fedep|feds``).

Algorithm settings come from :attr:`KGESettings.extra`: ``mu_distill``
(FedLU, default 2), ``distill_schedule`` (``always`` or ``gated``),
``distill_wait`` (20) and ``distill_tol`` (0.001) (FedLU's distillation
schedule, :class:`~fedgraph.federated.fedlu.FedLU`), ``p`` and
``sync_interval`` (FedS, defaults 0.4 and 4).
"""

from __future__ import annotations

from fedgraph.federated.base import Client, Strategy
from fedgraph.federated.fedlu import FedLU, FedLUClient
from fedgraph.federated.feds import FedEP, FedS
from fedgraph.federated.feds_client import FedSClient
from fedgraph.federated.kge_setup import (
    KGESettings,
    build_clients,
    entity_geometry,
)
from fedgraph.partition.shard import FederatedKG


def build_fedlu(fed: FederatedKG, s: KGESettings) -> tuple[Strategy, dict[int, Client]]:
    r"""FedLU (§4.1) with ``extra["mu_distill"]`` (default 2) and its
    distillation schedule (``distill_schedule``, ``distill_wait``,
    ``distill_tol``)."""
    width, rho = entity_geometry(s)
    mu = float(s.extra.get("mu_distill", 2.0))
    strategy = FedLU(
        fed.num_entities,
        width,
        init_range=rho,
        mu_distill=mu,
        seed=s.seed,
        distill_schedule=str(s.extra.get("distill_schedule", "always")),
        distill_wait=int(s.extra.get("distill_wait", 20)),
        distill_tol=float(s.extra.get("distill_tol", 1e-3)),
    )
    return strategy, build_clients(fed, s, FedLUClient, mu_distill=mu)


def build_fedep(fed: FederatedKG, s: KGESettings) -> tuple[Strategy, dict[int, Client]]:
    r"""FedEP (FedS §IV-B)."""
    width, rho = entity_geometry(s)
    return FedEP(fed.num_entities, width, init_range=rho, seed=s.seed), build_clients(
        fed, s, FedSClient
    )


def build_feds(fed: FederatedKG, s: KGESettings) -> tuple[Strategy, dict[int, Client]]:
    r"""FedS (§III) with ``extra["p"]`` (0.4) and ``extra["sync_interval"]`` (4)."""
    width, rho = entity_geometry(s)
    strategy = FedS(
        fed.num_entities,
        width,
        init_range=rho,
        seed=s.seed,
        p=float(s.extra.get("p", 0.4)),
        sync_interval=int(s.extra.get("sync_interval", 4)),
    )
    return strategy, build_clients(fed, s, FedSClient)


builders = {"fedlu": build_fedlu, "fedep": build_fedep, "feds": build_feds}

__all__ = ["build_fedlu", "build_fedep", "build_feds", "builders"]
