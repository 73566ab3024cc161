r"""fedgraph.models.kge._compiled compiles its kernels with the CPU's vector
width in TorchInductor's cache key: a cache written under AVX-512 and read
under AVX2 gives the true RotatE distances, where without the width it gave
about half of them, and a cache written under AVX2 and read under AVX-512
gives the true L1 distances and gradients, where without the width the
process aborted."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

from fedgraph.models.kge import _compiled

# ISA TorchInductor picks -> the vector width compile_options() records
WIDTHS = {"AVX512": 512, "AVX2": 256}


def test_compile_options_name_the_vector_width():
    expected = WIDTHS.get(torch.backends.cpu.get_cpu_capability())
    if expected is None:
        pytest.skip("an x86 CPU with AVX2 or AVX-512 sets the width checked here")
    assert _compiled.compile_options() == {"cpp.simdlen": expected}


def test_compile_options_fall_back_to_the_default(monkeypatch):
    import torch._inductor.cpu_vec_isa as isa

    def broken():
        raise RuntimeError("no such helper")

    monkeypatch.setattr(isa, "pick_vec_isa", broken)
    assert _compiled.compile_options() == {}
    monkeypatch.setattr(isa, "pick_vec_isa", lambda: None)  # no vector ISA
    assert _compiled.compile_options() == {}


_CHILD = textwrap.dedent(
    """
    import torch
    from fedgraph.models.kge import l1
    from fedgraph.models.kge.modulus import modulus_distance
    gen = torch.Generator().manual_seed(0)
    q, x = torch.randn(8, 512, generator=gen), torch.randn(30, 512, generator=gen)
    d_re = q[:, None, :256] - x[None, :, :256]
    d_im = q[:, None, 256:] - x[None, :, 256:]
    error = (modulus_distance(q, x) - (d_re**2 + d_im**2).sqrt().sum(-1)).abs().max()
    # L1 forward and gradients in several candidate blocks (an AVX2 cache read
    # under AVX-512 aborted here)
    l1._KERNEL_SET.block_bytes = 16 * 1024
    q = torch.randn(9, 64, generator=gen, requires_grad=True)
    x = torch.randn(700, 64, generator=gen, requires_grad=True)
    g = torch.randn(9, 700, generator=gen)
    got = torch.autograd.grad((l1.l1_distance(q, x) * g).sum(), (q, x))
    ref = torch.autograd.grad((torch.cdist(q, x, p=1.0) * g).sum(), (q, x))
    error = max([error] + [(a - b).abs().max() for a, b in zip(got, ref)])
    print(torch.backends.cpu.get_cpu_capability(), float(error))
    """
)


@pytest.mark.slow
@pytest.mark.skipif(
    torch.backends.cpu.get_cpu_capability() != "AVX512",
    reason="needs a CPU with AVX-512 to write caches under both instruction sets",
)
@pytest.mark.parametrize("order", [(None, "avx2"), ("avx2", None)])
def test_a_cache_written_under_one_instruction_set_serves_another(tmp_path, order):
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "cache"),
           "OMP_NUM_THREADS": "1", "FEDGRAPH_COMPILE": "1"}  # fmt: skip
    env.pop("ATEN_CPU_CAPABILITY", None)
    seen = []
    for isa in order:  # the first process writes the cache, the second reads it
        extra = {} if isa is None else {"ATEN_CPU_CAPABILITY": isa}  # None: the CPU's
        out = subprocess.run([sys.executable, "-c", _CHILD], env={**env, **extra},
                             capture_output=True, text=True, timeout=600)  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
        capability, error = out.stdout.split()
        seen.append(capability)
        assert float(error) < 1e-3, f"{capability} after {seen}: {error}"
    assert sorted(seen) == ["AVX2", "AVX512"]
