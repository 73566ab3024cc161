r"""Negative samplers: which entity replaces the head or the tail of a
positive triple, and which side, one per file.

``samplers`` is the registry (:class:`~fedgraph.registry.Registry`): every
concrete :class:`NegativeSampler` that a module of this package lists in
``__all__``, so a new sampler is one new file. :func:`resolve_sampler` builds
one by name (``"uniform"``, ``"bernoulli"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from torch import Tensor

from fedgraph.models.samplers.base import NegativeSampler, triple_keys
from fedgraph.models.samplers.bernoulli import BernoulliNegativeSampler
from fedgraph.models.samplers.uniform import UniformNegativeSampler
from fedgraph.models.samplers.weights import subsampling_weights
from fedgraph.registry import Registry

#: The negative samplers (``fedgraph train --sampler``), found by module.
samplers = Registry("sampler", NegativeSampler)


def resolve_sampler(query: Any, *args: Any, **kwargs: Any) -> NegativeSampler:
    r"""Builds the sampler named ``query`` (case, ``-`` and ``_`` ignored)
    with its arguments (:class:`NegativeSampler`)."""
    return samplers.resolve(query, *args, **kwargs)


def build_sampler(
    query: Any,
    kwargs: Mapping[str, Any] | None,
    num_entities: int,
    num_negatives: int,
    *,
    shared: bool,
    triples: Tensor,
    num_relations: int,
) -> NegativeSampler:
    r"""The sampler named ``query`` for a graph whose training triples are
    ``triples``, with the user's ``kwargs`` checked first
    (:meth:`~fedgraph.registry.Registry.check_kwargs`: a key the sampler
    does not take, or one the run sets itself, is a one-line
    :class:`ValueError`)."""
    own = samplers.check_kwargs(query, kwargs)
    return samplers.resolve(
        query,
        num_entities,
        num_negatives,
        shared=shared,
        triples=triples,
        num_relations=num_relations,
        **own,
    )


__all__ = [
    "NegativeSampler",
    "UniformNegativeSampler",
    "BernoulliNegativeSampler",
    "samplers",
    "resolve_sampler",
    "build_sampler",
    "subsampling_weights",
    "triple_keys",
]
