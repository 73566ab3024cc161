r"""The FedLU page (``docs/papers/fedlu.md``): FedLU's Table 1 on its
published R3 and C3 partitions and its §5.3 unlearning, against
``published/fedlu.json``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fedgraph.report.files import load_json
from generator.commands import commands_list
from generator.curves import run_length, valid_curve
from generator.files import (
    figures_markdown,
    present_runs,
    published_table,
    results_link,
)
from generator.verdict import Row, slash, verdict_word, within

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

#: the runs drawn in the validation curves and the per-client bars.
CURVE_METHODS = (
    ("fede", "FedE"),
    ("fedprox-mean", "FedProx (mean)"),
    ("fedec", "FedEC"),
    ("fedlu", "FedLU local, from round 1"),
    ("fedlu-gated", "FedLU local, gated"),
)

#: Table 1 rows tested: (results-file method, claim, published column,
#: weighted block).
VERDICT_ROWS = (
    ("independent", "Independent", "independent", "weighted"),
    ("fede", "FedE", "fede", "weighted"),
    ("fedprox-mean", "FedProx", "fedprox", "weighted"),
    ("fedec", "FedEC", "fedec", "weighted"),
    ("fedlu-gated", "FedLU local", "fedlu local", "weighted"),
    ("fedlu-gated", "FedLU global", "fedlu global", "weighted_global"),
)

RULE = (
    "Test MRR (%, R3 / C3) within one point of Table 1; §5.3: the unlearned "
    "model's forget-set Hits@1 below the re-trained model's and its test Hits@1 "
    "within one point of the raw model's."
)


def table1() -> dict[str, dict[str, float]]:
    r"""FedLU Table 1: partition → method → weighted test MRR (%)."""
    return published_table("fedlu", "table1_test_mrr")


def local_start(doc: dict[str, Any]) -> str:
    r"""Where a FedLU run's local tables started: ``local_init`` from the
    strategy's recorded parameters (``settings.strategy_params``), else parsed
    from the strategy's repr; a run that records neither used its own random
    rows (the only start fedgraph's FedLU then had)."""
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


def fedlu_files(results: Path) -> list[tuple[str, str, str, str, str, dict]]:
    r"""``(partition, method, label, published column, block, results)`` of
    every run of :data:`ROWS` with a results file."""
    out = []
    for data in ("r3", "c3"):
        for method, label, column, block in ROWS:
            doc = load_json(results / f"fedlu-{data}-{method}-transe.json")
            if doc is not None and block in doc:
                out.append((data, method, label, column, block, doc))
    return out


def link_prediction_table(results: Path) -> str:
    r"""Markdown: every finished run of :data:`ROWS` on R3 and C3 against the
    published number (runs without a results file are left out)."""
    lines = [
        "| data | run | ours | published | Δ | best / run length | results file |",
        "|---|---|---|---|---|---|---|",
    ]
    published = table1()
    for data, method, label, column, block, doc in fedlu_files(results):
        name = f"fedlu-{data}-{method}-transe.json"
        ours = 100 * doc[block]["mrr"]
        pub = published[data][column]
        lines.append(
            f"| {data.upper()} | {label}{local_start(doc)} | {ours:.2f} | {pub:.2f} | "
            f"{ours - pub:+.2f} | {run_length(doc)} | {results_link(name)} |"
        )
    return "\n".join(lines)


def _unlearning_cells(doc: dict[str, Any] | None, key: str) -> list[str]:
    cells = []
    for which in ("local", "global"):
        for split in ("forget", "test"):
            m = (doc or {}).get(key, {}).get(which, {}).get(split)
            cells.append(
                "not run"
                if m is None
                else f"{100 * m['hits@1']:.2f} / {100 * m['mrr']:.2f}"
            )
    return cells


def unlearning_table(results: Path) -> str:
    r"""Markdown: FedLU §5.3's table (Hits@1 / MRR, %) from the C3 unlearning
    results, with the published local Hits@1."""
    doc = load_json(results / "fedlu-c3-fedlu-unlearn-transe.json")
    published = published_table("fedlu", "unlearning_hits1")
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
        cells = _unlearning_cells(doc, key)
        forget, test = published[key]
        lines.append(
            f"| {label} | " + " | ".join(cells) + f" | {forget:.2f} / {test:.2f} |"
        )
    return "\n".join(lines)


def fedlu_curves(
    results: Path, data: str, methods: Sequence[tuple[str, str]] = ()
) -> dict[str, tuple[list, list]]:
    r"""Label → validation curve of ``fedlu-DATA-METHOD-transe.json`` for each
    ``(method, label)`` of ``methods`` (default: :data:`CURVE_METHODS`)."""
    runs = present_runs(
        results, methods or CURVE_METHODS, f"fedlu-{data}-{{}}-transe.json"
    )
    return {label: valid_curve(doc) for _, label, _, doc in runs if "history" in doc}


def _client_bars(results: Path, data: str) -> tuple[list[str], dict]:
    methods = (("independent", "Independent"),) + CURVE_METHODS
    bars, groups = {}, []
    for method, label in methods:
        doc = load_json(results / f"fedlu-{data}-{method}-transe.json")
        if doc is None:
            continue
        bars[label] = [100 * c["mrr"] for c in doc["clients"]]
        groups = [
            f"client {c['client']}\n({c['n_test']:,} test)" for c in doc["clients"]
        ]
    return groups, bars


def figures(results: Path, img: Path) -> list[Path]:
    r"""Validation curves and test MRR per client on R3 and C3."""
    from fedgraph.report.plots import grouped_bars, line_plot

    out = []
    for data in ("r3", "c3"):
        out.append(
            line_plot(
                fedlu_curves(results, data),
                img / f"fedlu-{data}-curves.svg",
                xlabel="round",
                ylabel="validation MRR (%)",
                title=f"FB15k-237 {data.upper()}, TransE: weighted validation MRR",
            )
        )
        groups, bars = _client_bars(results, data)
        out.append(
            grouped_bars(
                groups,
                bars,
                img / f"fedlu-{data}-clients.svg",
                ylabel="test MRR (%)",
                title=f"FB15k-237 {data.upper()}, TransE: test MRR per client",
            )
        )
    return out


def _table1_row(results: Path, method: str, claim: str, column: str, block: str) -> Row:
    published = table1()
    pub = [published[d][column] for d in ("r3", "c3")]
    docs = [
        load_json(results / f"fedlu-{d}-{method}-transe.json") for d in ("r3", "c3")
    ]
    if any(doc is None or block not in doc for doc in docs):
        return (claim, f"Table 1: {claim}", slash(pub), "not run", "not run")
    ours = [100 * doc[block]["mrr"] for doc in docs]
    deltas = [o - p for o, p in zip(ours, pub, strict=True)]
    return (claim, f"Table 1: {claim}", slash(pub), slash(ours), within(deltas, [1, 1]))


def _forget_test(h1: dict[str, Sequence[float]]) -> str:
    return (
        f"forget {h1['unlearned'][0]:.2f} < {h1['retrained'][0]:.2f}; "
        f"test {h1['unlearned'][1]:.2f} / {h1['raw'][1]:.2f}"
    )


def _unlearning_row(results: Path) -> Row:
    doc = load_json(results / "fedlu-c3-fedlu-unlearn-transe.json")
    published = _forget_test(published_table("fedlu", "unlearning_hits1"))
    claim = "§5.3: unlearning"
    if doc is None:
        return (claim, claim, published, "not run", "not run")
    h1 = {k: [100 * doc[k]["local"][s]["hits@1"] for s in ("forget", "test")]
          for k in ("raw", "retrained", "unlearned")}  # fmt: skip
    forget = h1["unlearned"][0] - h1["retrained"][0]
    test = h1["unlearned"][1] - h1["raw"][1]
    word = verdict_word([forget < 0, abs(test) <= 1])
    return (claim, claim, published, _forget_test(h1),
            f"{word} (forget {forget:+.2f}, test {test:+.2f})")  # fmt: skip


def verdicts(results: Path) -> list[Row]:
    r"""FedLU Table 1 (test MRR %, R3 / C3; reproduced within one point) and
    §5.3 (local Hits@1 %: the unlearned model forgets more than the
    re-trained one, and keeps the raw model's test Hits@1 within one point)."""
    rows = [_table1_row(results, *spec) for spec in VERDICT_ROWS]
    return [*rows, _unlearning_row(results)]


def _commands(results: Path) -> str:
    names = [f"fedlu-{d}-{m}-transe.json" for d, m, *_ in fedlu_files(results)]
    return commands_list(results, names)


#: generated block name → its Markdown, from the results folder.
BLOCKS: dict[str, Callable[[Path], str]] = {
    "fedlu-table": link_prediction_table,
    "fedlu-commands": _commands,
    "fedlu-figures": lambda r: figures_markdown(
        "fedlu-r3-curves", "fedlu-c3-curves", "fedlu-r3-clients", "fedlu-c3-clients"
    ),
    "fedlu-unlearning": unlearning_table,
    "fedlu-unlearning-command": lambda r: commands_list(
        r, ["fedlu-c3-fedlu-unlearn-transe.json"]
    ),
}
