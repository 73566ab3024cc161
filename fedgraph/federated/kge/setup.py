r"""Builds a federated KGE run (strategy + clients) from a
:class:`~fedgraph.data.shard.FederatedKG` and plain settings.

The algorithms themselves live in the registry
(:mod:`fedgraph.federated.algorithms`, family ``"kge"``: the modules of
:mod:`fedgraph.federated.kge`); :func:`kge_algorithms` (name → builder) and
:func:`extra_settings` (name → declared settings and defaults) are views of it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from fedgraph.data.shard import FederatedKG
from fedgraph.federated.algorithms import (
    algorithms,
    cast_setting,
    check_keys,
    get,
    known_settings,
    setting_owners,
)
from fedgraph.federated.base import Client, Strategy
from fedgraph.federated.kge.client import KGEClient
from fedgraph.federated.kge.fede import FedE
from fedgraph.models.kge import models, resolve_model
from fedgraph.models.memory import check_kge_memory
from fedgraph.models.samplers import samplers
from fedgraph.training.optimizers import DEFAULT_OPTIMIZER, check_optimizer
from fedgraph.training.regimes import resolve_regime
from fedgraph.training.sample_on import check_sample_on


@dataclass
class KGESettings:
    r"""Settings of a federated KGE run (defaults: FedLU §5.2, TransE).

    Args:
        model (str): KGE model name. (default: ``"transe"``)
        model_kwargs (dict): the model's own hyperparameters (TransE's
            ``p_norm``; :meth:`fedgraph.registry.Registry.hyperparameters`),
            each checked against its constructor. (default: ``{}``)
        dim (int): embedding dimension. (default: 256)
        gamma (float): margin (FedLU's code forces 9 for TransE/RotatE).
        lr (float): the optimiser's learning rate. (default: 1e-4)
        optimizer (str): ``"adam"``, ``"adagrad"`` or ``"sgd"``
            (:func:`~fedgraph.training.optimizers.build_optimizer`).
            (default: ``"adam"``)
        batch_size (int): (default: 1024)
        num_negatives (int): (default: 256)
        local_epochs (int): (default: 3)
        loss (str): (default: ``"sigmoid-ns"``, FedLU Eq. 7)
        shared_negatives (bool): one negative set per batch (``False``: 256
            per positive, as FedLU's and FedS's code). (default: True)
        seed (int): (default: 0)
        proximal_mu (float): FedProx μ. (default: 0.1)
        contrastive_mu (float): FedEC μ_con. (default: 0.3)
        temperature (float): FedEC τ. (default: 0.2)
        evaluate_with (str): ``"local"`` or ``"global"`` entity rows.
        extra (dict): settings of other algorithms (e.g. ``mu_distill``).
        device (str): where clients train and rank (``"cpu"``, ``"cuda"``);
            the samples, hence the run, are the same on every device up to
            float rounding. (default: ``"cpu"``)
        sample_on (str): where batches and negatives are drawn: ``"host"``
            (the CPU, the same samples on every device) or ``"device"``
            (on ``device``, no host sync per step; another, seeded stream per
            device type; :mod:`fedgraph.training.sample_on`).
            (default: ``"host"``)
        regime (str): the clients' training regime
            (:mod:`fedgraph.training.regimes`: ``"negative-sampling"``,
            ``"1vsall"``, ``"kvsall"``). (default: ``"negative-sampling"``)
        regime_kwargs (dict): its settings (``loss``, ``label_smoothing``,
            ``reciprocal``, ``regularizer``, ``regularizer_weight``,
            ``entity_dropout``, ``relation_dropout``). (default: ``{}``)
        sampler (str): the clients' negative sampler
            (:mod:`fedgraph.models.samplers`: ``"uniform"``, ``"bernoulli"``),
            each built on its client's training triples.
            (default: ``"uniform"``)
        sampler_kwargs (dict): its own arguments (``filtered``,
            ``max_redraws``), each checked against its constructor.
            (default: ``{}``)
    """

    model: str = "transe"
    model_kwargs: dict[str, Any] = field(default_factory=dict)
    dim: int = 256
    gamma: float = 9.0
    lr: float = 1e-4
    optimizer: str = DEFAULT_OPTIMIZER
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
    device: str = "cpu"
    sample_on: str = "host"
    regime: str = "negative-sampling"
    regime_kwargs: dict[str, Any] = field(default_factory=dict)
    sampler: str = "uniform"
    sampler_kwargs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_sample_on(self.sample_on)
        self.optimizer = check_optimizer(self.optimizer)
        try:
            models.resolve_class(self.model)
        except ValueError as exc:
            raise ValueError(f"`model`: {exc}") from None
        self.model_kwargs = models.check_kwargs(self.model, self.model_kwargs)
        resolve_regime(self.regime, **self.regime_kwargs)  # checked early
        try:
            samplers.resolve_class(self.sampler)
        except ValueError as exc:
            raise ValueError(f"`sampler`: {exc}") from None
        self.sampler_kwargs = samplers.check_kwargs(self.sampler, self.sampler_kwargs)

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
            s.model,
            shard.num_entities,
            shard.num_relations,
            s.dim,
            gamma=s.gamma,
            **s.model_kwargs,
        )
        clients[shard.client_id] = cls(
            shard,
            model,
            loss=s.loss,
            lr=s.lr,
            optimizer=s.optimizer,
            batch_size=s.batch_size,
            num_negatives=s.num_negatives,
            local_epochs=s.local_epochs,
            shared_negatives=s.shared_negatives,
            seed=s.seed,
            device=s.device,
            sample_on=s.sample_on,
            regime=s.regime,
            regime_kwargs=s.regime_kwargs,
            sampler=s.sampler,
            sampler_kwargs=s.sampler_kwargs,
            **kwargs,
        )
    return clients


def entity_geometry(s: KGESettings) -> tuple[int, float]:
    r"""The entity table's width and initialisation range for ``s.model``."""
    probe = resolve_model(s.model, 1, 1, s.dim, gamma=s.gamma, **s.model_kwargs)
    return probe.entity_embedding.weight.size(1), probe.embedding_range


def fede_builder(cls: type[FedE]) -> Builder:
    r"""The registry builder of a FedE-family strategy ``cls``: built with
    the global vocabulary, the model's entity geometry, ``seed``,
    ``evaluate_with`` and the algorithm's settings as keyword arguments, and
    one :class:`KGEClient` per shard."""

    def build(
        fed: FederatedKG, s: KGESettings, x: Any
    ) -> tuple[Strategy, dict[int, Client]]:
        width, rho = entity_geometry(s)
        strategy = cls(
            fed.num_entities,
            width,
            init_range=rho,
            seed=s.seed,
            evaluate_with=s.evaluate_with,
            **asdict(x),
        )
        return strategy, build_clients(fed, s)

    return build


Builder = Callable[..., tuple[Strategy, dict[int, Client]]]


def check_extra(extra: Mapping[str, Any], algorithm: str | None = None) -> None:
    r"""Raises a :class:`ValueError` naming the first key of ``extra`` that
    no algorithm declares, or, with ``algorithm``, that ``algorithm`` does
    not declare (:func:`fedgraph.federated.algorithms.check_keys`)."""
    check_keys(extra, algorithm, "kge" if algorithm is not None else None)


def algorithm_settings(algorithm: str, extra: Mapping[str, Any]) -> dict[str, Any]:
    r"""The settings of ``algorithm`` as a dict: its declared defaults
    updated with ``extra``, each value cast and checked. Keys of other
    algorithms are ignored; keys no algorithm declares raise a
    :class:`ValueError`."""
    check_keys(extra, family="kge")
    alg = get(algorithm, "kge")
    own = {k: v for k, v in extra.items() if k in alg.defaults()}
    return asdict(alg.parse(own))


def known_extra_settings() -> list[str]:
    r"""Every setting some KGE algorithm declares."""
    return known_settings("kge")


def build_kge_federation(
    algorithm: str, fed: FederatedKG, settings: KGESettings
) -> tuple[Strategy, dict[int, Client]]:
    r"""The strategy and clients of the KGE ``algorithm`` on ``fed``: its
    registry entry's builder with its settings read from ``settings``
    (the :attr:`KGESettings.extra` keys, after the legacy fields such as
    :attr:`KGESettings.proximal_mu`)."""
    alg = get(algorithm, "kge")
    check_keys(settings.extra, family="kge")
    own = {k: v for k, v in settings.extra.items() if k in alg.defaults()}
    check_kge_memory(  # every client's tables, before any is allocated
        [(shard.num_entities, shard.num_relations) for shard in fed.shards],
        settings.dim,
        model=models.resolve_class(settings.model),
        batch_size=settings.batch_size,
        num_negatives=settings.num_negatives,
        shared_negatives=settings.shared_negatives,
        device=settings.device,
        names=SETTING_NAMES,
    )
    return alg.build(fed, settings, alg.parse(own, legacy=settings))


#: how a memory error names the settings to lower (and their options of
#: ``fedgraph train``)
SETTING_NAMES = {
    "hidden_channels": "`dim` (--dim)",
    "num_negatives": "`num_negatives` (--num-negatives)",
    "batch_size": "`batch_size` (--batch-size)",
}


def kge_algorithms() -> dict[str, Callable[..., Any]]:
    r"""Every registered KGE algorithm's name → its builder."""
    return {k: a.build for k, a in algorithms("kge").items()}


def extra_settings() -> dict[str, dict[str, Any]]:
    r"""Every registered KGE algorithm's name → its declared settings and
    their defaults."""
    return {k: a.defaults() for k, a in algorithms("kge").items()}


__all__ = [
    "KGESettings",
    "build_clients",
    "build_kge_federation",
    "fede_builder",
    "entity_geometry",
    "algorithm_settings",
    "check_extra",
    "known_extra_settings",
    "setting_owners",
    "cast_setting",
    "kge_algorithms",
    "extra_settings",
]
