r"""A fused L1 distance matrix (TransE's hot path), with its gradient.

.. math::
    D_{bc} = \sum_d |q_{bd} - x_{cd}|, \qquad
    \frac{\partial L}{\partial q_{bd}} = \sum_c G_{bc}\,\mathrm{sgn}(q_{bd} - x_{cd}),
    \qquad
    \frac{\partial L}{\partial x_{cd}} = -\sum_b G_{bc}\,\mathrm{sgn}(q_{bd} - x_{cd})

:func:`torch.cdist` (``p=1``) computes this at about 1 G subtract-abs-adds per
CPU second here, and its backward is ~1.5× its forward. The same three
reductions written as broadcasts and compiled with :func:`torch.compile`
(inductor emits one vectorised loop nest per reduction, so ``[B, C, d]`` is
never materialised) ran 7× faster forward and 3× faster backward on this
2-core AVX-512 CPU (``benchmarks/kge_speed.py``, ``docs/benchmarks.md``).

Compilation happens on first use (≈ 8 s per kernel, shapes dynamic), once per
machine: later processes load the kernels from TorchInductor's on-disk cache
(:mod:`fedgraph.models.kge._compiled`). If it is unavailable or fails (no C++ compiler, an unsupported
platform), :func:`l1_distance` warns and falls back to :func:`torch.cdist`,
as it does silently under ``FEDGRAPH_COMPILE=0``, so results never depend on
it being there (shared machinery: :mod:`fedgraph.models.kge._compiled`). The
subgradient at ``q == x`` is ``±G`` rather than ``0``; ties have
measure zero for float embeddings.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from fedgraph.models.kge._compiled import (
    FusedDistance,
    GatheredDistance,
    GroupedDistance,
    KernelSet,
    check_pair,
)

# State of the compiled kernels (see fedgraph.models.kge._compiled).
_KERNELS: dict[str, Callable[..., Tensor]] | None = None
_DISABLED = False


def _forward(query: Tensor, cand: Tensor) -> Tensor:
    return (query[:, None, :] - cand[None, :, :]).abs().sum(-1)


def _grad_query(grad: Tensor, query: Tensor, cand: Tensor) -> Tensor:
    g = grad[:, :, None]
    return torch.where(query[:, None, :] > cand[None, :, :], g, -g).sum(1)


def _grad_cand(grad: Tensor, query: Tensor, cand: Tensor) -> Tensor:
    # Reduce over the queries along the last (contiguous) axis.
    g = grad.t()[:, None, :]
    return torch.where(query.t()[None, :, :] > cand[:, :, None], -g, g).sum(-1)


def _cdist(query: Tensor, cand: Tensor) -> Tensor:
    return torch.cdist(query, cand, p=1.0)


#: Candidate block of the compiled kernels (see fedgraph.models.kge._compiled):
#: the same distances up to float rounding, ~4.5x faster on an evaluation chunk [512, 13452]
#: (2.19 -> 0.48 s, one thread); training's 256 shared negatives are one block.
BLOCK_BYTES = 2**20

_KERNEL_SET = KernelSet(
    globals(),
    "L1",
    "torch.cdist",
    block_bytes=BLOCK_BYTES,
    kernels={"forward": _forward, "grad_query": _grad_query, "grad_cand": _grad_cand},
    fallbacks={"forward": _cdist, "grad_query": _grad_query, "grad_cand": _grad_cand},
)


# Per-positive negatives: D[b, k] = sum_d |q[b, d] - table[index[b, k], d]|.
# Compiled, the gather is an indirect load inside the reduction loop; eager,
# the same expressions materialise [B, K, d] (the fallback).
def _gather_forward(query: Tensor, table: Tensor, index: Tensor) -> Tensor:
    return (query[:, None, :] - table[index]).abs().sum(-1)


def _gather_grad_query(
    grad: Tensor, query: Tensor, table: Tensor, index: Tensor
) -> Tensor:
    # [B, d, K] so that the reduction runs over the negatives.
    x = table[index].permute(0, 2, 1)
    g = grad[:, None, :]
    return torch.where(query[:, :, None] > x, g, -g).sum(-1)


def _gather_grad_table(
    grad: Tensor, query: Tensor, table: Tensor, index: Tensor
) -> Tensor:
    g = grad[:, :, None]
    rows = torch.where(query[:, None, :] > table[index], -g, g)
    return torch.zeros_like(table).index_put_(
        (index.reshape(-1),), rows.reshape(-1, table.size(1)), accumulate=True
    )


_GATHER_STATE: dict[str, object] = {}
_GATHER_SET = KernelSet(
    _GATHER_STATE,
    "gathered L1",
    "an eager gather",
    kernels={
        "forward": _gather_forward,
        "grad_query": _gather_grad_query,
        "grad_cand": _gather_grad_table,
    },
    fallbacks={
        "forward": _gather_forward,
        "grad_query": _gather_grad_query,
        "grad_cand": _gather_grad_table,
    },
)


# Grouped distances: D[g, b, c] = sum_d |q[g, b, d] - x[g, c, d]| for G
# independent query/candidate pairs (clients trained together, each with its
# own shared negatives); the same reductions with a leading group axis.
def _grouped_forward(query: Tensor, cand: Tensor) -> Tensor:
    return (query[:, :, None, :] - cand[:, None, :, :]).abs().sum(-1)


def _grouped_grad_query(grad: Tensor, query: Tensor, cand: Tensor) -> Tensor:
    g = grad[:, :, :, None]
    return torch.where(query[:, :, None, :] > cand[:, None, :, :], g, -g).sum(2)


def _grouped_grad_cand(grad: Tensor, query: Tensor, cand: Tensor) -> Tensor:
    g = grad.transpose(1, 2)[:, :, None, :]  # [G, C, 1, B]: reduce over B last
    q = query.transpose(1, 2)[:, None, :, :]  # [G, 1, d, B]
    return torch.where(q > cand[:, :, :, None], -g, g).sum(-1)


def _per_group(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    # the eager fallback of a grouped gradient: the ungrouped one per group
    def run(grad: Tensor, query: Tensor, cand: Tensor) -> Tensor:
        return torch.stack([fn(*x) for x in zip(grad, query, cand, strict=True)])

    return run


_GROUPED_STATE: dict[str, object] = {}
_GROUPED_SET = KernelSet(
    _GROUPED_STATE,
    "grouped L1",
    "torch.cdist",
    kernels={
        "forward": _grouped_forward,
        "grad_query": _grouped_grad_query,
        "grad_cand": _grouped_grad_cand,
    },
    fallbacks={
        "forward": _cdist,
        "grad_query": _per_group(_grad_query),
        "grad_cand": _per_group(_grad_cand),
    },
)


def compile_enabled() -> bool:
    r"""Whether the compiled kernels are used (``FEDGRAPH_COMPILE`` not ``0``
    and no earlier compilation failure)."""
    return _KERNEL_SET.enabled()


def l1_distance(query: Tensor, cand: Tensor) -> Tensor:
    r"""The ``[B, C]`` L1 distances between ``query`` ``[B, d]`` and
    ``cand`` ``[C, d]``, differentiable in both (see the module docstring)."""
    check_pair(query, cand)
    if not compile_enabled():
        return torch.cdist(query, cand, p=1.0)
    return FusedDistance.apply(_KERNEL_SET, query.contiguous(), cand.contiguous())


def l1_gathered(query: Tensor, table: Tensor, index: Tensor) -> Tensor:
    r"""The ``[B, K]`` L1 distances between ``query[b]`` (``[B, d]``) and
    ``table[index[b, k]]`` (``table`` ``[N, d]``, ``index`` ``[B, K]``),
    differentiable in ``query`` and ``table`` (a dense ``[N, d]`` gradient),
    without the ``[B, K, d]`` gather when compiled: the per-positive
    negatives of TransE (FedE/FedLU's default sampling)."""
    if query.dim() != 2 or table.dim() != 2 or query.size(1) != table.size(1):
        raise ValueError(
            f"`query` and `table` must be [B, d] and [N, d] with the same d "
            f"(got {tuple(query.shape)} and {tuple(table.shape)})"
        )
    if index.dim() != 2 or index.size(0) != query.size(0):
        raise ValueError(
            f"`index` must be [B, K] with B = {query.size(0)} (got {tuple(index.shape)})"
        )
    if not _GATHER_SET.enabled():
        return _gather_forward(query, table, index)  # plain autograd
    return GatheredDistance.apply(
        _GATHER_SET, query.contiguous(), table.contiguous(), index.contiguous()
    )


def l1_distance_grouped(query: Tensor, cand: Tensor) -> Tensor:
    r"""The ``[G, B, C]`` L1 distances between ``query[g]`` (``[G, B, d]``)
    and ``cand[g]`` (``[G, C, d]``) for every group ``g``, differentiable in
    both: :func:`l1_distance` of ``G`` pairs in one compiled call (batched
    :func:`torch.cdist` when compilation is off)."""
    if query.dim() != 3 or cand.dim() != 3 or query.shape[::2] != cand.shape[::2]:
        raise ValueError(
            "`query` and `cand` must be [G, B, d] and [G, C, d] with the same G "
            f"and d (got {tuple(query.shape)} and {tuple(cand.shape)})"
        )
    if not _GROUPED_SET.enabled():
        return torch.cdist(query, cand, p=1.0)
    return GroupedDistance.apply(_GROUPED_SET, query.contiguous(), cand.contiguous())


__all__ = ["l1_distance", "l1_distance_grouped", "l1_gathered", "compile_enabled"]
