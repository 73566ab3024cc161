r"""InfoNCE with in-batch negatives and an additive margin (FedMKGC Eq. 2)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor


def duplicate_target_mask(targets: Tensor) -> Tensor:
    r"""``[B, B]`` bool: ``True`` at ``(i, j)``, ``i != j``, where batch rows
    ``i`` and ``j`` have the same target entity. Such a column is row
    ``i``'s own positive again, not a negative of :math:`\mathcal{E}'`.

    Args:
        targets (Tensor): ``[B]`` target entity ids.
    """
    targets = torch.as_tensor(targets)
    same = targets.unsqueeze(0) == targets.unsqueeze(1)
    return same & ~torch.eye(targets.numel(), dtype=torch.bool, device=same.device)


def info_nce_loss(
    queries: Tensor,
    targets: Tensor,
    *,
    margin: float = 0.02,
    temperature: float = 0.05,
    mask: Tensor | None = None,
) -> Tensor:
    r"""The mean over the batch of FedMKGC's Eq. 2 (SimKGC's loss):

    .. math::
        \mathcal{L} = -\log \frac{\exp((\mathbf{e}_x^\top \mathbf{e}_y - \gamma)/\tau)}
        {\exp((\mathbf{e}_x^\top \mathbf{e}_y - \gamma)/\tau)
        + \sum_{y' \in \mathcal{E}'} \exp(\mathbf{e}_x^\top \mathbf{e}_{y'}/\tau)}

    Row ``i`` of ``queries`` is :math:`\mathbf{e}_x`, row ``i`` of
    ``targets`` its positive :math:`\mathbf{e}_y`, and the other rows of
    ``targets`` are :math:`\mathcal{E}'` (in-batch negatives), except the
    columns that ``mask`` drops.

    Args:
        queries (Tensor): ``[B, H]`` query embeddings (unit vectors).
        targets (Tensor): ``[B, H]`` target embeddings, row ``i`` the positive
            of query ``i``.
        margin (float, optional): additive margin :math:`\gamma \ge 0`.
            (default: :obj:`0.02`)
        temperature (float, optional): :math:`\tau > 0`. (default: :obj:`0.05`)
        mask (Tensor, optional): ``[B, B]`` bool, ``True`` = drop this
            negative (e.g. :func:`duplicate_target_mask`); the diagonal must
            be ``False``. (default: :obj:`None`)

    Returns:
        Tensor: a scalar.
    """
    if queries.dim() != 2 or queries.shape != targets.shape:
        raise ValueError(
            "`queries` and `targets` must be [B, H] tensors of the same shape "
            f"(got {tuple(queries.shape)} and {tuple(targets.shape)})"
        )
    if temperature <= 0:
        raise ValueError(f"`temperature` must be positive (got {temperature})")
    if margin < 0:
        raise ValueError(f"`margin` must be non-negative (got {margin})")
    n = queries.size(0)
    eye = torch.eye(n, dtype=torch.bool, device=queries.device)
    logits = queries @ targets.t()
    logits = (logits - margin * eye.to(logits.dtype)) / temperature
    if mask is not None:
        if mask.shape != (n, n):
            raise ValueError(f"`mask` must be [{n}, {n}] (got {tuple(mask.shape)})")
        if bool((mask & eye).any()):
            raise ValueError("`mask` must not drop a positive (its diagonal is set)")
        logits = logits.masked_fill(mask, float("-inf"))
    labels = torch.arange(n, device=queries.device)
    return F.cross_entropy(logits, labels)


class InfoNCELoss:
    r"""Callable form of :func:`info_nce_loss` holding :math:`\gamma` and
    :math:`\tau` (fixed, as FedMKGC reports them; SimKGC learns
    :math:`\tau`).

    Args:
        margin (float, optional): :math:`\gamma`. (default: :obj:`0.02`)
        temperature (float, optional): :math:`\tau`. (default: :obj:`0.05`)
    """

    def __init__(self, margin: float = 0.02, temperature: float = 0.05) -> None:
        if temperature <= 0:
            raise ValueError(f"`temperature` must be positive (got {temperature})")
        if margin < 0:
            raise ValueError(f"`margin` must be non-negative (got {margin})")
        self.margin = float(margin)
        self.temperature = float(temperature)

    def __call__(
        self, queries: Tensor, targets: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        return info_nce_loss(
            queries,
            targets,
            margin=self.margin,
            temperature=self.temperature,
            mask=mask,
        )

    def __repr__(self) -> str:
        return f"InfoNCELoss(margin={self.margin}, temperature={self.temperature})"


__all__ = ["info_nce_loss", "InfoNCELoss", "duplicate_target_mask"]
