r"""Knowledge-graph embedding models (scoring only).

``models`` is the registry (:class:`~fedgraph.registry.Registry`): every
concrete :class:`KGEModel` that a module of this package lists in
``__all__``, so a new model is one new file. :func:`resolve_model` builds
one by name (``"transe"``, ``"RotatE"``, ...), with its own keyword
arguments (``p_norm=2``) checked against its constructor.
"""

from __future__ import annotations

from typing import Any

from fedgraph.models.kge.base import HEAD_BATCH, MODES, TAIL_BATCH, KGEModel
from fedgraph.models.kge.complex import ComplEx
from fedgraph.models.kge.distmult import DistMult
from fedgraph.models.kge.rotate import RotatE
from fedgraph.models.kge.transe import TransE
from fedgraph.registry import Registry

#: The KGE models (``fedgraph train --model``), found by module.
models = Registry("model", KGEModel)


def resolve_model(query: Any, *args: Any, **kwargs: Any) -> KGEModel:
    r"""Builds the model named ``query`` (case, ``-`` and ``_`` ignored);
    ``args`` are the sizes, ``kwargs`` the margin and the model's own
    hyperparameters."""
    return models.resolve(query, *args, **kwargs)


__all__ = [
    "KGEModel",
    "TransE",
    "DistMult",
    "ComplEx",
    "RotatE",
    "models",
    "resolve_model",
    "HEAD_BATCH",
    "TAIL_BATCH",
    "MODES",
]
