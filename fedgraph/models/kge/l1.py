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

Compilation happens once per process on first use (≈ 8 s per kernel, shapes
dynamic). If it is unavailable or fails (no C++ compiler, an unsupported
platform), or ``FEDGRAPH_COMPILE=0`` is set, :func:`l1_distance` falls back
to :func:`torch.cdist` with a warning, so results never depend on it being
there. The subgradient at ``q == x`` is ``±G`` rather than ``0``; ties have
measure zero for float embeddings.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

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


def compile_enabled() -> bool:
    r"""Whether the compiled kernels are used (``FEDGRAPH_COMPILE`` not ``0``
    and no earlier compilation failure)."""
    return not _DISABLED and os.environ.get("FEDGRAPH_COMPILE", "1") != "0"


def _kernels() -> dict[str, Callable[..., Tensor]]:
    global _KERNELS
    if _KERNELS is None:
        _KERNELS = {
            name: torch.compile(fn, dynamic=True)
            for name, fn in (
                ("forward", _forward),
                ("grad_query", _grad_query),
                ("grad_cand", _grad_cand),
            )
        }
    return _KERNELS


def _run(name: str, *args: Tensor) -> Tensor | None:
    global _DISABLED
    try:
        return _kernels()[name](*args)
    except Exception as exc:  # compiler missing or failing: fall back
        _DISABLED = True
        warnings.warn(
            f"Compiled L1 kernel unavailable ({type(exc).__name__}: {exc}); "
            "falling back to torch.cdist, which is slower but exact",
            stacklevel=3,
        )
        return None


class _L1Distance(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, query: Tensor, cand: Tensor) -> Tensor:
        ctx.save_for_backward(query, cand)
        out = _run("forward", query, cand)
        return torch.cdist(query, cand, p=1.0) if out is None else out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
        query, cand = ctx.saved_tensors
        grad = grad.contiguous()
        gq = gc = None
        if ctx.needs_input_grad[0]:
            gq = _run("grad_query", grad, query, cand)
            if gq is None:
                gq = _grad_query(grad, query, cand)
        if ctx.needs_input_grad[1]:
            gc = _run("grad_cand", grad, query, cand)
            if gc is None:
                gc = _grad_cand(grad, query, cand)
        return gq, gc


def l1_distance(query: Tensor, cand: Tensor) -> Tensor:
    r"""The ``[B, C]`` L1 distances between ``query`` ``[B, d]`` and
    ``cand`` ``[C, d]``, differentiable in both (see the module docstring)."""
    if query.dim() != 2 or cand.dim() != 2 or query.size(1) != cand.size(1):
        raise ValueError(
            "`query` and `cand` must be [B, d] and [C, d] with the same d "
            f"(got {tuple(query.shape)} and {tuple(cand.shape)})"
        )
    if not compile_enabled():
        return torch.cdist(query, cand, p=1.0)
    return _L1Distance.apply(query.contiguous(), cand.contiguous())


__all__ = ["l1_distance", "compile_enabled"]
