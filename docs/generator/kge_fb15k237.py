r"""The FB15k-237 page (``docs/papers/kge-fb15k237.md``): centralised KGE on
FB15k-237's own split with the shipped recipes, against the figures their
sources publish (LibKGE's ICLR 2020 search; Lacroix et al.'s ComplEx-N3; Sun et
al.'s RotatE)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from fedgraph.recipes import load_recipe
from fedgraph.report.files import load_json
from generator.commands import commands_list
from generator.files import markdown_table, present_runs, results_link
from generator.verdict import Row, within

#: ``(run, recipe, label, tolerance in MRR points)``: each run of
#: ``benchmarks/kge_fb15k237.sh`` the page compares with its recipe's source.
RUNS = (
    ("transe-libkge", "transe-libkge-fb15k-237", "TransE, LibKGE's configuration", 0.5),
    ("distmult-libkge", "distmult-libkge-fb15k-237", "DistMult, LibKGE's configuration", 0.5),
    ("complex-libkge", "complex-libkge-fb15k-237", "ComplEx, LibKGE's configuration", 0.5),
    ("complex-n3-d200-e30", "complex-n3-fb15k-237",
     "ComplEx-N3 at rank 200 for 30 epochs (the source: 1,000 and 100)", 1.0),
    ("rotate-d200-e24-lr2.5e-4", "rotate-fb15k-237",
     "RotatE at dimension 200 for 24 epochs, learning rate 2.5e-4 "
     "(the source: 1,000, about 188 epochs, 5e-5)", 1.0),
)  # fmt: skip
#: the results file of each run of :data:`RUNS`.
FILE = "kge-fb15k237-{}.json"

RULE = (
    "The test MRR (filtered, head and tail, every test triple) is within 0.5 "
    "points of the source's for a run at the source's configuration, within 1 "
    "point for a run at a reduced dimension and number of epochs (ComplEx-N3, RotatE; "
    "one seed each)."
)


def _reported(recipe: str) -> dict[str, float]:
    return load_recipe(recipe)["source"]["reported"]


def _label_runs() -> list[tuple[str, str]]:
    return [(run, label) for run, _, label, _ in RUNS]


def _spec(run: str) -> tuple[str, str, str, float]:
    return next(r for r in RUNS if r[0] == run)


def _budget(doc: dict[str, Any], epochs: int) -> str:
    # epochs against the recipe's (its source's budget), not the run's cap
    s = doc.get("settings") or {}
    client = (doc.get("clients") or [{}])[0]
    return (
        f"dim {s.get('hidden_channels')}, {doc['rounds']} of {epochs} "
        f"epochs, best {client.get('best_epoch')}"
    )


def _hours(doc: dict[str, Any]) -> str:
    seconds = (doc.get("settings") or {}).get("train_seconds")
    return "–" if seconds is None else f"{seconds / 3600:.1f}"


def fb15k237_table(results: Path) -> str:
    r"""Markdown: each run's test MRR and Hits@1/3/10 (%) beside its recipe
    source's, the difference in MRR, the budget it ran and its training
    hours."""
    header = ["run", "recipe", "budget", "MRR", "Hits@1", "Hits@3", "Hits@10",
              "published MRR / H@1 / H@3 / H@10", "Δ MRR", "training hours",
              "results file"]  # fmt: skip
    rows = []
    for run, label, name, doc in present_runs(results, _label_runs(), FILE):
        recipe = _spec(run)[1]
        spec = load_recipe(recipe)
        w, pub = doc["weighted"], spec["source"]["reported"]
        ours = [100 * w[k] for k in ("mrr", "hits@1", "hits@3", "hits@10")]
        shown = " / ".join(
            f"{100 * pub[k]:.1f}" for k in ("mrr", "hits@1", "hits@3", "hits@10")
        )
        rows.append([label, f"`{recipe}`", _budget(doc, spec["train"]["rounds"]), *(f"{v:.2f}" for v in ours),
                     shown, f"{ours[0] - 100 * pub['mrr']:+.2f}", _hours(doc),
                     results_link(name)])  # fmt: skip
    if not rows:
        return "No FB15k-237 run has finished yet."
    return markdown_table(header, rows)


#: ``(algorithm, label)`` of the runs on FedLU's R3 partition: FedLU's
#: settings (``fedlu-r3-ALGORITHM-transe.json``, the FedLU page's) against
#: TransE's LibKGE recipe (``kge-fb15k237-r3-ALGORITHM-transe-libkge.json``)
R3_RUNS = (("independent", "Independent"), ("fede", "FedE"))
R3_FILES = ("fedlu-r3-{}-transe.json", "kge-fb15k237-r3-{}-transe-libkge.json")


def _metrics(doc: dict[str, Any] | None, name: str) -> str:
    if doc is None:
        return "not run"
    w = doc["weighted"]
    shown = " / ".join(f"{100 * w[k]:.2f}" for k in ("mrr", "hits@1", "hits@10"))
    return f"{shown} ({results_link(name)})"


def r3_table(results: Path) -> str:
    r"""Markdown: Independent and FedE on FedLU's R3 (TransE, FedLU's
    protocol) with FedLU's settings and with ``transe-libkge-fb15k-237``:
    test MRR / Hits@1 / Hits@10 (%) of each and the recipe's gain in MRR,
    then FedE's gain over Independent under each."""
    header = ["algorithm", "FedLU's settings: MRR / H@1 / H@10",
              "LibKGE's TransE recipe: MRR / H@1 / H@10", "recipe's gain (MRR)"]  # fmt: skip
    rows, mrr = [], {}
    for algo, label in R3_RUNS:
        names = [f.format(algo) for f in R3_FILES]
        docs = [load_json(results / n) for n in names]
        for setting, doc in zip(("fedlu", "recipe"), docs, strict=True):
            if doc is not None:
                mrr[algo, setting] = 100 * doc["weighted"]["mrr"]
        gain = "–"
        if (algo, "fedlu") in mrr and (algo, "recipe") in mrr:
            gain = f"{mrr[algo, 'recipe'] - mrr[algo, 'fedlu']:+.2f}"
        rows.append([label, *map(_metrics, docs, names), gain])
    lines = [markdown_table(header, rows)]
    for setting, label in (("fedlu", "FedLU's settings"), ("recipe", "the recipe")):
        if ("fede", setting) in mrr and ("independent", setting) in mrr:
            gain = mrr["fede", setting] - mrr["independent", setting]
            lines.append(f"FedE's gain over Independent with {label}: {gain:+.2f} MRR.")
    return "\n\n".join(lines)


def verdicts(results: Path) -> list[Row]:
    r"""Per run: its test MRR within the tolerance of :data:`RUNS` of its
    recipe source's published MRR, or ``not run``."""
    rows: list[Row] = []
    for run, recipe, label, tol in RUNS:
        pub = 100 * _reported(recipe)["mrr"]
        claim = f"{label}: test MRR"
        found = list(present_runs(results, [(run, label)], FILE))
        if not found:
            rows.append((run, claim, f"{pub:.1f}", "not run", "not run"))
            continue
        ours = 100 * found[0][3]["weighted"]["mrr"]
        rows.append(
            (run, claim, f"{pub:.1f}", f"{ours:.2f}", within([ours - pub], [tol]))
        )
    return rows


BLOCKS: dict[str, Callable[[Path], str]] = {
    "kge-fb15k237-table": fb15k237_table,
    "kge-fb15k237-r3": r3_table,
    "kge-fb15k237-commands": lambda r: commands_list(
        r,
        [FILE.format(run) for run, *_ in RUNS]
        + [R3_FILES[1].format(algo) for algo, _ in R3_RUNS],
    ),
}
