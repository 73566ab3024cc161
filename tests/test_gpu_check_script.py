r"""benchmarks/gpu_pack.sh and benchmarks/gpu_check.sh, rehearsed on the CPU:
the inputs packed and refused when missing, and ``gpu_check.sh --cpu`` run end
to end on a tiny partition with torch-scatter, Flower and geomloss hidden,
writing its small result files."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
OUTPUTS = ["fede-r3.json", "fede-r3.log", "speed-device-sequential.json",
           "speed-host-batched.json", "speed-host-sequential.json", "summary.txt",
           "tests.txt"]  # fmt: skip

needs_sh = pytest.mark.skipif(
    shutil.which("sh") is None or shutil.which("timeout") is None,
    reason="needs a POSIX sh and coreutils' timeout",
)


def _write_partition(root: Path) -> None:
    # FedLU's layout: clientK/{train,valid,test}.txt, labels shared by clients
    rng = random.Random(0)
    for c in range(3):  # 'R3': three clients
        d = root / f"client{c}"
        d.mkdir(parents=True)
        ents = [f"e{i}" for i in range(c * 4, c * 4 + 12)]
        for split, n in (("train", 60), ("valid", 8), ("test", 8)):
            lines = {f"{rng.choice(ents)}\tr{c}_{rng.randrange(3)}\t{rng.choice(ents)}"
                     for _ in range(n)}  # fmt: skip
            (d / f"{split}.txt").write_text("\n".join(sorted(lines)) + "\n")


def _sh(script: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", f"benchmarks/{script}", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=900)  # fmt: skip


@needs_sh
def test_pack_refuses_a_missing_partition(tmp_path):
    env = {**os.environ, "FEDGRAPH_DATA": str(tmp_path)}
    out = _sh("gpu_pack.sh", "--out", str(tmp_path / "pack"), env=env)
    assert out.returncode == 2
    assert out.stderr == (f"gpu_pack.sh: error: {tmp_path}/fedlu-fb15k-237/R3: no "
                          "federated partition folder (client0/ missing)\n")  # fmt: skip
    assert not (tmp_path / "pack" / "inputs.tar.gz").exists()
    out = _sh("gpu_check.sh", "--inputs", str(tmp_path / "none.tgz"), env=env)
    assert out.returncode == 2
    assert out.stderr == (f"gpu_check.sh: error: {tmp_path}/none.tgz not found "
                          "(run benchmarks/gpu_pack.sh first)\n")  # fmt: skip


@pytest.mark.slow
@needs_sh
def test_the_gpu_check_rehearsed_on_the_cpu(tmp_path):
    _write_partition(tmp_path / "data" / "fedlu-fb15k-237" / "R3")
    env = {**os.environ, "FEDGRAPH_DATA": str(tmp_path / "data"), "PYTHON": sys.executable,
           "OUT": str(tmp_path / "out"), "OMP_NUM_THREADS": "1",
           "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor"),
           # a loaded CPU starts Python slowly: the GPU's limits would cut it off
           "TESTS_SECONDS": "600", "SPEED_SECONDS": "600", "RUN_SECONDS": "600"}  # fmt: skip
    pack = tmp_path / "pack"
    out = _sh("gpu_pack.sh", "--out", str(pack), env=env)
    assert out.returncode == 0, out.stderr
    with tarfile.open(pack / "inputs.tar.gz") as tar:
        assert sorted(n for n in tar.getnames() if n.endswith(".txt")) == sorted(
            f"R3/client{c}/{s}.txt"
            for c in range(3)
            for s in ("test", "train", "valid")
        )
    out = _sh("gpu_check.sh", "--cpu", "--inputs", str(pack / "inputs.tar.gz"), env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == OUTPUTS
    summary = (tmp_path / "out" / "summary.txt").read_text()
    for name in ("tests", "speed host-batched", "speed host-sequential",
                 "speed device-sequential", "fede r3"):  # fmt: skip
        assert f"\n{name}: exit 0 in " in summary
    assert summary.endswith("status: 0\n")
    # torch-scatter hidden: FedE's entity sums took PyG's scatter
    assert "torch_scatter could not be imported" in summary
    # the test files are collected without torch-scatter, Flower or geomloss
    tests = (tmp_path / "out" / "tests.txt").read_text()
    assert re.search(r"\n\d+ tests collected in ", tests), tests
    assert "ModuleNotFoundError" not in tests and "\nERROR" not in tests
    speed = json.loads((tmp_path / "out" / "speed-host-batched.json").read_text())
    assert (speed["device"], speed["local_training"]) == ("cpu", "batched")
    results = json.loads((tmp_path / "out" / "fede-r3.json").read_text())
    assert len(results["history"]) == 2
