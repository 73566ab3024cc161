r"""Builds a federated KGE run (strategy + clients) from a
:class:`~fedgraph.partition.shard.FederatedKG` and plain settings.

``kge_algorithms`` is the registry the ``fedgraph train`` command and the
benchmarks read: name → builder ``f(fed, settings) -> (strategy, clients)``.
Another module adds its algorithm with one entry (e.g. FedLU, FedS), and
its :attr:`KGESettings.extra` settings with their defaults to
``extra_settings`` (read with :func:`algorithm_settings`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
    device: str = "cpu"

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
            device=s.device,
            **kwargs,
        )
    return clients


def entity_geometry(s: KGESettings) -> tuple[int, float]:
    r"""The entity table's width and initialisation range for ``s.model``."""
    probe = resolve_model(s.model, 1, 1, s.dim, gamma=s.gamma)
    return probe.entity_embedding.weight.size(1), probe.embedding_range


def _fede_family(cls: type[FedE], name: str, **extra: str) -> Builder:
    # `extra`: strategy argument -> KGESettings field; the algorithm's own
    # KGESettings.extra settings (extra_settings[name]) are passed as well
    def build(fed: FederatedKG, s: KGESettings) -> tuple[Strategy, dict[int, Client]]:
        width, rho = entity_geometry(s)
        kwargs = {k: getattr(s, v) for k, v in extra.items()}
        kwargs.update(algorithm_settings(name, s.extra))
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
    "fede": _fede_family(FedE, "fede"),
    "fedprox": _fede_family(FedEProx, "fedprox", proximal_mu="proximal_mu"),
    "fedec": _fede_family(
        FedEC, "fedec", contrastive_mu="contrastive_mu", temperature="temperature"
    ),
}


#: Algorithm name → its :attr:`KGESettings.extra` settings and their
#: defaults (``fedgraph train --set KEY=VALUE``; Flower: ``extra.KEY``).
extra_settings: dict[str, dict[str, Any]] = {name: {} for name in kge_algorithms}
extra_settings["fedprox"] = {"proximal_reduction": "sum"}


def cast_setting(what: str, value: Any, default: Any) -> Any:
    r"""``value`` as the type of ``default`` (``bool``, ``int``, ``float`` or
    ``str``; an integral float is accepted for an ``int``, as TOML and JSON
    may write ``20.0``), or a :class:`ValueError` that starts with ``what``."""
    kind = type(default)
    if kind is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{what} must be a boolean (got {value!r})")
        return value
    if kind in (int, float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{what} must be a number (got {value!r})")
        if kind is int and float(value) != int(value):
            raise ValueError(f"{what} must be an integer (got {value!r})")
        return kind(value)
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string (got {value!r})")
    return value


def known_extra_settings() -> list[str]:
    r"""Every :attr:`KGESettings.extra` key some algorithm reads."""
    return sorted({key for keys in extra_settings.values() for key in keys})


def setting_owners(key: str) -> list[str]:
    r"""The algorithms that read the :attr:`KGESettings.extra` key ``key``."""
    return sorted(a for a, keys in extra_settings.items() if key in keys)


def check_extra(extra: Mapping[str, Any], algorithm: str | None = None) -> None:
    r"""Raises a :class:`ValueError` naming the first key of ``extra`` that
    no algorithm reads, or, with ``algorithm``, that ``algorithm`` does not
    read (a mistyped ``--set mu_distil=1`` would otherwise be ignored)."""
    known = (
        known_extra_settings()
        if algorithm is None
        else sorted(extra_settings.get(algorithm, {}))
    )
    for key in extra:
        if key in known:
            continue
        owners = setting_owners(key)
        if algorithm is None:
            raise ValueError(f"Unknown algorithm setting {key!r} (known: {known})")
        listed = ", ".join(known) if known else "none"
        if owners:
            raise ValueError(
                f"{algorithm} has no setting {key!r} (a setting of "
                f"{', '.join(owners)}); {algorithm}'s settings: {listed}"
            )
        raise ValueError(
            f"Unknown algorithm setting {key!r}; {algorithm}'s settings: {listed}"
        )


def algorithm_settings(algorithm: str, extra: Mapping[str, Any]) -> dict[str, Any]:
    r"""The :attr:`KGESettings.extra` settings of ``algorithm``: its
    defaults (``extra_settings[algorithm]``) updated with ``extra``, each
    value cast to its default's type (:func:`cast_setting`). Keys of other
    algorithms are ignored; keys no algorithm reads raise a
    :class:`ValueError` (:func:`check_extra`)."""
    check_extra(extra)
    out = dict(extra_settings[algorithm])
    for key, default in out.items():
        if key in extra:
            out[key] = cast_setting(f"Algorithm setting {key!r}", extra[key], default)
    return out


def _register_fedlu_feds() -> None:
    # FedLU / FedEP / FedS builders (fedlu_setup imports KGESettings from here).
    from fedgraph.federated.fedlu_setup import builders, defaults

    kge_algorithms.update(builders)
    extra_settings.update(defaults)


_register_fedlu_feds()


def _register_fedr() -> None:
    # FedR (relation aggregation; fedr imports build_clients from here)
    from fedgraph.federated.fedr import build_fedr

    kge_algorithms["fedr"] = build_fedr
    extra_settings["fedr"] = {}


_register_fedr()


def build_kge_federation(
    algorithm: str, fed: FederatedKG, settings: KGESettings
) -> tuple[Strategy, dict[int, Client]]:
    r"""The strategy and clients of ``algorithm`` on ``fed``."""
    key = algorithm.lower().replace("-", "").replace("_", "")
    if key not in kge_algorithms:
        raise ValueError(
            f"Could not resolve '{algorithm}' among choices {sorted(kge_algorithms)}"
        )
    check_extra(settings.extra)
    return kge_algorithms[key](fed, settings)


__all__ = [
    "KGESettings",
    "build_clients",
    "build_kge_federation",
    "kge_algorithms",
    "extra_settings",
    "algorithm_settings",
    "check_extra",
    "known_extra_settings",
    "setting_owners",
    "cast_setting",
]
