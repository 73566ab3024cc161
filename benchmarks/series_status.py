r"""Where the federated runs of ``benchmarks/run_series.sh`` stand, from
their ``progress.json`` (written after every round) and ``results.json``.

    python benchmarks/series_status.py            # runs/fedlu-*
    python benchmarks/series_status.py runs/umls-r10-*

One line per run: rounds done, mean training seconds of the last five rounds,
the last validation MRRs (weighted, %; FedLU's global model after the slash),
the best validation round, the round at which early stopping ends the run
if no later validation beats it, FedLU's distillation switches (the first round
each direction was on, ``g2l``: global→local, ``l2g``: local→global; gated
runs start with both off), and whether the run has finished
(``results.json`` newer than ``progress.json``).

A baseline run (``--algorithm independent`` / ``centralized``) gets one
entry per ``trainerK.pt`` checkpoint: epochs done, mean training seconds per
epoch, the last validation MRRs, the best epoch and, when its
``progress.json`` records the patience, the epoch at which early stopping
ends that trainer if no later validation beats the best.
"""

from __future__ import annotations

import argparse
import glob
import json
from pathlib import Path
from typing import Any


def _mrr(entry: dict[str, Any]) -> str:
    v = entry["valid"]
    text = f"{100 * v['mrr']:.2f}"
    return text + (f"/{100 * v['global_mrr']:.2f}" if "global_mrr" in v else "")


def baseline_status(run: Path) -> str | None:
    r"""One line on a baseline run from its ``trainerK.pt`` checkpoints, or
    ``None`` if it has none."""
    from fedgraph.data.checkpoint import load_checkpoint

    files = sorted(run.glob("trainer*.pt"), key=lambda p: int(p.stem[7:] or 0))
    if not files:
        return None
    progress = run / "progress.json"
    settings = json.loads(progress.read_text())["settings"] if progress.exists() else {}
    settings = {**settings, "rounds_max": settings.get("rounds")}
    parts = []
    for path in files:
        state = load_checkpoint(path, keys=("epoch", "history"))
        epoch, hist = state["epoch"], state["history"]
        text = f"{path.stem} epoch {epoch}, {state['train_seconds'] / max(1, epoch):.0f} s/epoch"
        if hist:
            curve = " ".join(
                f"e{h['epoch']}={100 * h['valid']['mrr']:.2f}" for h in hist[-3:]
            )
            text += f", valid {curve}; best e{state['best_epoch']}={100 * state['best_mrr']:.2f}"
            stop = _earliest_stop(settings, state["best_epoch"])
            if stop is not None and stop > epoch:
                text += f", earliest stop e{stop}"
        parts.append(text)
    line = f"{run.name}: " + "; ".join(parts)
    res = run / "results.json"
    if res.exists() and res.stat().st_mtime >= max(p.stat().st_mtime for p in files):
        with open(res) as f:
            line += f", FINISHED test {100 * json.load(f)['weighted']['mrr']:.2f}"
    return line


def _earliest_stop(settings: dict[str, Any], best: int) -> int | None:
    r"""The round at which early stopping ends the run if no validation
    beats round ``best`` (``patience`` validations every ``eval_every``
    rounds, at most ``rounds_max``); a strategy that reports progress
    otherwise (FedLU) may run longer. :obj:`None` without patience."""
    patience, every = settings.get("patience", 0), settings.get("eval_every", 0)
    if not patience or not every:
        return None
    stop = best + patience * every
    cap = settings.get("rounds_max")
    return min(stop, cap) if cap else stop


def status(run: Path) -> str | None:
    r"""One line on ``run`` (a baseline: :func:`baseline_status`), or
    ``None`` if it has no ``progress.json`` nor ``trainerK.pt``."""
    if any(run.glob("trainer*.pt")):  # a baseline run
        return baseline_status(run)
    progress = run / "progress.json"
    if not progress.exists():
        return None
    with open(progress) as f:
        doc = json.load(f)
    hist, settings = doc["history"], doc.get("settings", {})
    if not hist:
        return f"{run.name}: no round finished"
    done = hist[-1]["round"]
    last = [h["train_seconds"] for h in hist[-5:] if "train_seconds" in h]
    evald = [h for h in hist if "valid" in h]
    parts = [f"{run.name}: round {done}"]
    if last:
        parts.append(f"{sum(last) / len(last):.0f} s/round")
    if evald:
        best = max(evald, key=lambda h: h["valid"]["mrr"])
        curve = " ".join(f"r{h['round']}={_mrr(h)}" for h in evald[-3:])
        parts.append(f"valid {curve}; best r{best['round']}={_mrr(best)}")
        stop = _earliest_stop(settings, best["round"])
        if stop is not None and stop > done:
            parts.append(f"earliest stop r{stop}")
    switched = [
        f"{name} on since r{on[0]}"
        for name, key in (("g2l", "mu_local"), ("l2g", "mu_global"))
        if (on := [h["round"] for h in hist if h.get("train", {}).get(key, 0) > 0])
    ]
    if switched:
        parts.append(", ".join(switched))
    res = run / "results.json"
    if res.exists() and res.stat().st_mtime >= progress.stat().st_mtime:
        with open(res) as f:
            doc = json.load(f)
        parts.append(f"FINISHED test {100 * doc['weighted']['mrr']:.2f}")
    return ", ".join(parts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", help="run folders (default: runs/fedlu-*)")
    args = parser.parse_args(argv)
    paths = args.runs or sorted(glob.glob("runs/fedlu-*"))
    for p in paths:
        line = status(Path(p))
        if line is not None:
            print(line)


if __name__ == "__main__":
    main()
