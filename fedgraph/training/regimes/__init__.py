r"""KGE training regimes, one per file, resolved by name
(:func:`resolve_regime`): negative sampling (the default), 1-vs-all and
k-vs-all, each with reciprocal relations, a weighted N3 / L2 regulariser and
entity / relation dropout as options."""

from __future__ import annotations

from typing import Any

from fedgraph.registry import Registry
from fedgraph.training.regimes.base import (
    ALL_ENTITY_LOSSES,
    AllEntityRegime,
    ScoredQueries,
    StepContext,
    TrainingData,
    TrainingRegime,
    all_entity_loss,
)
from fedgraph.training.regimes.k_vs_all import KvsAll
from fedgraph.training.regimes.negative_sampling import NegativeSampling
from fedgraph.training.regimes.one_vs_all import OneVsAll
from fedgraph.training.regimes.reciprocal import (
    ReciprocalScorer,
    inverse_triples,
    with_inverse_relations,
)
from fedgraph.training.regimes.regularizers import (
    L2Regularizer,
    N3Regularizer,
    Regularizer,
    resolve_regularizer,
)

#: the training regimes (:data:`fedgraph.registry.KINDS` ``["regime"]``),
#: found by module: one file each; a class's ``name`` and ``aliases`` are the
#: names a command line takes
regimes = Registry("regime", TrainingRegime)

#: the name of the default regime
DEFAULT_REGIME = "negative-sampling"


def resolve_regime(query: Any = DEFAULT_REGIME, **kwargs: Any) -> TrainingRegime:
    r"""The regime named ``query`` (``"negative-sampling"``, ``"1vsall"``,
    ``"kvsall"``, a class name, or an instance, returned as is) built with
    ``kwargs`` (each cast to its default's type; an unknown key is a
    :class:`ValueError` naming it); :obj:`None` gives negative sampling."""
    if query is None:
        query = DEFAULT_REGIME
    if not isinstance(query, str | type):
        return regimes.resolve(query)
    return regimes.resolve(query, **regimes.check_kwargs(query, kwargs))


__all__ = [
    "TrainingRegime",
    "AllEntityRegime",
    "ScoredQueries",
    "TrainingData",
    "StepContext",
    "NegativeSampling",
    "OneVsAll",
    "KvsAll",
    "ReciprocalScorer",
    "inverse_triples",
    "with_inverse_relations",
    "Regularizer",
    "N3Regularizer",
    "L2Regularizer",
    "resolve_regularizer",
    "regimes",
    "DEFAULT_REGIME",
    "resolve_regime",
    "all_entity_loss",
    "ALL_ENTITY_LOSSES",
]
