r"""The margin ranking loss of TransE."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor

from fedgraph.models.losses.base import KGELoss, check_scores, weighted_mean


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
        check_scores(pos, neg)
        return weighted_mean(self.rows(pos, neg), weight)

    def rows(self, pos: Tensor, neg: Tensor) -> Tensor:
        check_scores(pos, neg)
        return F.relu(self.margin - pos[:, None] + neg).mean(dim=1)


__all__ = ["MarginRankingLoss"]
