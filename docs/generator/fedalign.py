r"""The FedAlign page (``docs/papers/fedalign.md``): the centralised R-GCN
against the R-GCN paper (``published/rgcn.json``), FedAlign's client sizes
and its Table 4 (``published/fedalign.json``)."""

from __future__ import annotations

import glob
import json
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fedgraph.report.files import load_json
from generator.files import figures_markdown, published_table
from generator.verdict import Row, slash, verdict_word, within

DATASETS = ("aifb", "mutag")

RULE = (
    "Accuracy (%, AIFB / MUTAG, mean over seeds) within our seed-to-seed standard "
    "deviation; client sizes within the spread of the mean over partition seeds; "
    "FedAlign's gain over FedAvg and FedProx at least half the published one."
)


def table4() -> dict[str, list[float]]:
    r"""FedAlign Table 4: method → test accuracy (%) on (AIFB, MUTAG)."""
    return published_table("fedalign", "table4_test_accuracy")


def rgcn_table3() -> dict[str, list[float]]:
    r"""The R-GCN paper's Table 3: data set → (mean, std) accuracy (%)."""
    return published_table("rgcn", "table3_accuracy")


def rgcn_runs(results: Path, dataset: str, method: str) -> list[dict[str, Any]]:
    r"""The results of every seed of ``DATASET-METHOD-rgcn-*.json``."""
    pattern = str(results / f"{dataset}-{method}-rgcn-*.json")
    return [json.loads(Path(f).read_text()) for f in sorted(glob.glob(pattern))]


def _ms(vals: list[float]) -> str:
    if not vals:
        return "not run"
    std = statistics.stdev(vals) if len(vals) > 1 else float("nan")
    return f"{statistics.fmean(vals):.2f} ± {std:.2f} (n={len(vals)})"


def centralised_rgcn_table(results: Path) -> str:
    r"""Markdown: the centralised R-GCN against the R-GCN paper."""
    lines = [
        "| dataset | ours, test accuracy (%) | R-GCN paper | s per seed |",
        "|---|---|---|---|",
    ]
    for d in DATASETS:
        rs = rgcn_runs(results, d, "centralised")
        if not rs:
            continue
        acc = [r["test_accuracy"] for r in rs]  # these files hold %
        secs = statistics.fmean(r["wall_seconds"] for r in rs)
        pub = rgcn_table3()[d]
        lines.append(
            f"| {d.upper()} | {_ms(acc)} | {pub[0]:.2f} ± {pub[1]:.2f} | {secs:.0f} |"
        )
    return "\n".join(lines)


def _table4_cells(results: Path, method: str, paper: Sequence[float]) -> list[str]:
    cells, secs = [], []
    for d, pub in zip(DATASETS, paper, strict=True):
        rs = rgcn_runs(results, d, method)
        fin = [100 * r["final_test_accuracy"] for r in rs]
        best = [100 * r["best_test_accuracy"] for r in rs]
        delta = f"{statistics.fmean(fin) - pub:+.2f}" if fin else "–"
        cells += [_ms(fin), _ms(best), f"{pub:.2f}", delta]
        secs.append(
            f"{statistics.fmean(r['wall_seconds'] for r in rs):.0f}" if rs else "-"
        )
    return [*cells, " / ".join(secs)]


def fedalign_table(results: Path) -> str:
    r"""Markdown: FedAlign's Table 4 (10 type-sampled clients), ours beside
    it: final (round 20) and best-round test accuracy, mean ± std over seeds."""
    lines = [
        "| method | AIFB final, ours | AIFB best round, ours | AIFB, FedAlign | Δ final "
        "| MUTAG final, ours | MUTAG best round, ours | MUTAG, FedAlign | Δ final "
        "| s / run (AIFB / MUTAG) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m, paper in table4().items():
        lines.append(f"| {m} | " + " | ".join(_table4_cells(results, m, paper)) + " |")
    return "\n".join(lines)


def rgcn_round_curves(results: Path, dataset: str) -> dict[str, tuple[list, list]]:
    r"""Mean test accuracy (%) over seeds per round, per method."""
    out = {}
    for m in table4():
        rs = rgcn_runs(results, dataset, m)
        if not rs:
            continue
        n = min(len(r["curve"]) for r in rs)
        rounds = [rs[0]["curve"][i]["round"] for i in range(n)]
        acc = [
            statistics.fmean(100 * r["curve"][i]["test_accuracy"] for r in rs)
            for i in range(n)
        ]
        out[m] = (rounds, acc)
    return out


def figures(results: Path, img: Path) -> list[Path]:
    r"""Mean test accuracy per round of every method, per data set."""
    from fedgraph.report.plots import line_plot

    return [
        line_plot(
            rgcn_round_curves(results, d),
            img / f"fedalign-{d}-rounds.svg",
            xlabel="round",
            ylabel="test accuracy (%), mean over seeds",
            title=f"{d.upper()}, 10 type-sampled clients: test accuracy per round",
        )
        for d in DATASETS
    ]


def rdf_partition_table(results: Path) -> str:
    r"""Markdown: FedAlign's Table 3 (10 type-sampled clients) and ours, mean
    over 10 partition seeds of the per-client mean ± std."""
    doc = load_json(results / "rdf-fed10-partition.json") or {}
    lines = [
        "| dataset | nodes per client, ours (spread of the mean over seeds) "
        "| edges per client, ours (statements) | FedAlign Table 3 entities "
        "| FedAlign edges |",
        "|---|---|---|---|---|",
    ]
    for d, v in doc.items():
        m, sp, pub = v["mean_over_seeds"], v["spread_of_mean"], v["fedalign_table3"]
        lines.append(
            f"| {d.upper()} | {m['nodes']['mean']:,.0f} ± {m['nodes']['std']:,.0f} "
            f"(±{sp['nodes']:,.0f}) | {m['edges']['mean']:,.0f} ± "
            f"{m['edges']['std']:,.0f} | {pub['nodes'][0]:,.0f} ± {pub['nodes'][1]:,.0f} "
            f"| {pub['edges'][0]:,.0f} ± {pub['edges'][1]:,.0f} |"
        )
    return "\n".join(lines)


def _seed_stats(results: Path, data: str, method: str, key: str) -> tuple[float, float]:
    r"""Mean and standard deviation over seeds of ``key`` (accuracy, %)."""
    rs = rgcn_runs(results, data, method)
    scale = 1 if method == "centralised" else 100  # centralised files hold %
    vals = [scale * r[key] for r in rs]
    return statistics.fmean(vals), statistics.stdev(vals)


def _within_std(
    results: Path, method: str, key: str, pub: Sequence[float]
) -> tuple[str, str]:
    r"""``(ours, verdict)``: AIFB / MUTAG mean accuracy of ``method`` against
    ``pub``, reproduced on a data set when within our seed-to-seed std."""
    stats = [_seed_stats(results, d, method, key) for d in DATASETS]
    deltas = [m - p for (m, _), p in zip(stats, pub, strict=True)]
    return slash([m for m, _ in stats]), within(deltas, [s for _, s in stats])


def partition_row(results: Path) -> Row:
    r"""FedAlign's Table 3: nodes per client against the spread of the mean
    over partition seeds."""
    doc = load_json(results / "rdf-fed10-partition.json") or {}
    claim = "FedAlign Table 3: nodes per client"
    if set(doc) != set(DATASETS):
        return ("partition", claim, "", "not run", "not run")
    pub = [doc[d]["fedalign_table3"]["nodes"][0] for d in DATASETS]
    ours = [doc[d]["mean_over_seeds"]["nodes"]["mean"] for d in DATASETS]
    spread = [doc[d]["spread_of_mean"]["nodes"] for d in DATASETS]
    deltas = [o - p for o, p in zip(ours, pub, strict=True)]
    return ("partition", claim, slash(pub, ",.0f"), slash(ours, ",.0f"),
            within(deltas, spread, "+,.0f"))  # fmt: skip


def _order_row(results: Path) -> Row:
    claim = "Table 4: FedAlign beats FedAvg and FedProx"
    published, pub, ours = table4(), [], []
    for i, d in enumerate(DATASETS):
        mine = _seed_stats(results, d, "fedalign", "final_test_accuracy")[0]
        for base in ("fedavg", "fedprox"):
            pub.append(published["fedalign"][i] - published[base][i])
            ours.append(mine - _seed_stats(results, d, base, "final_test_accuracy")[0])
    ok = [o > 0 and o >= p / 2 for o, p in zip(ours, pub, strict=True)]

    def cell(xs: list[float]) -> str:
        return f"AIFB {slash(xs[:2], '+.2f')}; MUTAG {slash(xs[2:], '+.2f')}"

    return ("order", claim, cell(pub), cell(ours),
            f"{verdict_word(ok)} ({sum(ok)} of {len(ok)})")  # fmt: skip


def _label(method: str) -> str:
    names = {
        "sp": "SP",
        "fedavg": "FedAvg",
        "fedprox": "FedProx",
        "fedalign": "FedAlign",
    }
    base, _, lipschitz = method.partition("-")
    return names[base] + ("-L" if lipschitz else "")


def verdicts(results: Path) -> list[Row]:
    r"""The R-GCN paper's Table 3 (centralised), FedAlign's Table 3 (client
    sizes, within the spread over partition seeds) and Table 4 (final test
    accuracy %, AIFB / MUTAG, within our seed-to-seed std; FedAlign's gain
    over FedAvg and FedProx reproduced when ours is at least half of it)."""
    if not rgcn_runs(results, "aifb", "fedalign"):
        return [("fedalign", "Table 4", "", "not run", "not run")]
    pub = [rgcn_table3()[d][0] for d in DATASETS]
    ours, word = _within_std(results, "centralised", "test_accuracy", pub)
    rows = [("centralised", "R-GCN paper Table 3: R-GCN", slash(pub), ours, word),
            partition_row(results)]  # fmt: skip
    for method, pub in table4().items():
        ours, word = _within_std(results, method, "final_test_accuracy", pub)
        rows.append((method, f"Table 4: {_label(method)}", slash(pub), ours, word))
    return [*rows, _order_row(results)]


BLOCKS: dict[str, Callable[[Path], str]] = {
    "fedalign-centralised": centralised_rgcn_table,
    "fedalign-table": fedalign_table,
    "fedalign-figures": lambda r: figures_markdown(
        "fedalign-aifb-rounds", "fedalign-mutag-rounds"
    ),
    "fedalign-partition": rdf_partition_table,
}
