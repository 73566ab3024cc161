r"""The softmax cross-entropy of a positive against its sampled negatives."""

from __future__ import annotations

import torch
from torch import Tensor

from fedgraph.models.losses.base import KGELoss, check_scores, weighted_mean


class CrossEntropyLoss(KGELoss):
    r"""Softmax cross-entropy over a positive and its sampled negatives
    (LibKGE's ``kl``, PyKEEN's ``CrossEntropyLoss``).

    The loss of LibKGE's negative sampling with ``train.loss: kl`` (`"You
    CAN Teach an Old Dog New Tricks! On Training Knowledge Graph Embeddings"
    <https://openreview.net/forum?id=BkxSmlBFvr>`_) and of PyKEEN's
    ``CrossEntropyLoss`` under sLCWA: the positive is the true class of a
    softmax over its score and its :math:`K` negatives' scores,

    .. math::
        l_b = -\log \frac{\exp(s^+_b)}{\exp(s^+_b) + \sum_{i=1}^{K}
        \exp(s^-_{b,i})}
        = \operatorname{logsumexp}(s^+_b, s^-_{b,1}, \dots, s^-_{b,K}) - s^+_b,

    the Kullback–Leibler divergence from the one-hot target to the softmax
    (the target's entropy is zero), reduced by the weighted mean
    :math:`\sum_b w_b l_b / \sum_b w_b`. The plain form: no self-adversarial
    weights, no label smoothing.
    """

    name = "cross-entropy"
    aliases = ("kl",)

    def __call__(
        self, pos: Tensor, neg: Tensor, weight: Tensor | None = None
    ) -> Tensor:
        return weighted_mean(self.rows(pos, neg), weight)

    def rows(self, pos: Tensor, neg: Tensor) -> Tensor:
        check_scores(pos, neg)
        return torch.logsumexp(torch.cat([pos[:, None], neg], dim=1), dim=1) - pos


__all__ = ["CrossEntropyLoss"]
