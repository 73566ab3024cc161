r"""Summarises what ``benchmarks/fede_device_cost.sh`` measured: seconds per
FedE round (round 1, the warm-up, left out of the mean) and per Single /
Entire epoch (all clients, training only), seconds per validation pass, for
each run folder under one or more OUTDIRs, and writes them as JSON
(``--out``, with every FedE round's seconds) and a Markdown table (stdout).

A FedE folder holds ``progress.json`` (every round's train and validation
seconds; the run was stopped with ``--stop-after``); a Single or Entire
folder holds ``results.json`` (its ``seconds_per_round`` is the wall time of
the run's training per epoch, its history the validation seconds). Each
OUTDIR is given as ``LABEL=PATH``, LABEL naming how the runs shared the
device (``alone``, ``4 at once``)::

    python benchmarks/fede_device_cost.py "alone=/tmp/r" \
        "4 at once=/tmp/c" --device "NVIDIA H200" --out docs/results/x.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any


def _validation_seconds(history: list[Any]) -> list[float]:
    r"""Every validation's seconds in a history (federated: one list of
    rounds; baselines: one list per trained model)."""
    flat: list[dict[str, Any]] = []
    for entry in history:
        flat.extend(entry if isinstance(entry, list) else [entry])
    return [float(e["eval_seconds"]) for e in flat if e.get("eval_seconds")]


def summarise_run(folder: Path) -> dict[str, Any] | None:
    r"""One run folder's costs, or :obj:`None` when it holds neither file.
    A federated run is read from its rounds in ``progress.json`` (it may
    hold ``results.json`` too, once finished); a baseline, whose
    ``progress.json`` holds no rounds (each graph's validations, a list per
    graph), from ``results.json``."""
    from fedgraph.runtime.run_record import is_per_graph

    results, progress = folder / "results.json", folder / "progress.json"
    history = json.loads(progress.read_text())["history"] if progress.exists() else []
    if history and not is_per_graph(history):
        train = [float(h["train_seconds"]) for h in history]
        valid = _validation_seconds(history)
        return {
            "run": folder.name,
            "unit": "round",
            "steps": len(train),
            "seconds_per_step": statistics.fmean(
                train[1:] if len(train) > 1 else train
            ),
            "first_step_seconds": train[0],
            "round_seconds": train,
            "seconds_per_validation": statistics.fmean(valid) if valid else None,
            "validations": len(valid),
        }
    if results.exists():
        doc = json.loads(results.read_text())
        valid = _validation_seconds(doc.get("history", []))
        return {
            "run": folder.name,
            "unit": "epoch",
            "steps": int(doc["rounds"]),
            "seconds_per_step": float(doc["seconds_per_round"]),
            "first_step_seconds": None,
            "seconds_per_validation": statistics.fmean(valid) if valid else None,
            "validations": len(valid),
        }
    return None


def summarise(dirs: list[tuple[str, Path]]) -> list[dict[str, Any]]:
    r"""Every run folder under each labelled OUTDIR, in name order."""
    rows = []
    for label, path in dirs:
        if not path.is_dir():
            raise ValueError(f"{path}: not a folder")
        for folder in sorted(p for p in path.iterdir() if p.is_dir()):
            row = summarise_run(folder)
            if row is not None:
                rows.append({"sharing": label, **row})
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    r"""The rows as a Markdown table."""

    def num(x: float | None) -> str:
        return "–" if x is None else f"{x:.2f}"

    lines = [
        "| run | device shared | unit | measured | s per unit | first | s per validation |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['run']} | {r['sharing']} | {r['unit']} | {r['steps']} | "
            f"{num(r['seconds_per_step'])} | {num(r['first_step_seconds'])} | "
            f"{num(r['seconds_per_validation'])} |"
        )
    return "\n".join(lines)


def _labelled(text: str) -> tuple[str, Path]:
    label, sep, path = text.partition("=")
    if not sep or not label or not path:
        raise argparse.ArgumentTypeError(f"expected LABEL=PATH (got {text!r})")
    return label, Path(path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dirs", nargs="+", type=_labelled, metavar="LABEL=PATH")
    p.add_argument("--device", default=None, help="the device's name, recorded")
    p.add_argument("--command", default=None, help="the command that ran, recorded")
    p.add_argument("--out", type=Path, default=None, help="JSON file")
    args = p.parse_args(argv)
    try:
        rows = summarise(args.dirs)
    except ValueError as exc:
        print(f"fede_device_cost.py: error: {exc}", file=sys.stderr)
        return 2
    print(table(rows))
    if args.out is not None:
        from fedgraph.data.io import atomic_write_json

        doc = {"device": args.device, "command": args.command, "runs": rows}
        atomic_write_json(args.out, doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
