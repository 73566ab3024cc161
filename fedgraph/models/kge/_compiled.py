r"""Shared machinery of the compiled distance kernels (:mod:`.l1`,
:mod:`.modulus`).

A kernel module writes its distance ``forward(query, cand)`` and the two
gradients ``grad_query(grad, query, cand)`` / ``grad_cand(grad, query, cand)``
as eager broadcasts and hands them to a :class:`KernelSet`, which compiles
each with :func:`torch.compile` (``dynamic=True``) on first use, runs it, and
on any compilation or runtime failure warns once, marks the set disabled and
returns the module's eager fallback instead. :class:`FusedDistance` is the
:class:`torch.autograd.Function` both modules share: it saves only ``query``
and ``cand`` and calls the set's gradient kernels in ``backward``.

The compiled loop nests run over queries outside and candidates inside, so
all of ``cand`` is streamed once per query row. With ``block_bytes`` set,
:class:`FusedDistance` splits the candidates into blocks of about that size
(near-equal, so a block never has the one row that would make dynamo
specialise and recompile) and concatenates or sums the blocks' results: an
evaluation chunk of 512 queries against 13,452 RotatE candidates (27 MB) ran
3× faster in 1 MiB blocks, which stay in this CPU's 2 MiB L2.

TorchInductor's on-disk cache (``TORCHINDUCTOR_CACHE_DIR``, by default
``torchinductor_$USER`` in the system's temporary folder) keeps the compiled
kernels across processes, but its key leaves the CPU's instruction set out:
with a cache written under AVX-512 and read under AVX2
(``ATEN_CPU_CAPABILITY=avx2``, or one cache directory shared by machines of
both kinds), the cached RotatE modulus kernel summed every other block of
coordinates (distances of about half the true value, silently), and an AVX2
cache read under AVX-512 aborted the process. Before its first compilation a
set therefore points ``TORCHINDUCTOR_CACHE_DIR`` at a subfolder named after
the instruction set TorchInductor picks (:func:`isa_cache_dir`, e.g.
``.../isa-avx2``), for the whole process: each instruction set has its own
cache, and :func:`torch.compile` runs with its default options (the same
generated code as without the subfolder).

``FEDGRAPH_COMPILE=0`` in the environment turns every set off
(:func:`env_enabled`). Each set keeps its state in its module's globals
``_KERNELS`` (the compiled callables, :obj:`None` until first use) and
``_DISABLED`` (set after a failure), so a failure in one kernel does not
disable the other, and a test can ``monkeypatch`` either.
"""

from __future__ import annotations

import logging
import os
import re
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor

Kernel = Callable[..., Tensor]
KERNEL_NAMES = ("forward", "grad_query", "grad_cand")


#: Prefix of the per-instruction-set cache subfolder (:func:`isa_cache_dir`).
ISA_PREFIX = "isa-"


def isa_name() -> str:
    r"""The vector instruction set TorchInductor picks for this process
    (``"avx2"``, ``"avx512"``, ...; ``"none"`` without one), honouring
    ``ATEN_CPU_CAPABILITY``; ``"unknown"`` where TorchInductor cannot say."""
    try:
        from torch._inductor.cpu_vec_isa import pick_vec_isa

        isa = pick_vec_isa()
    except Exception:  # a TorchInductor without this helper
        return "unknown"
    if not isa:
        return "none"
    return re.sub(r"[^a-z0-9_]+", "-", str(isa).lower()).strip("-") or "unknown"


def isa_cache_dir(base: str | None = None) -> str:
    r"""TorchInductor's cache folder for this instruction set:
    ``base/isa-<name>`` (:func:`isa_name`), where ``base`` is
    ``TORCHINDUCTOR_CACHE_DIR`` (or TorchInductor's default) with any
    ``isa-*`` subfolder already added by a parent process removed.

    Args:
        base (str, optional): the cache folder to start from.
            (default: ``TORCHINDUCTOR_CACHE_DIR`` or TorchInductor's default)
    """
    if base is None:
        base = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if not base:
        from torch._inductor.runtime.cache_dir_utils import default_cache_dir

        base = default_cache_dir()
    base = os.path.abspath(base)
    if os.path.basename(base).startswith(ISA_PREFIX):
        base = os.path.dirname(base)
    return os.path.join(base, ISA_PREFIX + isa_name())


def use_isa_cache_dir() -> str:
    r"""Points ``TORCHINDUCTOR_CACHE_DIR`` at :func:`isa_cache_dir` for the
    rest of the process (and the processes it starts); returns the folder."""
    folder = isa_cache_dir()
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = folder
    return folder


def env_enabled() -> bool:
    r"""Whether ``FEDGRAPH_COMPILE`` allows compiled kernels (not ``0``)."""
    return os.environ.get("FEDGRAPH_COMPILE", "1") != "0"


class KernelSet:
    r"""The three compiled kernels of one distance, with eager fallbacks.

    Args:
        namespace (dict): the owning module's ``globals()``, holding
            ``_KERNELS`` and ``_DISABLED``.
        label (str): the kernel's name in the warning (``"L1"``).
        fallback_name (str): what the fallback is, for the warning.
        kernels (dict): ``forward`` / ``grad_query`` / ``grad_cand`` eager
            functions, compiled on first use.
        fallbacks (dict): the same names mapped to the functions used when
            compilation is off or failed.
        block_bytes (int, optional): candidate block size in bytes, or
            :obj:`None` for one block. (default: :obj:`None`)
        names (Sequence[str], optional): the kernels' names, for an
            autograd function other than the three-kernel ones here.
            (default: :data:`KERNEL_NAMES`)
    """

    def __init__(
        self,
        namespace: dict[str, Any],
        label: str,
        fallback_name: str,
        kernels: dict[str, Kernel],
        fallbacks: dict[str, Kernel],
        block_bytes: int | None = None,
        names: Sequence[str] = KERNEL_NAMES,
    ) -> None:
        for name, table in (("kernels", kernels), ("fallbacks", fallbacks)):
            if set(table) != set(names):
                raise ValueError(
                    f"`{name}` must map exactly {tuple(names)} (got {sorted(table)})"
                )
        self.namespace = namespace
        self.label = label
        self.fallback_name = fallback_name
        self.kernels = kernels
        self.fallbacks = fallbacks
        self.block_bytes = block_bytes
        namespace.setdefault("_KERNELS", None)
        namespace.setdefault("_DISABLED", False)

    def enabled(self) -> bool:
        r"""Compiled kernels are used: ``FEDGRAPH_COMPILE`` is not ``0`` and
        no earlier compilation failed."""
        return not self.namespace["_DISABLED"] and env_enabled()

    def blocks(self, cand: Tensor) -> list[slice]:
        r"""Near-equal row slices of ``cand`` of at most ``block_bytes``."""
        c = cand.size(0)
        if self.block_bytes is None or c == 0:
            return [slice(0, c)]
        rows = max(1, self.block_bytes // max(1, cand[0].nbytes))
        n = -(-c // rows)
        step = -(-c // n)
        return [slice(i, min(i + step, c)) for i in range(0, c, step)]

    def _compiled(self) -> dict[str, Kernel]:
        if self.namespace["_KERNELS"] is None:
            logging.getLogger("fedgraph").info(
                "compiling the %s kernels (torch.compile, once per machine: "
                "seconds on an idle CPU, minutes on a busy one, then loaded from "
                "TorchInductor's cache; FEDGRAPH_COMPILE=0 skips it)",
                self.label,
            )
            use_isa_cache_dir()
            self.namespace["_KERNELS"] = {
                name: torch.compile(fn, dynamic=True)
                for name, fn in self.kernels.items()
            }
        return self.namespace["_KERNELS"]

    def __call__(self, name: str, *args: Tensor) -> Tensor:
        r"""Runs kernel ``name`` compiled if enabled, else (or after a
        failure, with a warning) its fallback."""
        if self.enabled():
            try:
                return self._compiled()[name](*args)
            except Exception as exc:  # compiler missing or failing: fall back
                self.namespace["_DISABLED"] = True
                warnings.warn(
                    f"Compiled {self.label} kernel unavailable "
                    f"({type(exc).__name__}: {exc}); falling back to "
                    f"{self.fallback_name}, which is slower but exact",
                    stacklevel=4,
                )
        return self.fallbacks[name](*args)


class FusedDistance(torch.autograd.Function):
    r"""``[B, C]`` distances of a :class:`KernelSet`, with its hand-written
    gradients: ``FusedDistance.apply(kernel_set, query, cand)``."""

    @staticmethod
    def forward(ctx: Any, kernels: KernelSet, query: Tensor, cand: Tensor) -> Tensor:
        ctx.kernels = kernels
        ctx.save_for_backward(query, cand)
        blocks = kernels.blocks(cand)
        if len(blocks) == 1:
            return kernels("forward", query, cand)
        return torch.cat([kernels("forward", query, cand[s]) for s in blocks], 1)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[None, Tensor | None, Tensor | None]:
        query, cand = ctx.saved_tensors
        kernels, blocks = ctx.kernels, ctx.kernels.blocks(cand)
        parts = [(grad[:, s].contiguous(), cand[s]) for s in blocks]
        gq = gc = None
        if ctx.needs_input_grad[1]:
            gq = kernels("grad_query", parts[0][0], query, parts[0][1])
            for g, c in parts[1:]:
                gq = gq + kernels("grad_query", g, query, c)
        if ctx.needs_input_grad[2]:
            gc = torch.cat([kernels("grad_cand", g, query, c) for g, c in parts])
        return None, gq, gc


class GroupedDistance(torch.autograd.Function):
    r"""``[G, B, C]`` distances of ``G`` independent query/candidate pairs
    with a :class:`KernelSet` of grouped kernels (one block):
    ``GroupedDistance.apply(kernel_set, query, cand)``."""

    @staticmethod
    def forward(ctx: Any, kernels: KernelSet, query: Tensor, cand: Tensor) -> Tensor:
        ctx.kernels = kernels
        ctx.save_for_backward(query, cand)
        return kernels("forward", query, cand)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[None, Tensor | None, Tensor | None]:
        query, cand = ctx.saved_tensors
        grad = grad.contiguous()
        gq = gc = None
        if ctx.needs_input_grad[1]:
            gq = ctx.kernels("grad_query", grad, query, cand)
        if ctx.needs_input_grad[2]:
            gc = ctx.kernels("grad_cand", grad, query, cand)
        return None, gq, gc


class GatheredDistance(torch.autograd.Function):
    r"""``[B, K]`` distances between each query ``b`` and the rows
    ``table[index[b, k]]``, never materialising ``[B, K, d]``:
    ``GatheredDistance.apply(kernel_set, query, table, index)``. The set's
    kernels take ``(query, table, index)`` (``forward``) and ``(grad, query,
    table, index)`` (``grad_query``; ``grad_cand`` returns the dense
    ``[N, d]`` gradient of ``table``)."""

    @staticmethod
    def forward(
        ctx: Any, kernels: KernelSet, query: Tensor, table: Tensor, index: Tensor
    ) -> Tensor:
        ctx.kernels = kernels
        ctx.save_for_backward(query, table, index)
        return kernels("forward", query, table, index)

    @staticmethod
    def backward(
        ctx: Any, grad: Tensor
    ) -> tuple[None, Tensor | None, Tensor | None, None]:
        query, table, index = ctx.saved_tensors
        grad = grad.contiguous()
        gq = gt = None
        if ctx.needs_input_grad[1]:
            gq = ctx.kernels("grad_query", grad, query, table, index)
        if ctx.needs_input_grad[2]:
            gt = ctx.kernels("grad_cand", grad, query, table, index)
        return None, gq, gt, None


def check_pair(query: Tensor, cand: Tensor, what: str = "d") -> None:
    r"""Raises :class:`ValueError` unless ``query`` is ``[B, d]`` and ``cand``
    ``[C, d]`` with the same ``d``."""
    if query.dim() != 2 or cand.dim() != 2 or query.size(1) != cand.size(1):
        raise ValueError(
            f"`query` and `cand` must be [B, {what}] and [C, {what}] with the "
            f"same {what} (got {tuple(query.shape)} and {tuple(cand.shape)})"
        )


__all__ = [
    "KernelSet",
    "FusedDistance",
    "GatheredDistance",
    "GroupedDistance",
    "isa_name",
    "isa_cache_dir",
    "use_isa_cache_dir",
    "env_enabled",
    "check_pair",
]
