r"""Speed check of the KGE kernels against recorded figures.

Times, on fixed synthetic inputs and one thread (by default), the kernels a
federated KGE run spends its time in:

- ``transe_step``: ten training steps of TransE's L1 distances of a batch
  against its shared negatives (``[1024, 256]`` by ``[256, 256]``), forward
  and backward;
- ``rotate_step``: ten steps of RotatE's modulus distances of the same shapes,
  forward and backward;
- ``transe_validation`` / ``rotate_validation``: one filtered validation pass
  (head and tail) of 2,000 triples of a fixed random graph of 3,000 entities.

Each kernel takes about 0.1–0.2 s on one thread of a quiet 2-core machine;
there, four runs in a row spread by 4–13 % per kernel (fastest to slowest),
within the 15 % tolerance.

Each figure is the fastest of ``--repeat`` calls after ``--warmup`` left out
(compilation, caches): the least disturbed by other work on the machine. The
figures are compared with those recorded in ``speed_check.json`` beside this
script; a kernel more than ``--tolerance`` (15 %) slower is a regression and
the script exits with 1. ``--record`` writes this machine's figures there
instead. The machine, threads, torch version and load average are recorded
with the figures; figures from another machine are compared all the same,
with a note (they are not comparable). ``--record`` refuses a busy machine
(a 1-minute load average at or above its CPU count; ``--busy-ok`` records
anyway): figures taken under load are slower than the kernels are, and a
slowdown measured against them goes unflagged. A comparison on a busy
machine, or against figures recorded on one, says so.

Usage::

    python benchmarks/speed_check.py             # compare, exit 1 on a regression
    python benchmarks/speed_check.py --record    # record this machine's figures
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import load_average, machine, timed

FIGURES = Path(__file__).with_name("speed_check.json")
#: Training steps per timed call of a ``*_step`` kernel (one step takes about
#: 10 ms on one thread, short enough for timer and scheduler noise to show).
STEPS = 10
#: Triples of one validation pass (head and tail: twice as many queries).
VALIDATION_TRIPLES = 2000
#: Keys of machine() that must match for figures to be comparable.
SAME_MACHINE = ("processor", "threads", "torch")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--figures", type=Path, default=FIGURES,
                   help="recorded figures (default: speed_check.json here)")  # fmt: skip
    p.add_argument("--record", action="store_true",
                   help="write this machine's figures to --figures instead of comparing")  # fmt: skip
    p.add_argument("--tolerance", type=float, default=0.15,
                   help="slowdown flagged as a regression (default: 0.15)")  # fmt: skip
    p.add_argument("--repeat", type=int, default=7, help="timed calls (default: 7)")
    p.add_argument("--warmup", type=int, default=2, help="untimed calls (default: 2)")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default: 1)")
    p.add_argument("--only", default="",
                   help="comma list of kernels to time (default: all)")  # fmt: skip
    p.add_argument("--busy-ok", action="store_true",
                   help="record even on a busy machine (load average >= CPUs)")  # fmt: skip
    p.add_argument("--out", type=Path, default=None,
                   help="also write the comparison as JSON here")  # fmt: skip
    return p


def _step(model: str) -> Callable[[], Any]:
    import torch

    from fedgraph.models.kge.l1 import l1_distance
    from fedgraph.models.kge.modulus import modulus_distance

    distance = l1_distance if model == "transe" else modulus_distance
    gen = torch.Generator().manual_seed(0)
    query = torch.randn(1024, 256, generator=gen, requires_grad=True)
    cand = torch.randn(256, 256, generator=gen, requires_grad=True)
    grad = torch.randn(1024, 256, generator=gen)

    def step() -> None:
        for _ in range(STEPS):
            torch.autograd.grad((distance(query, cand) * grad).sum(), (query, cand))

    return step


def _validation(model: str) -> Callable[[], Any]:
    import torch

    from fedgraph.eval.ranking import TripleFilter, rank_triples
    from fedgraph.models import resolve_model

    entities, relations = 3000, 20
    gen = torch.Generator().manual_seed(0)
    triples = torch.stack(
        [
            torch.randint(entities, (20000,), generator=gen),
            torch.randint(relations, (20000,), generator=gen),
            torch.randint(entities, (20000,), generator=gen),
        ],
        1,
    )
    torch.manual_seed(0)
    scorer = resolve_model(model, entities, relations, 128, gamma=9.0)
    flt = TripleFilter(triples, entities, relations)
    queries = triples[:VALIDATION_TRIPLES]

    def validation() -> None:
        with torch.no_grad():
            rank_triples(scorer, queries, filter=flt, batch_size=512)

    return validation


KERNELS: dict[str, Callable[[], Callable[[], Any]]] = {
    "transe_step": lambda: _step("transe"),
    "rotate_step": lambda: _step("rotate"),
    "transe_validation": lambda: _validation("transe"),
    "rotate_validation": lambda: _validation("rotate"),
}


def _selected(only: str) -> list[str]:
    names = [n for n in only.split(",") if n] or list(KERNELS)
    unknown = [n for n in names if n not in KERNELS]
    if unknown:
        raise ValueError(
            f"`--only` names unknown kernels {unknown} (choices: {list(KERNELS)})"
        )
    return names


def measure(args: argparse.Namespace) -> dict[str, float]:
    r"""Seconds of each selected kernel: the fastest of ``args.repeat``
    calls after ``args.warmup``."""
    import torch

    torch.set_num_threads(args.threads)
    return {
        name: min(timed(KERNELS[name](), repeat=args.repeat, warmup=args.warmup))
        for name in _selected(args.only)
    }


def compare(
    seconds: dict[str, float], recorded: dict[str, Any], tolerance: float
) -> dict[str, Any]:
    r"""Each kernel's time against its recorded one: ``ratio`` = now /
    recorded, ``regression`` when ``ratio > 1 + tolerance``; kernels without
    a recorded figure are listed under ``unrecorded``."""
    figures = recorded.get("seconds", {})
    rows, unrecorded = {}, []
    for name, now in seconds.items():
        if name not in figures:
            unrecorded.append(name)
            continue
        ratio = now / figures[name]
        rows[name] = {"seconds": now, "recorded": figures[name], "ratio": ratio,
                      "regression": ratio > 1 + tolerance}  # fmt: skip
    return {"kernels": rows, "unrecorded": unrecorded, "tolerance": tolerance}


def _load(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(f"{path}: no recorded figures (run with --record)") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("seconds"), dict):
        raise ValueError(f"{path}: no `seconds` table of recorded figures")
    return doc


def busy(info: dict[str, Any]) -> bool:
    r"""Whether a :func:`~harness.machine` record was taken on a busy machine:
    a 1-minute load average at or above its CPU count."""
    load, cpus = info.get("load_average") or [0.0], info.get("cpus") or 1
    return load[0] >= cpus


def _report(result: dict[str, Any], recorded: dict[str, Any], now: dict) -> None:
    then = recorded.get("machine", {})
    differ = [k for k in SAME_MACHINE if then.get(k) != now[k]]
    if differ:
        print(f"note: figures recorded with another {', '.join(differ)} "
              f"({then}); not comparable")  # fmt: skip
    if busy(then):
        print(f"note: figures recorded on a busy machine (load average "
              f"{then['load_average'][0]} on {then['cpus']} CPUs): a slowdown "
              "against them goes unflagged; record again on a quiet one")  # fmt: skip
    if busy(now):
        print(f"note: this machine is busy (load average {now['load_average'][0]} "
              f"on {now['cpus']} CPUs): a slowdown may be the load's")  # fmt: skip
    for name, row in result["kernels"].items():
        flag = "REGRESSION" if row["regression"] else "ok"
        print(f"{name:20s} {row['seconds'] * 1e3:9.2f} ms  recorded "
              f"{row['recorded'] * 1e3:9.2f} ms  x{row['ratio']:.2f}  {flag}")  # fmt: skip
    for name in result["unrecorded"]:
        print(f"{name:20s} no recorded figure")


def run(args: argparse.Namespace) -> int:
    r"""Records or compares; returns the exit code (1: a regression)."""
    from fedgraph.data.io import atomic_write_json

    if args.tolerance < 0:
        raise ValueError(f"`--tolerance` must be >= 0 (got {args.tolerance})")
    recorded = None if args.record else _load(args.figures)
    if args.record and not args.busy_ok:
        now = {"load_average": load_average(), "cpus": os.cpu_count()}
        if busy(now):
            raise ValueError(
                f"the machine is busy (load average {now['load_average'][0]} on "
                f"{now['cpus']} CPUs): figures recorded now would hide regressions; "
                "record on a quiet machine, or pass --busy-ok"
            )
    seconds = measure(args)
    info = machine()
    if args.record:
        doc = {"seconds": seconds, "machine": info, "repeat": args.repeat,
               "command": "python benchmarks/speed_check.py --record"}  # fmt: skip
        atomic_write_json(args.figures, doc)
        print(f"recorded {len(seconds)} figures in {args.figures}")
        return 0
    result = compare(seconds, recorded, args.tolerance)
    _report(result, recorded, info)
    if args.out is not None:
        atomic_write_json(args.out, {**result, "machine": info,
                                     "recorded_machine": recorded.get("machine")})  # fmt: skip
    return 1 if any(r["regression"] for r in result["kernels"].values()) else 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return run(args)
    except ValueError as exc:
        print(f"speed_check.py: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
