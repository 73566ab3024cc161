r"""Prints the markdown rows of docs/results.md (issue 7) from docs/results/*.json.

python examples/rdf_results_table.py
"""

from __future__ import annotations

import glob
import json
import statistics

PAPER = {
    "sp": (55.00, 55.44),
    "fedavg": (56.94, 54.12),
    "fedprox": (57.50, 53.38),
    "fedalign": (60.56, 55.17),
    "fedavg-l": (57.94, 54.71),
    "fedprox-l": (57.22, 57.06),
    "fedalign-l": (59.17, 57.65),
}


def _ms(vals: list[float]) -> str:
    if not vals:
        return "not run"
    std = statistics.stdev(vals) if len(vals) > 1 else float("nan")
    return f"{statistics.fmean(vals):.2f} ± {std:.2f} (n={len(vals)})"


def main() -> None:
    for d in ("aifb", "mutag"):
        rs = [
            json.load(open(f))
            for f in sorted(glob.glob(f"docs/results/{d}-centralised-rgcn-*.json"))
        ]
        print(
            f"centralised {d}: {_ms([r['test_accuracy'] for r in rs])}, "
            f"{statistics.fmean(r['wall_seconds'] for r in rs) if rs else 0:.0f} s/seed"
        )
    print(
        "| method | AIFB final, ours | AIFB best round, ours | AIFB, FedAlign "
        "| MUTAG final, ours | MUTAG best round, ours | MUTAG, FedAlign | s / run (AIFB / MUTAG) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for m, paper in PAPER.items():
        cells, secs = [], []
        for d, pub in zip(("aifb", "mutag"), paper, strict=False):
            rs = [
                json.load(open(f))
                for f in sorted(glob.glob(f"docs/results/{d}-{m}-rgcn-*.json"))
            ]
            fin = [100 * r["final_test_accuracy"] for r in rs]
            best = [100 * r["best_test_accuracy"] for r in rs]
            cells += [_ms(fin), _ms(best), f"{pub:.2f}"]
            secs.append(
                f"{statistics.fmean(r['wall_seconds'] for r in rs):.0f}" if rs else "-"
            )
        print(f"| {m} | " + " | ".join(cells) + f" | {' / '.join(secs)} |")


if __name__ == "__main__":
    main()
