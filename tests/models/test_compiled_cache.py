r"""fedgraph.models.kge._compiled keeps one TorchInductor cache per CPU
instruction set (a subfolder of ``TORCHINDUCTOR_CACHE_DIR`` named after it): a
cache written under AVX-512 and read under AVX2 gives the true RotatE
distances, where one shared cache gave about half of them, a cache written
under AVX2 and read under AVX-512 gives the true L1 distances and gradients,
where one shared cache aborted the process, and a process under another
instruction set never loads the kernels another one compiled."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

from fedgraph.models.kge import _compiled

# ISA TorchInductor picks -> the start of its cache subfolder's name (a CPU
# with more extensions adds them: "isa-avx512-avx512_vnni" under AVX-512 VNNI)
NAMES = {"AVX512": "isa-avx512", "AVX2": "isa-avx2"}


def test_the_cache_folder_is_named_after_the_instruction_set(monkeypatch, tmp_path):
    monkeypatch.setattr(_compiled, "isa_name", lambda: "avx2")
    base = str(tmp_path / "cache")
    assert _compiled.isa_cache_dir(base) == os.path.join(base, "isa-avx2")
    # a folder a parent process already tagged (another instruction set) is
    # replaced, not nested
    tagged = os.path.join(base, "isa-avx512")
    assert _compiled.isa_cache_dir(tagged) == os.path.join(base, "isa-avx2")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", base)
    assert _compiled.use_isa_cache_dir() == os.path.join(base, "isa-avx2")
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == os.path.join(base, "isa-avx2")
    assert _compiled.use_isa_cache_dir() == os.path.join(base, "isa-avx2")
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR")
    from torch._inductor.runtime.cache_dir_utils import default_cache_dir

    assert _compiled.isa_cache_dir() == os.path.join(default_cache_dir(), "isa-avx2")


def test_the_instruction_set_name(monkeypatch):
    import torch._inductor.cpu_vec_isa as isa

    expected = NAMES.get(torch.backends.cpu.get_cpu_capability())
    if expected is not None:
        name = _compiled.ISA_PREFIX + _compiled.isa_name()
        assert name == expected or name.startswith(expected + "-"), name
    monkeypatch.setattr(isa, "pick_vec_isa", lambda: isa.VecAVX512VNNI())
    assert _compiled.isa_name() == "avx512-avx512_vnni"  # "avx512 avx512_vnni"
    monkeypatch.setattr(isa, "pick_vec_isa", lambda: isa.invalid_vec_isa)
    assert _compiled.isa_name() == "none"

    def broken():
        raise RuntimeError("no such helper")

    monkeypatch.setattr(isa, "pick_vec_isa", broken)
    assert _compiled.isa_name() == "unknown"


_SCALAR_CHILD = textwrap.dedent(
    """
    import json, os, torch
    from torch._dynamo.utils import counters
    from fedgraph.models.kge import l1
    gen = torch.Generator().manual_seed(0)
    q, x = torch.randn(9, 70, generator=gen), torch.randn(40, 70, generator=gen)
    error = (l1.l1_distance(q, x) - torch.cdist(q, x, p=1.0)).abs().max().item()
    print(json.dumps({"error": error, "hit": counters["inductor"]["fxgraph_cache_hit"],
                      "dir": os.environ["TORCHINDUCTOR_CACHE_DIR"]}))
    """
)


@pytest.mark.slow
@pytest.mark.skipif(
    torch.backends.cpu.get_cpu_capability() not in NAMES,
    reason="needs an x86 CPU with AVX2 or AVX-512",
)
def test_another_instruction_set_never_loads_these_kernels(tmp_path):
    # Scalar code (ATEN_CPU_CAPABILITY=default) and the CPU's own vector code
    # in one TORCHINDUCTOR_CACHE_DIR: each process compiles its own kernel
    # and a later process of the same instruction set loads it from disk.
    # One shared folder served the scalar kernel to the vector process.
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path),
           "OMP_NUM_THREADS": "1", "FEDGRAPH_COMPILE": "1"}  # fmt: skip
    env.pop("ATEN_CPU_CAPABILITY", None)
    seen = []
    for isa in ("default", None, "default"):
        extra = {} if isa is None else {"ATEN_CPU_CAPABILITY": isa}
        out = subprocess.run([sys.executable, "-c", _SCALAR_CHILD], env={**env, **extra},
                             capture_output=True, text=True, timeout=600)  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
        seen.append(json.loads(out.stdout.splitlines()[-1]))
    own = _compiled.ISA_PREFIX + _compiled.isa_name()
    assert own.startswith(NAMES[torch.backends.cpu.get_cpu_capability()])
    assert [s["hit"] for s in seen] == [0, 0, 1]
    assert [os.path.basename(s["dir"]) for s in seen] == ["isa-none", own, "isa-none"]
    assert max(s["error"] for s in seen) < 1e-3


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


@pytest.mark.slow  # two processes, one compiling: about 20 s on an idle CPU
def test_a_second_process_loads_the_kernel_from_the_cache(tmp_path):
    # compile once per machine: the second process finds the first one's
    # kernel in TorchInductor's on-disk cache instead of compiling it
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path),
           "OMP_NUM_THREADS": "1", "FEDGRAPH_COMPILE": "1"}  # fmt: skip
    seen = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", _SCALAR_CHILD], env=env,
                             capture_output=True, text=True, timeout=600)  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
        seen.append(json.loads(out.stdout.splitlines()[-1]))
    assert [s["hit"] for s in seen] == [0, 1]
    assert seen[0]["dir"] == seen[1]["dir"] == _compiled.isa_cache_dir(str(tmp_path))
    assert max(s["error"] for s in seen) < 1e-3
