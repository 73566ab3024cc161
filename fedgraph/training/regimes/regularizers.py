r"""Weighted embedding regularisers over a batch's triples: N3 (Lacroix et
al., ICML 2018) and L2, added to a training regime's loss.

Both follow the batch form of Lacroix et al.'s code: the penalty of a batch
of :math:`B` triples is the weight times the mean over the batch of the
entries of the head, relation and tail embeddings, each entry a modulus for a
complex table (``[re | im]`` halves, :attr:`KGEModel.entity_factor` = 2).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from torch import Tensor

from fedgraph.models.kge import KGEModel
from fedgraph.registry import Registry
from fedgraph.validate import check_number


def moduli(values: Tensor, factor: int) -> Tensor:
    r"""``values`` as moduli: :math:`\sqrt{re^2 + im^2}` of ``[re | im]``
    halves when ``factor`` is 2, else :math:`|x|`."""
    if factor == 2:
        re, im = values.chunk(2, dim=-1)
        return (re * re + im * im).sqrt()
    return values.abs()


def batch_factors(model: KGEModel, batch: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    r"""The moduli of the head, relation and tail embeddings of ``batch``
    (``[B, 3]``)."""
    ent, rel = model.entity_embedding, model.relation_embedding
    h, r, t = batch.unbind(1)
    return (
        moduli(ent(h), model.entity_factor),
        moduli(rel(r), model.relation_factor),
        moduli(ent(t), model.entity_factor),
    )


class Regularizer(ABC):
    r"""A penalty :math:`\lambda\,\Omega(\text{batch})`; call it as
    ``regularizer(model, batch)``.

    Args:
        weight (float): :math:`\lambda \ge 0`.
    """

    def __init__(self, weight: float) -> None:
        self.weight = check_number(weight, "regularizer_weight", low=0.0, strict=False)

    @abstractmethod
    def norm(self, factor: Tensor) -> Tensor:
        r"""The summed penalty of one ``[B, d]`` factor."""

    def __call__(self, model: KGEModel, batch: Tensor) -> Tensor:
        return self.of(batch_factors(model, batch), batch.size(0))

    def of(self, factors: Sequence[Tensor], batch_size: int) -> Tensor:
        r"""The penalty of ``factors`` (``[B, d]`` moduli each) of a batch of
        ``batch_size`` rows: :math:`\lambda / B` times their summed norms."""
        total = sum(self.norm(f) for f in factors)
        return self.weight * total / batch_size

    def __repr__(self) -> str:
        return f"{type(self).__name__}(weight={self.weight})"


class N3Regularizer(Regularizer):
    r"""N3 (`"Canonical Tensor Decomposition for Knowledge Base Completion"
    <https://arxiv.org/abs/1806.07297>`_), the weighted nuclear 3-norm's
    batch form:

    .. math::
        \Omega = \frac{\lambda}{B} \sum_{b=1}^{B} \sum_i
            |h_{b,i}|^3 + |r_{b,i}|^3 + |t_{b,i}|^3
    """

    def norm(self, factor: Tensor) -> Tensor:
        return (factor**3).sum()


class L2Regularizer(Regularizer):
    r"""Squared L2 norm of a batch's embeddings:

    .. math::
        \Omega = \frac{\lambda}{B} \sum_{b=1}^{B}
            \|h_b\|_2^2 + \|r_b\|_2^2 + \|t_b\|_2^2
    """

    def norm(self, factor: Tensor) -> Tensor:
        return (factor * factor).sum()


#: the regularisers (:data:`fedgraph.registry.KINDS` ``["regularizer"]``),
#: by name ``"n3"``, ``"l2"`` (:func:`resolve_regularizer`)
regularizers = Registry("regularizer", Regularizer)


def resolve_regularizer(query: Any, weight: float) -> Regularizer | None:
    r"""The regulariser named ``query`` (``"n3"``, ``"l2"``) with ``weight``;
    :obj:`None` for ``None`` or ``"none"``."""
    if query is None or (isinstance(query, str) and query.lower() == "none"):
        return None
    return regularizers.resolve(query, weight)


__all__ = [
    "Regularizer",
    "N3Regularizer",
    "L2Regularizer",
    "regularizers",
    "resolve_regularizer",
    "moduli",
    "batch_factors",
]
