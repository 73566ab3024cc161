r"""The plain negative-sampling loss of FedLU."""

from __future__ import annotations

from fedgraph.models.losses.nssa import NSSALoss


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


__all__ = ["SigmoidNSLoss"]
