r"""Builds a federated KGE run (strategy + clients) from a
:class:`~fedgraph.partition.shard.FederatedKG` and plain settings.

``kge_algorithms`` is the registry the ``fedgraph train`` command and the
benchmarks read: name → builder ``f(fed, settings) -> (strategy, clients)``.
Another module adds its algorithm with one entry (e.g. FedLU, FedS).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from fedgraph.federated.base import Client, Strategy
from fedgraph.federated.fede import FedE
from fedgraph.federated.fedec import FedEC
from fedgraph.federated.fedprox import FedEProx
from fedgraph.federated.kge_client import KGEClient
from fedgraph.models.kge import resolve_model
from fedgraph.partition.shard import FederatedKG


@dataclass
class KGESettings:
    r"""Settings of a federated KGE run (defaults: FedLU §5.2, TransE).

    Args:
        model (str): KGE model name. (default: ``"transe"``)
        dim (int): embedding dimension. (default: 256)
        gamma (float): margin (FedLU's code forces 9 for TransE/RotatE).
        lr (float): Adam learning rate. (default: 1e-4)
        batch_size (int): (default: 1024)
        num_negatives (int): (default: 256)
        local_epochs (int): (default: 3)
        loss (str): (default: ``"sigmoid-ns"``, FedLU Eq. 7)
        shared_negatives (bool): one negative set per batch. (default: True)
        seed (int): (default: 0)
        proximal_mu (float): FedProx μ. (default: 0.1)
        contrastive_mu (float): FedEC μ_con. (default: 0.3)
        temperature (float): FedEC τ. (default: 0.2)
        evaluate_with (str): ``"local"`` or ``"global"`` entity rows.
        extra (dict): settings of other algorithms (e.g. ``mu_distill``).
    """

    model: str = "transe"
    dim: int = 256
    gamma: float = 9.0
    lr: float = 1e-4
    batch_size: int = 1024
    num_negatives: int = 256
    local_epochs: int = 3
    loss: str = "sigmoid-ns"
    shared_negatives: bool = True
    seed: int = 0
    proximal_mu: float = 0.1
    contrastive_mu: float = 0.3
    temperature: float = 0.2
    evaluate_with: str = "local"
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def build_clients(
    fed: FederatedKG, s: KGESettings, cls: type = KGEClient, **kwargs: Any
) -> dict[int, Client]:
    r"""One ``cls`` client (default :class:`KGEClient`) per shard, each model
    seeded by ``(seed, client)``; ``kwargs`` go to the client's constructor."""
    clients: dict[int, Client] = {}
    for shard in fed.shards:
        torch.manual_seed(s.seed * 1009 + shard.client_id)
        model = resolve_model(
            s.model, shard.num_entities, shard.num_relations, s.dim, gamma=s.gamma
        )
        clients[shard.client_id] = cls(
            shard,
            model,
            loss=s.loss,
            lr=s.lr,
            batch_size=s.batch_size,
            num_negatives=s.num_negatives,
            local_epochs=s.local_epochs,
            shared_negatives=s.shared_negatives,
            seed=s.seed,
            **kwargs,
        )
    return clients


def entity_geometry(s: KGESettings) -> tuple[int, float]:
    r"""The entity table's width and initialisation range for ``s.model``."""
    probe = resolve_model(s.model, 1, 1, s.dim, gamma=s.gamma)
    return probe.entity_embedding.weight.size(1), probe.embedding_range


def _fede_family(cls: type[FedE], **extra: str) -> Builder:
    def build(fed: FederatedKG, s: KGESettings) -> tuple[Strategy, dict[int, Client]]:
        width, rho = entity_geometry(s)
        kwargs = {k: getattr(s, v) for k, v in extra.items()}
        strategy = cls(
            fed.num_entities,
            width,
            init_range=rho,
            seed=s.seed,
            evaluate_with=s.evaluate_with,
            **kwargs,
        )
        return strategy, build_clients(fed, s)

    return build


Builder = Callable[[FederatedKG, KGESettings], tuple[Strategy, dict[int, Client]]]

#: Algorithm name → builder (the ``--algorithm`` choices of ``fedgraph train``).
kge_algorithms: dict[str, Builder] = {
    "fede": _fede_family(FedE),
    "fedprox": _fede_family(FedEProx, proximal_mu="proximal_mu"),
    "fedec": _fede_family(
        FedEC, contrastive_mu="contrastive_mu", temperature="temperature"
    ),
}


def _register_fedlu_feds() -> None:
    # FedLU / FedEP / FedS builders (fedlu_setup imports KGESettings from here).
    from fedgraph.federated.fedlu_setup import builders

    kge_algorithms.update(builders)


_register_fedlu_feds()


def build_kge_federation(
    algorithm: str, fed: FederatedKG, settings: KGESettings
) -> tuple[Strategy, dict[int, Client]]:
    r"""The strategy and clients of ``algorithm`` on ``fed``."""
    key = algorithm.lower().replace("-", "").replace("_", "")
    if key not in kge_algorithms:
        raise ValueError(
            f"Could not resolve '{algorithm}' among choices {sorted(kge_algorithms)}"
        )
    return kge_algorithms[key](fed, settings)


__all__ = ["KGESettings", "build_clients", "build_kge_federation", "kge_algorithms"]
