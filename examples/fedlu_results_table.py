r"""Prints the FedLU-partition tables of ``docs/results.md`` (issues 4, 5, 6)
from the results files under ``docs/results/``.

    python examples/fedlu_results_table.py                 # all tables
    python examples/fedlu_results_table.py --results DIR   # another folder

The first table compares each finished TransE run on the published FedLU
partitions (``fedlu-{r3,c3}-METHOD-transe.json``) with FedLU's Table 1
(weighted test MRR, %); the second is FedLU §5.3's unlearning table (Hits@1,
%) from ``fedlu-c3-fedlu-unlearn-transe.json``; the third compares FedS with
FedEP on R10 (``fedlu-r10-{fedep,feds}-transe.json``) in FedS's
communication metrics (:func:`fedgraph.eval.feds_metrics.feds_metrics`),
once FedEP's run is there. They are pasted verbatim into ``docs/results.md``,
and ``tests/eval/test_results_tables.py`` fails when the document and the
files disagree.
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
    ("fedprox-mean", "FedProx, proximal term's mean over entities", "fedprox",
     "weighted"),
    ("fedec", "FedEC", "fedec", "weighted"),
] + [
    (method, f"FedLU {model}, {schedule}", f"fedlu {model}", block)
    for method, schedule in (("fedlu", "distillation from round 1"),
                             ("fedlu-gated", "gated distillation"),
                             ("fedlu-gated-globalinit", "gated distillation"),
                             ("fedlu-gated-ownrel",
                              "gated distillation, ablation: global model's own "
                              "relations"))
    for model, block in (("local", "weighted"), ("global", "weighted_global"))
]  # fmt: skip

#: FedLU §5.3 (C3, TransE, local model, Hits@1 %): (forget, test).
PUBLISHED_UNLEARN = {
    "raw": (38.86, 21.27),
    "retrained": (21.10, 20.86),
    "unlearned": (13.23, 21.04),
}


#: FedS Table II/III (TransE, FB15k-237-R10): test MRR (%), P@CG, P@99.
PUBLISHED_FEDS = {"fedep": (35.17, 1.0, 1.0), "feds": (35.41, 0.52, 0.44)}


def _load(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    with open(path) as f:
        return json.load(f)


def _start(doc: dict[str, Any]) -> str:
    r"""Where a FedLU run's local tables started: ``local_init`` from the
    strategy's recorded parameters (``settings.strategy_params``, session 14 on),
    else parsed from the strategy's repr (session 13); runs before session 13
    used their own random rows."""
    settings = doc.get("settings", {})
    strategy = str(settings.get("strategy", ""))
    if not strategy.startswith("FedLU("):
        return ""
    params = settings.get("strategy_params")
    if params is not None:
        init = params.get("local_init", "own")
    else:
        init = "global" if "local_init='global'" in strategy else "own"
    if init == "global":
        return ", local tables from the global rows"
    return ", local tables' own random start"


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
                f"| {data.upper()} | {label}{_start(doc)} | {ours:.2f} | {pub:.2f} | "
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


def _ratio(x: float | None) -> str:
    return "not reached" if x is None else f"{x:.2f}×"


def feds_table(results: Path) -> str | None:
    r"""Markdown: FedS against FedEP on R10 (FedS §IV-B's metrics, relative to
    FedEP), with the published numbers; ``None`` until FedEP's run is there."""
    from fedgraph.eval.feds_metrics import feds_metrics

    base = _load(results / "fedlu-r10-fedep-transe.json")
    if base is None:
        return None
    lines = [
        "| R10, TransE | test MRR | vs FedEP | Hits@10 | R@CG (best / last round) "
        "| params up+down to R@CG | P@CG | P@99 | P@98 | published MRR / P@CG / P@99 "
        "| results file |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for method, label in (("fedep", "FedEP"), ("feds", "FedS")):
        name = f"fedlu-r10-{method}-transe.json"
        doc = _load(results / name)
        if doc is None:
            continue
        m = feds_metrics(doc, base)
        pub = PUBLISHED_FEDS[method]
        lines.append(
            f"| {label} | {100 * m['mrr@cg']:.2f} | "
            f"{100 * m['mrr@cg_vs_baseline']:.1f} % | "
            f"{100 * doc['weighted']['hits@10']:.2f} | {m['r@cg']} / {doc['rounds']} | "
            f"{m['params@cg']['method']:,} | {_ratio(m['p@cg'])} | "
            f"{_ratio(m['p@99'])} | {_ratio(m['p@98'])} | "
            f"{pub[0]:.2f} / {pub[1]:.2f}× / {pub[2]:.2f}× | "
            f"[`{name}`](results/{name}) |"
        )
    return "\n".join(lines)


def tables(results: Path) -> list[str]:
    r"""Every table this script prints (those with a results file)."""
    out = [link_prediction_table(results), unlearning_table(results)]
    feds = feds_table(results)
    return out if feds is None else [*out, feds]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--results",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "docs" / "results",
        help="folder of the results files (default: docs/results)",
    )
    args = parser.parse_args(argv)
    print("\n\n".join(tables(args.results)))


if __name__ == "__main__":
    main()
