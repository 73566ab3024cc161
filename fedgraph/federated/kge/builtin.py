r"""FedE, FedProx, FedEC, FedLU, FedEP and FedS in the algorithm registry."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from fedgraph.data.shard import FederatedKG
from fedgraph.federated.algorithms import Algorithm, setting
from fedgraph.federated.base import Client, Strategy
from fedgraph.federated.fedprox import PROXIMAL_REDUCTIONS
from fedgraph.federated.kge.fede import FedE
from fedgraph.federated.kge.fedec import FedEC
from fedgraph.federated.kge.fedlu import (
    GLOBAL_RELATIONS,
    LOCAL_INITS,
    SCHEDULES,
    FedLU,
    FedLUClient,
)
from fedgraph.federated.kge.fedprox import FedEProx
from fedgraph.federated.kge.feds import FedEP, FedS
from fedgraph.federated.kge.feds_client import FedSClient
from fedgraph.federated.kge.setup import (
    KGESettings,
    build_clients,
    entity_geometry,
    fede_builder,
)


@dataclass(frozen=True)
class FedProxSettings:
    proximal_mu: float = setting(
        0.1, "weight μ of the proximal term", low=0.0, legacy="proximal_mu"
    )
    proximal_reduction: str = setting(
        "sum",
        "the proximal term summed over the entity table or averaged over rows",
        choices=PROXIMAL_REDUCTIONS,
    )


@dataclass(frozen=True)
class FedECSettings:
    contrastive_mu: float = setting(
        0.3, "weight μ_con of the contrastive term", low=0.0, legacy="contrastive_mu"
    )
    temperature: float = setting(
        0.2, "temperature τ of the contrastive term", low=0.0, low_open=True,
        legacy="temperature",
    )  # fmt: skip


@dataclass(frozen=True)
class FedLUSettings:
    mu_distill: float = setting(2.0, "mutual-distillation weight", low=0.0)
    distill_schedule: str = setting(
        "always",
        "distillation every round (Algorithm 1) or gated (FedLU's code)",
        choices=SCHEDULES,
    )
    distill_wait: int = setting(
        20, "gated: rounds before distillation may switch on", low=0
    )
    distill_tol: float = setting(
        0.001, "gated: validation gain counted as progress", low=0.0
    )
    local_init: str = setting(
        "global", "where the local tables start", choices=LOCAL_INITS
    )
    global_relations: str = setting(
        "shared", "the global model's relation table (own: an ablation)",
        choices=GLOBAL_RELATIONS,
    )  # fmt: skip


@dataclass(frozen=True)
class FedSSettings:
    p: float = setting(
        0.4, "share of shared entities uploaded per sparse round", low=0.0, high=1.0
    )
    sync_interval: int = setting(4, "sparse rounds between two full exchanges", low=0)


def build_fedlu(
    fed: FederatedKG, s: KGESettings, x: FedLUSettings
) -> tuple[Strategy, dict[int, Client]]:
    r"""FedLU (§4.1) with its distillation weight and schedule."""
    width, rho = entity_geometry(s)
    strategy = FedLU(fed.num_entities, width, init_range=rho, seed=s.seed, **asdict(x))
    return strategy, build_clients(
        fed,
        s,
        FedLUClient,
        mu_distill=x.mu_distill,
        local_init=x.local_init,
        global_relations=x.global_relations,
    )


def build_fedep(
    fed: FederatedKG, s: KGESettings, x: object
) -> tuple[Strategy, dict[int, Client]]:
    r"""FedEP (FedS §IV-B)."""
    width, rho = entity_geometry(s)
    strategy = FedEP(fed.num_entities, width, init_range=rho, seed=s.seed)
    return strategy, build_clients(fed, s, FedSClient)


def build_feds(
    fed: FederatedKG, s: KGESettings, x: FedSSettings
) -> tuple[Strategy, dict[int, Client]]:
    r"""FedS (§III) with its sparsity ``p`` and ``sync_interval``."""
    width, rho = entity_geometry(s)
    strategy = FedS(fed.num_entities, width, init_range=rho, seed=s.seed, **asdict(x))
    return strategy, build_clients(fed, s, FedSClient)


ALGORITHMS = [
    Algorithm(
        "fede", "kge", "entity-wise averaging of the shared entity rows",
        fede_builder(FedE), reference="https://arxiv.org/abs/2010.12882",
    ),
    Algorithm(
        "fedprox", "kge", "FedE plus a proximal term on the local entity table",
        fede_builder(FedEProx), FedProxSettings,
        reference="https://arxiv.org/abs/1812.06127",
    ),
    Algorithm(
        "fedec", "kge", "FedE plus an embedding-contrastive local term",
        fede_builder(FedEC), FedECSettings,
    ),
    Algorithm(
        "fedlu", "kge", "FedE with mutual local/global distillation",
        build_fedlu, FedLUSettings, reference="https://arxiv.org/abs/2302.02069",
    ),
    Algorithm(
        "fedep", "kge", "FedE with personalised (priority-weighted) updates",
        build_fedep,
    ),
    Algorithm(
        "feds", "kge", "FedEP with sparse uploads and periodic full exchanges",
        build_feds, FedSSettings,
    ),
]  # fmt: skip
