r"""The contract of a loss over positive scores ``[B]`` and negative scores
``[B, K]``.

Scores are "larger is more plausible" (:class:`~fedgraph.models.kge.KGEModel`).
Every loss takes optional ``[B]`` per-positive weights (the RotatE/FedLU
``subsampling_weight``); the weighted mean is :math:`\sum_b w_b l_b / \sum_b w_b`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from torch import Tensor


def weighted_mean(values: Tensor, weight: Tensor | None) -> Tensor:
    r""":math:`\sum_b w_b l_b / \sum_b w_b` of ``[B]`` ``values`` (their
    plain mean when ``weight`` is :obj:`None`)."""
    if weight is None:
        return values.mean()
    return (weight * values).sum() / weight.sum()


def check_scores(pos: Tensor, neg: Tensor) -> None:
    r"""Raises :class:`ValueError` unless ``pos`` is ``[B]`` and ``neg`` is
    ``[B, K]``."""
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


__all__ = ["KGELoss", "weighted_mean", "check_scores"]
