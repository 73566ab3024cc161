r"""Knowledge-graph embedding models (scoring only).

``models`` is the explicit registry; :func:`resolve_model` looks a name up in
it (``"transe"``, ``"RotatE"``, ...).
"""

from __future__ import annotations

from typing import Any

from fedgraph.models.kge.base import HEAD_BATCH, MODES, TAIL_BATCH, KGEModel
from fedgraph.models.kge.complex import ComplEx
from fedgraph.models.kge.distmult import DistMult
from fedgraph.models.kge.rotate import RotatE
from fedgraph.models.kge.transe import TransE
from fedgraph.registry import resolve

models: list[type[KGEModel]] = [TransE, DistMult, ComplEx, RotatE]


def resolve_model(query: Any, *args: Any, **kwargs: Any) -> KGEModel:
    r"""Builds the model named ``query`` (case, ``-`` and ``_`` ignored)."""
    return resolve(query, models, *args, **kwargs)


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
