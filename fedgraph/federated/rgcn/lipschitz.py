r"""The weight (gradient) penalty of the FedAlign "-L" variants."""

from __future__ import annotations

import torch
from torch import Tensor


def gradient_penalty(
    loss: Tensor, inputs: Tensor, target: float = 1.0, *, one_sided: bool = False
) -> Tensor:
    r"""FedAlign's Eq. 11 (after WGAN-GP, Gulrajani et al., 2017) without
    :math:`\lambda`:

    .. math::
        \big(\lVert \nabla_{G_k} F_k(\mathbf{w}) \rVert_2 - 1\big)^2

    where the gradient is taken with respect to the graph input ``inputs``
    (for featureless nodes: the learned node features feeding the first
    layer) over the whole graph at once, as the paper does (one 2-norm of
    the whole gradient, not a per-node mean). The graph of the gradient is
    kept (``create_graph=True``) so the penalty can be back-propagated.

    With ``one_sided=True`` only norms *above* the target are penalised,
    :math:`\max(0, \lVert \nabla \rVert_2 - 1)^2`, which is what the paper's
    text says the term does ("penalizes the 2-norm of gradients larger than
    1"). The two-sided Eq. 11 also pushes small gradients *up* to norm 1; with
    the published :math:`\lambda = 10` and SGD lr 0.1 that feedback made
    AIFB clients diverge to NaN within 10 local epochs here (docs/rdf.md).

    Args:
        loss (Tensor): the scalar task loss :math:`F_k`.
        inputs (Tensor): the input it depends on (``requires_grad``).
        target (float, optional): the target norm. (default: :obj:`1.0`)
        one_sided (bool, optional): penalise only norms above ``target``.
            (default: :obj:`False`)
    """
    if not inputs.requires_grad:
        raise ValueError("`inputs` must require gradients (got requires_grad=False)")
    (grad,) = torch.autograd.grad(loss, inputs, create_graph=True)
    # sqrt(Σ g² + tiny): the plain 2-norm has a 0/0 (NaN) derivative at g = 0.
    norm = torch.sqrt((grad**2).sum() + 1e-12)
    gap = norm - target
    return gap.clamp(min=0) ** 2 if one_sided else gap**2


__all__ = ["gradient_penalty"]
