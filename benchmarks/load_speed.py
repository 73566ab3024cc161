r"""Cold and cached load times of registered datasets (JSON on stdout).

A *cold* load parses the raw files and writes the processed cache (an empty
cache folder, ``force_reload``); a *cached* load hashes the raw files (the
cache key) and reads the cache. Each is timed in-process (median of
``--repeats``) and once as a fresh ``python`` process including interpreter
start-up and imports.

Usage::

    FEDGRAPH_DATA=/path/to/datasets python benchmarks/load_speed.py \
        --datasets fb15k-237 --repeats 5 > runs/load_speed.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from harness import machine, timed


def _subprocess(name: str, env: dict[str, str]) -> float:
    code = (
        "import time; t=time.perf_counter(); "
        "from fedgraph.data import load_dataset; "
        f"load_dataset({name!r}); print(time.perf_counter()-t)"
    )
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True
    )
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["fb15k-237"])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    import torch

    torch.set_num_threads(2)
    from fedgraph.data import resolve_dataset

    results = []
    with tempfile.TemporaryDirectory() as cache:
        os.environ["FEDGRAPH_CACHE"] = cache
        env = dict(os.environ)
        for name in args.datasets:
            cls = resolve_dataset(name)
            cold = timed(
                lambda cls=cls: cls(force_reload=True), repeat=args.repeats, warmup=0
            )
            cached = timed(lambda cls=cls: cls(), repeat=args.repeats, warmup=0)
            stats = cls().stats()
            cached_proc = _subprocess(name, env)
            results.append(
                {
                    "dataset": cls.name,
                    "cold_s_median": round(statistics.median(cold), 3),
                    "cold_s_all": [round(x, 3) for x in cold],
                    "cached_s_median": round(statistics.median(cached), 3),
                    "cached_s_all": [round(x, 3) for x in cached],
                    "cached_fresh_process_s": round(cached_proc, 3),
                    "entities": stats.get("entities"),
                    "triples": stats.get("triples"),
                }
            )
    print(
        json.dumps(
            {
                "benchmark": "load_speed",
                "machine": machine(),
                "repeats": args.repeats,
                "results": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
