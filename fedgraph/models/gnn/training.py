r"""Full-graph training and evaluation of an entity classifier."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def train_epoch(
    model: nn.Module,
    edge_index: Tensor,
    edge_type: Tensor,
    y: Tensor,
    mask: Tensor,
    optimizer: torch.optim.Optimizer,
) -> float:
    r"""One full-batch step of cross-entropy on the nodes of ``mask``;
    returns the loss."""
    model.train()
    optimizer.zero_grad()
    out = model(edge_index, edge_type)
    loss = F.cross_entropy(out[mask], y[mask])
    loss.backward()
    optimizer.step()
    return float(loss.detach())


@torch.no_grad()
def accuracy_counts(
    model: nn.Module, edge_index: Tensor, edge_type: Tensor, y: Tensor, mask: Tensor
) -> tuple[int, int]:
    r"""``(correct, total)`` over the nodes of ``mask`` (mergeable)."""
    model.eval()
    pred = model(edge_index, edge_type).argmax(dim=-1)
    return int((pred[mask] == y[mask]).sum()), int(mask.sum())


__all__ = ["train_epoch", "accuracy_counts"]
