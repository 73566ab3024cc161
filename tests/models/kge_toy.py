r"""A toy batch with per-positive negatives, and the scores and gradients a
KGE model gives it (the gathered kernels' tests compare two paths on it)."""

from __future__ import annotations

import torch


def per_positive_batch(
    num_entities: int, num_relations: int, b: int = 12, k: int = 7
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""``[b, 3]`` positives, ``[b, k]`` negatives and ``[b, k]`` loss weights."""
    gen = torch.Generator().manual_seed(0)
    pos = torch.stack(
        [
            torch.randint(num_entities, (b,), generator=gen),
            torch.randint(num_relations, (b,), generator=gen),
            torch.randint(num_entities, (b,), generator=gen),
        ],
        1,
    )
    neg = torch.randint(num_entities, (b, k), generator=gen)
    return pos, neg, torch.randn(b, k, generator=gen)


def scores_and_grads(model, pos, neg, w, mode):
    r"""Positive and negative scores of ``model.score_batch`` and the entity
    and relation gradients of ``sum(pos) + sum(neg * w)``."""
    model.zero_grad()
    p, n = model.score_batch(pos, neg, mode)
    (p.sum() + (n * w).sum()).backward()
    return (
        p.detach().clone(),
        n.detach().clone(),
        model.entity_embedding.weight.grad.clone(),
        model.relation_embedding.weight.grad.clone(),
    )
