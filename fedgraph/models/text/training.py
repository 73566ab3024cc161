r"""One local epoch of bi-encoder training (in-batch negatives)."""

from __future__ import annotations

import torch
from torch import Tensor

from fedgraph.models.text.bi_encoder import BiEncoder
from fedgraph.models.text.loss import InfoNCELoss, duplicate_target_mask
from fedgraph.models.text.tokens import EntityTokens


def train_bi_encoder_epoch(
    model: BiEncoder,
    examples: Tensor,
    tokens: EntityTokens,
    *,
    optimizer: torch.optim.Optimizer,
    loss: InfoNCELoss,
    batch_size: int = 384,
    generator: torch.Generator | None = None,
    max_steps: int | None = None,
) -> tuple[float, int]:
    r"""One pass over ``examples`` in shuffled batches: encode each query
    :math:`(h, r)` and target :math:`t`, take :class:`InfoNCELoss` against
    the batch's other targets (a target equal to the row's own positive is
    not a negative: :func:`duplicate_target_mask`), one optimiser step per
    batch.

    Args:
        model (BiEncoder): the model (set to train mode).
        examples (Tensor): ``[n, 3]`` ``(h, r, t)`` with relation ids in
            ``[0, 2R)`` (:func:`~fedgraph.models.text.add_inverse_triples`).
        tokens (EntityTokens): entity texts.
        optimizer (torch.optim.Optimizer): over the model's parameters.
        loss (InfoNCELoss): the loss.
        batch_size (int, optional): examples per step. (default: :obj:`384`)
        generator (torch.Generator, optional): shuffles the examples.
        max_steps (int, optional): stop after this many steps, the first
            ``max_steps`` batches of the shuffled order (the whole order is
            drawn either way); :obj:`None`: the whole pass.

    Returns:
        (float, int): the sum of the step losses and the number of steps;
        the parameters' gradients are freed (``None``).
    """
    if batch_size < 1:
        raise ValueError(f"`batch_size` must be positive (got {batch_size})")
    if max_steps is not None and max_steps < 0:
        raise ValueError(f"`max_steps` must be non-negative (got {max_steps})")
    model.train()
    order = torch.randperm(examples.size(0), generator=generator)
    total, steps = 0.0, 0
    starts = range(0, order.numel(), batch_size)
    if max_steps is not None:
        starts = starts[:max_steps]
    for start in starts:
        batch = examples[order[start : start + batch_size]]
        h, r, t = batch.unbind(1)
        q_ids, q_mask = tokens[h]
        t_ids, t_mask = tokens[t]
        queries, targets = model(r, q_ids, q_mask, t_ids, t_mask)
        value = loss(queries, targets, mask=duplicate_target_mask(t))
        optimizer.zero_grad(set_to_none=True)
        value.backward()
        optimizer.step()
        total += float(value.detach())
        steps += 1
    # the last step's gradients are the model's size and of no further use
    # (a federation keeps one such model per client)
    optimizer.zero_grad(set_to_none=True)
    return total, steps


__all__ = ["train_bi_encoder_epoch"]
