r"""Losses over positive scores ``[B]`` and negative scores ``[B, K]``.

Scores are "larger is more plausible" (:class:`~fedgraph.models.kge.KGEModel`).
Every loss takes optional ``[B]`` per-positive weights (the RotatE/FedLU
``subsampling_weight``); the weighted mean is :math:`\sum_b w_b l_b / \sum_b w_b`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from fedgraph.registry import Registry


def _reduce(values: Tensor, weight: Tensor | None) -> Tensor:
    if weight is None:
        return values.mean()
    return (weight * values).sum() / weight.sum()


def _check(pos: Tensor, neg: Tensor) -> None:
    if pos.dim() != 1 or neg.dim() != 2 or neg.size(0) != pos.size(0):
        raise ValueError(
            "Expected positive scores [B] and negative scores [B, K] "
            f"(got {tuple(pos.shape)} and {tuple(neg.shape)})"
        )


class KGELoss(ABC):
    r"""A loss :math:`L(s^+, s^-)` of ``[B]`` positive and ``[B, K]`` negative
    scores; call it as ``loss(pos, neg, weight=None)``."""

    @abstractmethod
    def __call__(
        self, pos: Tensor, neg: Tensor, weight: Tensor | None = None
    ) -> Tensor: ...

    def rows(self, pos: Tensor, neg: Tensor) -> Tensor:
        r"""The ``[B]`` per-positive losses :math:`l_b` whose weighted mean
        :math:`\sum_b w_b l_b / \sum_b w_b` is the loss (up to float
        rounding): what a batch of several clients' positives reduces per
        client (:func:`~fedgraph.training.batched.train_epochs_batched`)."""
        raise NotImplementedError(f"{type(self).__name__} has no per-row losses")

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in vars(self).items())
        return f"{self.__class__.__name__}({args})"


class NSSALoss(KGELoss):
    r"""Self-adversarial negative sampling loss (RotatE; FedE Eq. 3–4):

    .. math::
        L = -\log \sigma(s^+) - \sum_{i=1}^{K} p_i \log \sigma(-s^-_i),
        \qquad p_i = \frac{\exp(\alpha s^-_i)}{\sum_j \exp(\alpha s^-_j)}

    with :math:`s = \gamma - d` the model score, so that
    :math:`\sigma(s^+) = \sigma(\gamma - d(h, t))` as in FedE's Eq. 3. The
    weights :math:`p_i` are detached (no gradient), as in the RotatE code.
    Like that code, the returned value is
    :math:`\tfrac12(\text{positive term} + \text{negative term})`.

    Args:
        adversarial_temperature (float, optional): :math:`\alpha`; ``0`` gives
            uniform weights (:class:`SigmoidNSLoss`). (default: :obj:`1.0`)
    """

    name = "nssa"

    def __init__(self, adversarial_temperature: float = 1.0) -> None:
        if adversarial_temperature < 0:
            raise ValueError(
                "`adversarial_temperature` must be >= 0 "
                f"(got {adversarial_temperature})"
            )
        self.adversarial_temperature = float(adversarial_temperature)

    def _neg_weights(self, neg: Tensor) -> Tensor:
        if self.adversarial_temperature == 0:
            return torch.full_like(neg, 1.0 / neg.size(1))
        return F.softmax(self.adversarial_temperature * neg.detach(), dim=1)

    def __call__(
        self, pos: Tensor, neg: Tensor, weight: Tensor | None = None
    ) -> Tensor:
        _check(pos, neg)
        pos_term = -F.logsigmoid(pos)
        neg_term = -(self._neg_weights(neg) * F.logsigmoid(-neg)).sum(dim=1)
        return 0.5 * (_reduce(pos_term, weight) + _reduce(neg_term, weight))

    def rows(self, pos: Tensor, neg: Tensor) -> Tensor:
        _check(pos, neg)
        neg_term = -(self._neg_weights(neg) * F.logsigmoid(-neg)).sum(dim=1)
        return 0.5 * (-F.logsigmoid(pos) + neg_term)


class SigmoidNSLoss(NSSALoss):
    r"""Plain negative-sampling loss (FedLU Eq. 7), uniform over negatives:

    .. math::
        L = -\log \sigma(s^+) - \frac{1}{K}\sum_{i=1}^{K} \log \sigma(-s^-_i)

    (returned halved, :math:`\tfrac12(\cdot + \cdot)`, as FedLU's code does).
    """

    name = "sigmoid-ns"

    def __init__(self) -> None:
        super().__init__(adversarial_temperature=0.0)

    def __repr__(self) -> str:
        return "SigmoidNSLoss()"


class MarginRankingLoss(KGELoss):
    r"""Margin ranking loss (TransE; FedE's model fusion, :math:`\beta`):

    .. math::
        L = \frac{1}{K} \sum_{i=1}^{K} \max(0, \beta - s^+ + s^-_i)

    Args:
        margin (float, optional): :math:`\beta`. (default: :obj:`1.0`)
    """

    name = "margin-ranking"

    def __init__(self, margin: float = 1.0) -> None:
        self.margin = float(margin)

    def __call__(
        self, pos: Tensor, neg: Tensor, weight: Tensor | None = None
    ) -> Tensor:
        _check(pos, neg)
        return _reduce(self.rows(pos, neg), weight)

    def rows(self, pos: Tensor, neg: Tensor) -> Tensor:
        _check(pos, neg)
        return F.relu(self.margin - pos[:, None] + neg).mean(dim=1)


#: The losses (``fedgraph train --loss``): the concrete :class:`KGELoss`
#: classes this module lists in ``__all__``.
losses = Registry("loss", KGELoss)


def resolve_loss(query: Any, **kwargs: Any) -> KGELoss:
    r"""Builds a loss by name (``"nssa"``, ``"sigmoid-ns"``, ``"margin-ranking"``)."""
    return losses.resolve(query, **kwargs)


__all__ = [
    "KGELoss",
    "NSSALoss",
    "SigmoidNSLoss",
    "MarginRankingLoss",
    "losses",
    "resolve_loss",
]
