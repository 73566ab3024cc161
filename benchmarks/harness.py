r"""What every benchmark records beside its numbers: the machine it ran on,
the load beside it (a shared machine slows a measurement down), and the
timing itself.

Import it from a script in this folder (``python benchmarks/NAME.py`` puts
the folder on ``sys.path``)::

    from harness import load_average, machine, timed

    seconds = timed(step, repeat=20, warmup=3)
    doc = {"seconds_per_step": min(seconds), **machine()}
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def processor() -> str:
    r"""The CPU's model name (``/proc/cpuinfo`` on Linux, else what
    :mod:`platform` knows)."""
    info = Path("/proc/cpuinfo")
    if info.is_file():
        for line in info.read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def load_average() -> list[float]:
    r"""The 1, 5 and 15 minute load averages now."""
    return [round(x, 2) for x in os.getloadavg()]


def machine() -> dict[str, Any]:
    r"""The machine and software a measurement ran on: CPU model and count,
    torch's intra-op threads, the Python, torch and OS versions, and the load
    average when it is called."""
    import torch

    return {
        "processor": processor(),
        "cpus": os.cpu_count(),
        "threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "platform": platform.platform(),
        "load_average": load_average(),
    }


def timed(fn: Callable[[], Any], *, repeat: int = 5, warmup: int = 1) -> list[float]:
    r"""Wall seconds of each of ``repeat`` calls of ``fn``, after ``warmup``
    calls left out (caches, lazy initialisation, compilation)."""
    if repeat < 1 or warmup < 0:
        raise ValueError(
            f"`repeat` must be positive and `warmup` non-negative "
            f"(got {repeat} and {warmup})"
        )
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


__all__ = ["processor", "load_average", "machine", "timed"]
