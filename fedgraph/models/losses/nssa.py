r"""The self-adversarial negative sampling loss of RotatE and FedE."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from fedgraph.models.losses.base import KGELoss, check_scores, weighted_mean


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

    def negative_weights(self, neg: Tensor) -> Tensor:
        r"""The detached ``[B, K]`` weights :math:`p_i` of the negatives."""
        if self.adversarial_temperature == 0:
            return torch.full_like(neg, 1.0 / neg.size(1))
        return F.softmax(self.adversarial_temperature * neg.detach(), dim=1)

    def __call__(
        self, pos: Tensor, neg: Tensor, weight: Tensor | None = None
    ) -> Tensor:
        check_scores(pos, neg)
        pos_term = -F.logsigmoid(pos)
        neg_term = -(self.negative_weights(neg) * F.logsigmoid(-neg)).sum(dim=1)
        return 0.5 * (weighted_mean(pos_term, weight) + weighted_mean(neg_term, weight))

    def rows(self, pos: Tensor, neg: Tensor) -> Tensor:
        check_scores(pos, neg)
        neg_term = -(self.negative_weights(neg) * F.logsigmoid(-neg)).sum(dim=1)
        return 0.5 * (-F.logsigmoid(pos) + neg_term)


__all__ = ["NSSALoss"]
