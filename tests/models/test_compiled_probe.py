r"""The probe of fedgraph.models.kge._compiled: a compiled kernel that gives
other values than its eager fallback is never used (the set warns and falls
back), and the real hazard it guards against, a TorchInductor cache written
under AVX-512 and read under AVX2, gives correct RotatE distances."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

from fedgraph.models.kge import _compiled, l1, modulus
from fedgraph.models.kge._compiled import (
    KernelMismatch,
    KernelSet,
    gathered_probe,
    grouped_probe,
    pair_probe,
    verify,
)


def _half_coordinates(query, cand):
    # what a kernel built for a vector twice as wide does with its loop step:
    # only every other block of coordinates is summed
    d_re, d_im = modulus._diff(query, cand)
    return torch.sqrt(d_re * d_re + d_im * d_im)[..., ::2].sum(-1)


def test_probe_shapes():
    gen = torch.Generator().manual_seed(0)
    cpu = torch.device("cpu")
    assert [tuple(t.shape) for t in pair_probe(cpu, gen)] == [(3, 74), (5, 74)]
    assert [tuple(t.shape) for t in grouped_probe(cpu, gen)] == [(2, 3, 74), (2, 5, 74)]
    q, table, index = gathered_probe(cpu, gen)
    assert (q.shape, table.shape, index.shape) == ((3, 74), (7, 74), (3, 5))
    assert sorted(index.unique().tolist()) == list(range(7))


def test_verify_passes_the_true_kernels_and_names_a_wrong_one():
    cpu = torch.device("cpu")
    names = ("forward", "grad_query", "grad_cand")
    eager = {n: getattr(modulus, f"_{n}") for n in names}
    verify(eager, eager, pair_probe, cpu)  # identical kernels
    l1_eager = {n: getattr(l1, f"_gather_{n}") for n in ("forward", "grad_query")}
    verify(l1_eager, l1_eager, gathered_probe, cpu)
    wrong = {**eager, "forward": _half_coordinates}
    with pytest.raises(KernelMismatch, match="compiled `forward` kernel disagrees"):
        verify(wrong, eager, pair_probe, cpu)
    # a wrong gradient kernel is caught too (its grad is shaped like the forward)
    flipped = {**eager, "grad_cand": lambda g, q, c: -modulus._grad_cand(g, q, c)}
    with pytest.raises(KernelMismatch, match="`grad_cand`"):
        verify(flipped, eager, pair_probe, cpu)


def test_a_set_whose_compiled_kernel_disagrees_warns_and_falls_back(monkeypatch):
    # torch.compile returns the function itself: the "compiled" forward is the
    # wrong one, as a stale cache entry would be
    monkeypatch.setattr(_compiled.torch, "compile", lambda fn, dynamic: fn)
    state: dict[str, object] = {}
    kernels = {"forward": _half_coordinates, "grad_query": modulus._grad_query,
               "grad_cand": modulus._grad_cand}  # fmt: skip
    fallbacks = {"forward": modulus._forward, "grad_query": modulus._grad_query,
                 "grad_cand": modulus._grad_cand}  # fmt: skip
    kernel_set = KernelSet(state, "modulus", "the eager broadcast", kernels,
                           fallbacks, probe=pair_probe)  # fmt: skip
    q, x = torch.randn(4, 40), torch.randn(6, 40)
    with pytest.warns(UserWarning, match="KernelMismatch.*falling back to the eager"):
        got = kernel_set("forward", q, x)
    torch.testing.assert_close(got, modulus._forward(q, x))
    assert state["_DISABLED"] is True and state["_KERNELS"] is None
    # without a probe the same set trusts the compiler and returns wrong values
    trusting = KernelSet({}, "modulus", "the eager broadcast", kernels, fallbacks)
    assert not torch.allclose(trusting("forward", q, x), modulus._forward(q, x))


_CHILD = textwrap.dedent(
    """
    import warnings
    import torch
    from fedgraph.models.kge.modulus import modulus_distance
    gen = torch.Generator().manual_seed(0)
    q, x = torch.randn(8, 512, generator=gen), torch.randn(30, 512, generator=gen)
    re = lambda t: t[:, :256]
    im = lambda t: t[:, 256:]
    ref = ((re(q)[:, None] - re(x)[None]) ** 2 + (im(q)[:, None] - im(x)[None]) ** 2)
    ref = ref.sqrt().sum(-1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = modulus_distance(q, x)
    refused = [w for w in caught if "kernel unavailable" in str(w.message)]
    print(torch.backends.cpu.get_cpu_capability(), len(refused),
          float((got - ref).abs().max()))
    """
)


@pytest.mark.slow
@pytest.mark.skipif(
    torch.backends.cpu.get_cpu_capability() != "AVX512",
    reason="needs a CPU with AVX-512 to write the cache that AVX2 then misreads",
)
def test_an_avx512_cache_read_under_avx2_still_gives_the_true_distances(tmp_path):
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "cache"),
           "OMP_NUM_THREADS": "1", "FEDGRAPH_COMPILE": "1"}  # fmt: skip
    env.pop("ATEN_CPU_CAPABILITY", None)

    def child(**extra: str) -> list[str]:
        out = subprocess.run([sys.executable, "-c", _CHILD], env={**env, **extra},
                             capture_output=True, text=True, timeout=600, check=True)  # fmt: skip
        return out.stdout.split()

    isa, warned, error = child()  # writes the cache under AVX-512
    assert (isa, warned) == ("AVX512", "0") and float(error) < 1e-3
    isa, warned, error = child(ATEN_CPU_CAPABILITY="avx2")  # reads it under AVX2
    # the cached kernel is refused (one warning) and the distances are exact
    assert (isa, warned) == ("AVX2", "1") and float(error) < 1e-3
