r"""A fused complex-modulus distance matrix (RotatE's hot path), with its
gradient.

Rows hold :math:`k` complex numbers as ``[re | im]`` (``2k`` reals); with
:math:`\delta = q_b - x_c` (complex, per coordinate) and
:math:`m_{bci} = |\delta_{bci}|`:

.. math::
    D_{bc} = \sum_i m_{bci}, \qquad
    \frac{\partial L}{\partial q_{bi}} = \sum_c G_{bc}\,
        \frac{\delta_{bci}}{\max(m_{bci}, \varepsilon)}, \qquad
    \frac{\partial L}{\partial x_{ci}} = -\sum_b G_{bc}\,
        \frac{\delta_{bci}}{\max(m_{bci}, \varepsilon)}

for the real and imaginary parts alike (:math:`G = \partial L / \partial D`,
:math:`\varepsilon = 10^{-12}`). The guard only acts where
:math:`m < \varepsilon`: the gradient is exact elsewhere, :math:`0` (a
subgradient of the cone :math:`|\delta|`) at :math:`\delta = 0` where autograd
through ``sqrt`` would give NaN, and each term stays bounded by
:math:`|G_{bc}|` since :math:`|\delta_{re}|, |\delta_{im}| \le m`.

There is no matrix-product identity for a sum of moduli, so the eager form
materialises ``[B, C, k]`` differences. Written as broadcasts and compiled
with :func:`torch.compile` (inductor emits one vectorised loop nest per
reduction, one square root and one division per element), ``[B, C, k]`` is
never stored, and candidates go in ~1 MiB blocks that stay in L2. On one
thread of this 2-core CPU that took the training shape (``[1024, 256]``,
``k = 256``, forward + both gradients) from ~2.5–3 s to ~0.11–0.15 s and an
evaluation chunk (``[512, 13452]``) from ~30 s to 0.6 s (``docs/benchmarks.md``).
As in :mod:`fedgraph.models.kge.l1`, compilation happens once per
process on first use (shapes dynamic); if it fails :func:`modulus_distance`
warns and falls back to the eager broadcast, chunked over candidates
(:func:`~fedgraph.models.kge.base.chunked_candidates`) with the same
hand-written gradients, as it does without a warning under
``FEDGRAPH_COMPILE=0``. Shared machinery: :mod:`fedgraph.models.kge._compiled`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from fedgraph.models.kge._compiled import FusedDistance, KernelSet, check_pair
from fedgraph.models.kge.base import candidate_chunks, chunked_candidates

#: Lower bound on the modulus in the gradient's denominator.
EPS = 1e-12

#: Elements of ``[B, C, 2k]`` per candidate chunk of the eager fallback.
CHUNK_BUDGET = 2**24

#: Candidate block of the compiled kernels (see fedgraph.models.kge._compiled).
BLOCK_BYTES = 2**20

# State of the compiled kernels (see fedgraph.models.kge._compiled).
_KERNELS: dict[str, Callable[..., Tensor]] | None = None
_DISABLED = False


def _diff(query: Tensor, cand: Tensor) -> tuple[Tensor, Tensor]:
    # `narrow` gives both halves the same symbolic size k, so that inductor
    # can fuse the real and imaginary reductions into one loop nest.
    k = query.size(1) // 2
    d_re = query.narrow(1, 0, k)[:, None, :] - cand.narrow(1, 0, k)[None, :, :]
    d_im = query.narrow(1, k, k)[:, None, :] - cand.narrow(1, k, k)[None, :, :]
    return d_re, d_im


def _weight(grad: Tensor, d_re: Tensor, d_im: Tensor) -> Tensor:
    # G / max(m, EPS). Called once per reduction, not shared: a shared [B, C, k]
    # node with two users is materialised by inductor; two identical inlined
    # copies are merged (one sqrt, one division per element) in the fused loop.
    return grad[:, :, None] / torch.sqrt(d_re * d_re + d_im * d_im).clamp_min(EPS)


def _forward(query: Tensor, cand: Tensor) -> Tensor:
    d_re, d_im = _diff(query, cand)
    return torch.sqrt(d_re * d_re + d_im * d_im).sum(-1)


def _grad_query(grad: Tensor, query: Tensor, cand: Tensor) -> Tensor:
    d_re, d_im = _diff(query, cand)
    g_re = (_weight(grad, d_re, d_im) * d_re).sum(1)
    g_im = (_weight(grad, d_re, d_im) * d_im).sum(1)
    return torch.cat([g_re, g_im], dim=-1)


def _grad_cand(grad: Tensor, query: Tensor, cand: Tensor) -> Tensor:
    d_re, d_im = _diff(query, cand)
    g_re = (_weight(grad, d_re, d_im) * d_re).sum(0)
    g_im = (_weight(grad, d_re, d_im) * d_im).sum(0)
    return -torch.cat([g_re, g_im], dim=-1)


def _slices(query: Tensor, cand: Tensor) -> list[slice]:
    # The candidate chunks of chunked_candidates(..., budget=CHUNK_BUDGET).
    return candidate_chunks(query.size(0), cand, CHUNK_BUDGET)


def _forward_eager(query: Tensor, cand: Tensor) -> Tensor:
    return chunked_candidates(_forward, (query,), cand, budget=CHUNK_BUDGET)


def _scaled_diff(grad: Tensor, query: Tensor, cand: Tensor) -> tuple[Tensor, Tensor]:
    # Eager (d_re, d_im) * G / max(m, EPS) on one chunk, computing the weight
    # once and in place (the compiled form recomputes it; see _weight).
    d_re, d_im = _diff(query, cand)
    w = d_re * d_re
    w.addcmul_(d_im, d_im).sqrt_().clamp_min_(EPS).reciprocal_()
    w.mul_(grad[:, :, None])
    return d_re.mul_(w), d_im.mul_(w)


def _grad_query_eager(grad: Tensor, query: Tensor, cand: Tensor) -> Tensor:
    out = torch.zeros_like(query)
    for s in _slices(query, cand):
        g_re, g_im = _scaled_diff(grad[:, s], query, cand[s])
        out += torch.cat([g_re.sum(1), g_im.sum(1)], dim=-1)
    return out


def _grad_cand_eager(grad: Tensor, query: Tensor, cand: Tensor) -> Tensor:
    parts = []
    for s in _slices(query, cand):
        g_re, g_im = _scaled_diff(grad[:, s], query, cand[s])
        parts.append(torch.cat([g_re.sum(0), g_im.sum(0)], dim=-1).neg_())
    return torch.cat(parts) if parts else torch.zeros_like(cand)


_KERNEL_SET = KernelSet(
    globals(),
    "modulus",
    "the chunked broadcast",
    kernels={"forward": _forward, "grad_query": _grad_query, "grad_cand": _grad_cand},
    fallbacks={
        "forward": _forward_eager,
        "grad_query": _grad_query_eager,
        "grad_cand": _grad_cand_eager,
    },
    block_bytes=BLOCK_BYTES,
)


# Per-positive negatives: D[b, n] = sum_i |q[b, i] - table[index[b, n], i]|
# (complex coordinates). Compiled, the forward's gather is an indirect load
# inside the reduction loop and [B, K, 2k] is never stored. Both gradients
# come from the same rows R[b, n] = G[b, n] * delta / max(m, EPS) ([re | im]):
# dL/dq[b] = sum_n R[b, n] and dL/dtable = -scatter_add(R, index). The
# backward computes R once per block of queries that fits in cache
# (GATHER_ROWS_BYTES) and reduces and scatters it there: 2.6x faster than a
# compiled kernel per gradient (114 against 295 ms, [512, 256] negatives,
# k = 256, 13,078 rows, one thread).
def _gather_diff(query: Tensor, table: Tensor, index: Tensor) -> tuple[Tensor, Tensor]:
    # _diff against each query's own rows table[index[b]]: [B, K, k] halves
    k = query.size(1) // 2
    x = table[index]
    d_re = query.narrow(1, 0, k)[:, None, :] - x.narrow(2, 0, k)
    d_im = query.narrow(1, k, k)[:, None, :] - x.narrow(2, k, k)
    return d_re, d_im


def _gather_forward(query: Tensor, table: Tensor, index: Tensor) -> Tensor:
    d_re, d_im = _gather_diff(query, table, index)
    return torch.sqrt(d_re * d_re + d_im * d_im).sum(-1)


def _gather_rows(grad: Tensor, query: Tensor, table: Tensor, index: Tensor) -> Tensor:
    d_re, d_im = _gather_diff(query, table, index)
    w = grad[:, :, None] / torch.sqrt(d_re * d_re + d_im * d_im).clamp_min(EPS)
    return torch.cat([w * d_re, w * d_im], dim=-1)


#: bytes of the ``[b, K, 2k]`` gradient rows computed at once in the
#: backward of :func:`modulus_gathered` (fits this CPU's caches)
GATHER_ROWS_BYTES = 2**23

_GATHER_STATE: dict[str, object] = {}
_GATHER_SET = KernelSet(
    _GATHER_STATE,
    "gathered modulus",
    "an eager gather",
    kernels={"forward": _gather_forward, "rows": _gather_rows},
    fallbacks={"forward": _gather_forward, "rows": _gather_rows},
    names=("forward", "rows"),
)


class _GatheredModulus(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, query: Tensor, table: Tensor, index: Tensor) -> Tensor:
        ctx.save_for_backward(query, table, index)
        return _GATHER_SET("forward", query, table, index)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor | None, None]:
        query, table, index = ctx.saved_tensors
        need_q, need_t = ctx.needs_input_grad[:2]
        grad = grad.contiguous()
        gq = torch.empty_like(query) if need_q else None
        gt = torch.zeros_like(table) if need_t else None
        row_bytes = max(1, index.size(1) * table.size(1) * table.element_size())
        step = max(1, GATHER_ROWS_BYTES // row_bytes)
        for s in range(0, query.size(0), step):
            e = min(s + step, query.size(0))
            rows = _GATHER_SET("rows", grad[s:e], query[s:e], table, index[s:e])
            if gq is not None:
                gq[s:e] = rows.sum(1)
            if gt is not None:
                flat = rows.reshape(-1, table.size(1))
                gt.index_add_(0, index[s:e].reshape(-1), flat, alpha=-1)
        return gq, gt, None


def compile_enabled() -> bool:
    r"""Whether the compiled kernels are used (``FEDGRAPH_COMPILE`` not ``0``
    and no earlier compilation failure of this kernel)."""
    return _KERNEL_SET.enabled()


def modulus_distance(query: Tensor, cand: Tensor) -> Tensor:
    r"""The ``[B, C]`` sums of complex moduli
    :math:`D_{bc} = \sum_i |q_{bi} - x_{ci}|` between ``query`` ``[B, 2k]``
    and ``cand`` ``[C, 2k]`` (``[re | im]`` rows), differentiable in both
    (see the module docstring).

    Args:
        query (Tensor): ``[B, 2k]`` query points.
        cand (Tensor): ``[C, 2k]`` candidate points.

    Returns:
        Tensor: ``[B, C]`` distances.
    """
    check_pair(query, cand, what="2k")
    if query.size(1) % 2:
        raise ValueError(
            "`query` and `cand` must hold [re | im] halves, so an even number "
            f"of columns (got {query.size(1)})"
        )
    return FusedDistance.apply(_KERNEL_SET, query.contiguous(), cand.contiguous())


def gathered_enabled() -> bool:
    r"""Whether :func:`modulus_gathered` runs compiled (``FEDGRAPH_COMPILE``
    not ``0`` and no earlier failure of the gathered kernels)."""
    return _GATHER_SET.enabled()


def modulus_gathered(query: Tensor, table: Tensor, index: Tensor) -> Tensor:
    r"""The ``[B, K]`` sums of complex moduli between ``query[b]`` and
    ``table[index[b, n]]`` (``query`` ``[B, 2k]``, ``table`` ``[N, 2k]``,
    ``[re | im]`` rows, ``index`` ``[B, K]``), with the module's gradients
    (a dense ``[N, 2k]`` one for ``table``); compiled, the ``[B, K, 2k]``
    gather is never stored: RotatE's per-positive negatives (FedE's and
    FedLU's sampling)."""
    check_pair(query, table, what="2k")
    if query.size(1) % 2:
        raise ValueError(
            "`query` and `table` must hold [re | im] halves, so an even number "
            f"of columns (got {query.size(1)})"
        )
    if index.dim() != 2 or index.size(0) != query.size(0):
        raise ValueError(
            f"`index` must be [B, K] with B = {query.size(0)} (got {tuple(index.shape)})"
        )
    return _GatheredModulus.apply(
        query.contiguous(), table.contiguous(), index.contiguous()
    )


__all__ = [
    "modulus_distance",
    "modulus_gathered",
    "compile_enabled",
    "gathered_enabled",
    "EPS",
]
