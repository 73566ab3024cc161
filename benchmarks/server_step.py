r"""Milliseconds of one server step on an entity table: FedE's write of the
aggregated rows against the server optimisers' steps (FedAvgM, FedAdam,
FedYogi), each built from the algorithm registry with its default settings.

A step is ``strategy.server_update(round, "entity", aggregated, index)`` with
every row received (``--fraction`` of the rows, drawn once with seed 0, for a
round where some entities are held by nobody who trained); the table is
FB15k-237's by default (14,541 × 256). Reports the median of ``--repeat``
steps after two warm-up steps. Example (the figure of
``docs/papers/server-optimisers.md``)::

    python benchmarks/server_step.py --threads 2
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import torch

from fedgraph.federated.algorithms import get
from fedgraph.federated.kge.fedadam import FedAdam
from fedgraph.federated.kge.fedavgm import FedAvgM
from fedgraph.federated.kge.fede import FedE
from fedgraph.federated.kge.fedyogi import FedYogi

METHODS = {"fede": FedE, "fedavgm": FedAvgM, "fedadam": FedAdam, "fedyogi": FedYogi}


def step_ms(name: str, rows: int, dim: int, fraction: float, repeat: int) -> float:
    r"""The median milliseconds of ``repeat`` server steps of ``name``."""
    defaults = dataclasses.asdict(get(name, "kge").settings())
    strategy = METHODS[name](rows, dim, init_range=0.04, **defaults)
    gen = torch.Generator().manual_seed(0)
    count = max(1, round(fraction * rows))
    index = torch.randperm(rows, generator=gen)[:count].sort().values
    aggregated = strategy.table[index] + 1e-3 * torch.randn(count, dim, generator=gen)
    times = []
    for r in range(repeat + 2):
        start = time.perf_counter()
        strategy.server_update(r + 1, "entity", aggregated, index)
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times[2:])


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=14541)
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--fraction", type=float, default=1.0)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--threads", type=int, default=0)
    args = p.parse_args(argv)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    print(f"table {args.rows} x {args.dim}, {args.fraction:.0%} of the rows received, "
          f"{torch.get_num_threads()} threads")  # fmt: skip
    for name in METHODS:
        ms = step_ms(name, args.rows, args.dim, args.fraction, args.repeat)
        print(f"{name:8s} {ms:8.1f} ms")


if __name__ == "__main__":
    main()
