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


__all__ = ["modulus_distance", "compile_enabled", "EPS"]
