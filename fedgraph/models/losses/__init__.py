r"""Losses over positive scores ``[B]`` and negative scores ``[B, K]``, one
per file.

``losses`` is the registry (:class:`~fedgraph.registry.Registry`): every
concrete :class:`KGELoss` that a module of this package lists in
``__all__``, so a new loss is one new file. :func:`resolve_loss` builds one
by name (``"nssa"``, ``"sigmoid-ns"``, ``"margin-ranking"``, ...).
"""

from __future__ import annotations

from typing import Any

from fedgraph.models.losses.base import KGELoss
from fedgraph.models.losses.margin_ranking import MarginRankingLoss
from fedgraph.models.losses.nssa import NSSALoss
from fedgraph.models.losses.sigmoid_ns import SigmoidNSLoss
from fedgraph.registry import Registry

#: The losses (``fedgraph train --loss``), found by module.
losses = Registry("loss", KGELoss)


def resolve_loss(query: Any, **kwargs: Any) -> KGELoss:
    r"""Builds the loss named ``query`` (case, ``-`` and ``_`` ignored) with
    its keyword arguments."""
    return losses.resolve(query, **kwargs)


__all__ = [
    "KGELoss",
    "NSSALoss",
    "SigmoidNSLoss",
    "MarginRankingLoss",
    "losses",
    "resolve_loss",
]
