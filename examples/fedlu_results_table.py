r"""Prints the FedLU-table tables of ``docs/results.md`` (issues 4, 5, 6) from
the results files under ``docs/results/``.

    python examples/fedlu_results_table.py                 # both tables
    python examples/fedlu_results_table.py --results DIR   # another folder

The first table compares each finished TransE run on the published FedLU
partitions (``fedlu-{r3,c3}-METHOD-transe.json``) with FedLU's Table 1
(weighted test MRR, %); the second is FedLU §5.3's unlearning table (Hits@1,
%) from ``fedlu-c3-fedlu-unlearn-transe.json``. Both are pasted verbatim into
``docs/results.md``, and ``tests/eval/test_results_tables.py`` fails when the
document and the files disagree.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

#: FedLU Table 1, TransE, weighted test MRR (%), ``../shared/PAPERS.md``.
PUBLISHED = {
    "r3": {
        "independent": 31.96,
        "centralized": 32.44,
        "fede": 32.52,
        "fedprox": 32.38,
        "fedec": 32.40,
        "fedlu local": 33.12,
        "fedlu global": 34.75,
    },
    "c3": {
        "independent": 31.44,
        "centralized": 32.65,
        "fede": 32.66,
        "fedprox": 32.50,
        "fedec": 32.99,
        "fedlu local": 33.71,
        "fedlu global": 33.30,
    },
}

#: results-file method name → (row label, published column, which weighted
#: block: ``weighted`` = the local model, ``weighted_global`` = FedLU's global).
ROWS = [
    ("independent", "Independent", "independent", "weighted"),
    ("independent-runlocal", "Independent, FedLU's `run_local.sh` schedule",
     "independent", "weighted"),
    ("centralized", "Centralized", "centralized", "weighted"),
    ("fede", "FedE", "fede", "weighted"),
    ("fedprox", "FedProx", "fedprox", "weighted"),
    ("fedec", "FedEC", "fedec", "weighted"),
] + [
    (method, f"FedLU {model}, {schedule}", f"fedlu {model}", block)
    for method, schedule in (("fedlu", "distillation from round 1"),
                             ("fedlu-gated", "gated distillation"))
    for model, block in (("local", "weighted"), ("global", "weighted_global"))
]  # fmt: skip

#: FedLU §5.3 (C3, TransE, local model, Hits@1 %): (forget, test).
PUBLISHED_UNLEARN = {
    "raw": (38.86, 21.27),
    "retrained": (21.10, 20.86),
    "unlearned": (13.23, 21.04),
}


def _load(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    with open(path) as f:
        return json.load(f)


def _length(doc: dict[str, Any]) -> str:
    r"""Rounds (federated) or epochs per client (baselines) of a run."""
    clients = doc.get("clients", [])
    if "best_round" in doc:
        return f"round {doc['best_round']} of {doc['rounds']}"
    if clients and "epochs" in clients[0]:
        epochs = "/".join(str(c["epochs"]) for c in clients)
        best = "/".join(str(c["best_epoch"]) for c in clients)
        return f"epochs {best} of {epochs}"
    return f"{doc.get('rounds', '?')} rounds"


def link_prediction_table(results: Path) -> str:
    r"""Markdown: every finished run of :data:`ROWS` on R3 and C3 against the
    published number (runs without a results file are left out)."""
    lines = [
        "| data | run | ours | published | Δ | best / run length | results file |",
        "|---|---|---|---|---|---|---|",
    ]
    for data in ("r3", "c3"):
        for method, label, column, block in ROWS:
            name = f"fedlu-{data}-{method}-transe.json"
            doc = _load(results / name)
            if doc is None or block not in doc:
                continue
            ours = 100 * doc[block]["mrr"]
            pub = PUBLISHED[data][column]
            lines.append(
                f"| {data.upper()} | {label} | {ours:.2f} | {pub:.2f} | "
                f"{ours - pub:+.2f} | {_length(doc)} | [`{name}`](results/{name}) |"
            )
    return "\n".join(lines)


def unlearning_table(results: Path) -> str:
    r"""Markdown: FedLU §5.3's table (Hits@1 / MRR, %) from the C3 unlearning
    results, with the published local Hits@1."""
    doc = _load(results / "fedlu-c3-fedlu-unlearn-transe.json")
    lines = [
        "| model | local forget ↓ | local test | global forget ↓ | global test "
        "| FedLU §5.3, local Hits@1 (forget / test) |",
        "|---|---|---|---|---|---|",
    ]
    for key, label in (
        ("raw", "raw"),
        ("retrained", "re-trained on the retained data"),
        ("unlearned", "unlearned"),
    ):
        cells = []
        for which in ("local", "global"):
            for split in ("forget", "test"):
                m = (doc or {}).get(key, {}).get(which, {}).get(split)
                cells.append(
                    "not run"
                    if m is None
                    else f"{100 * m['hits@1']:.2f} / {100 * m['mrr']:.2f}"
                )
        forget, test = PUBLISHED_UNLEARN[key]
        lines.append(
            f"| {label} | " + " | ".join(cells) + f" | {forget:.2f} / {test:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--results",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "docs" / "results",
        help="folder of the results files (default: docs/results)",
    )
    args = parser.parse_args(argv)
    print(link_prediction_table(args.results))
    print()
    print(unlearning_table(args.results))


if __name__ == "__main__":
    main()
