r"""Wall and CPU time of the commands a docs page asks a new user to run.

Runs every ``fedgraph ...`` line of the page's ```bash blocks, in order, in a
fresh folder (each line as its own process, as a user would type it), twice:
``cold`` with an empty TorchInductor cache (what a first run on a new machine
pays for compiling) and ``warm`` in a second fresh folder with the cache the
first pass left. Records each command's wall time, its CPU time (user +
system, from the child's resource usage) and the machine.

    FEDGRAPH_DATA=/path/to/datasets python benchmarks/docs_times.py \
        docs/getting-started.md --threads 1 --json docs/results/getting-started-times.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BLOCK = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)


def commands(page: Path) -> list[str]:
    r"""The page's ``fedgraph`` command lines, continuation lines joined."""
    out = []
    for body in BLOCK.findall(page.read_text()):
        for line in body.replace("\\\n", " ").splitlines():
            line = line.split(" #")[0].strip()
            if line.startswith("fedgraph "):
                out.append(" ".join(line.split()))
    return out


def run(cmd: str, cwd: Path, env: dict[str, str]) -> dict[str, float]:
    r"""Runs ``cmd`` in ``cwd``; its wall and CPU seconds."""
    argv = [sys.executable, "-m", "fedgraph.cli.main", *shlex.split(cmd)[1:]]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"`{cmd}` failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2)}


def processor() -> str:
    r"""The CPU's model name (``/proc/cpuinfo`` on Linux)."""
    info = Path("/proc/cpuinfo")
    if info.exists():
        for line in info.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def one_pass(cmds: list[str], cache: Path, threads: int) -> list[dict[str, object]]:
    env = {
        **os.environ,
        "TORCHINDUCTOR_CACHE_DIR": str(cache),
        "OMP_NUM_THREADS": str(threads),
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }
    with tempfile.TemporaryDirectory(prefix="fedgraph-docs-times-") as folder:
        return [{"command": c, **run(c, Path(folder), env)} for c in cmds]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("page", type=Path)
    p.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS")
    p.add_argument("--json", type=Path, default=None, help="also write the result here")
    a = p.parse_args()
    cmds = commands(a.page)
    load = list(os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="fedgraph-inductor-") as cache:
        cold = one_pass(cmds, Path(cache), a.threads)
        warm = one_pass(cmds, Path(cache), a.threads)
    out = {
        "page": a.page.as_posix(),
        "threads": a.threads,
        "machine": {
            "processor": processor(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
        },
        "load_average_before": load,
        "load_average_after": list(os.getloadavg()),
        "cold": cold,
        "warm": warm,
    }
    for name in ("cold", "warm"):
        out[f"{name}_total"] = {
            k: round(sum(r[k] for r in out[name]), 1)
            for k in ("wall_seconds", "cpu_seconds")
        }
    text = json.dumps(out, indent=2)
    print(text)
    if a.json is not None:
        a.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
