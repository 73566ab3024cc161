r"""The FedS page (``docs/papers/feds.md``): FedS against FedEP on FedLU's
R10 partition in FedS's communication metrics, against
``published/feds.json``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fedgraph.report.files import load_json
from generator.commands import commands_list
from generator.curves import comm_curve, valid_curve
from generator.files import (
    figures_markdown,
    markdown_table,
    present_runs,
    published_table,
    results_link,
)
from generator.verdict import Row, within

RUNS = (("fedep", "FedEP"), ("feds", "FedS"))
#: the results file of each method of :data:`RUNS`.
FILE = "fedlu-r10-{}-transe.json"

RULE = "Test MRR (%) within one point; parameter ratios (× FedEP's) within 0.1."


def r10() -> dict[str, list[float]]:
    r"""FedS Tables II–III: method → (test MRR %, P@CG, P@99)."""
    return published_table("feds", "r10_transe")


def _ratio(x: float | None) -> str:
    return "not reached" if x is None else f"{x:.2f}×"


def feds_table(results: Path) -> str:
    r"""Markdown: FedS against FedEP on R10 (FedS §IV-B's metrics, relative to
    FedEP), with the published numbers."""
    from fedgraph.eval.feds_metrics import feds_metrics

    base = load_json(results / FILE.format("fedep"))
    if base is None:
        return "FedEP has not been run."
    header = ["R10, TransE", "test MRR", "vs FedEP", "Hits@10",
              "R@CG (best / last round)", "params up+down to R@CG", "P@CG",
              "P@99", "P@98", "published MRR / P@CG / P@99", "results file"]  # fmt: skip
    rows = []
    for method, label, name, doc in present_runs(results, RUNS, FILE):
        m, pub = feds_metrics(doc, base), r10()[method]
        rows.append([
            label, f"{100 * m['mrr@cg']:.2f}", f"{100 * m['mrr@cg_vs_baseline']:.1f} %",
            f"{100 * doc['weighted']['hits@10']:.2f}", f"{m['r@cg']} / {doc['rounds']}",
            f"{m['params@cg']['method']:,}", _ratio(m["p@cg"]), _ratio(m["p@99"]),
            _ratio(m["p@98"]), f"{pub[0]:.2f} / {pub[1]:.2f}× / {pub[2]:.2f}×",
            results_link(name),
        ])  # fmt: skip
    return markdown_table(header, rows)


def figures(results: Path, img: Path) -> list[Path]:
    r"""Validation MRR against communication and against rounds."""
    from fedgraph.report.plots import line_plot

    runs = {label: doc for _, label, _, doc in present_runs(results, RUNS, FILE)}
    comm = {}
    for label, doc in runs.items():
        xs, ys = comm_curve(doc)
        comm[label] = ([x / 1e9 for x in xs], ys)
    return [
        line_plot(
            comm,
            img / "feds-communication.svg",
            xlabel="parameters sent, up + down, cumulative (billions)",
            ylabel="validation MRR (%)",
            title="FB15k-237 R10, TransE: validation MRR against communication",
        ),
        line_plot(
            {label: valid_curve(doc) for label, doc in runs.items()},
            img / "feds-curves.svg",
            xlabel="round",
            ylabel="validation MRR (%)",
            title="FB15k-237 R10, TransE: validation MRR per round",
        ),
    ]


def verdicts(results: Path) -> list[Row]:
    r"""FedS Tables II–III: test MRR (%, within one point) and FedS's
    parameters to convergence and to 99 % of FedEP's best (× FedEP's, within
    0.1)."""
    from fedgraph.eval.feds_metrics import feds_metrics

    base, feds = (load_json(results / FILE.format(m)) for m, _ in RUNS)
    if base is None or feds is None:
        return [("mrr", "Tables II–III", "", "not run", "not run")]
    published, rows = r10(), []
    for (key, label), doc in zip(RUNS, (base, feds), strict=True):
        ours, pub = 100 * feds_metrics(doc, base)["mrr@cg"], published[key][0]
        rows.append((key, f"{label}: test MRR", f"{pub:.2f}", f"{ours:.2f}",
                     within([ours - pub], [1])))  # fmt: skip
    m = feds_metrics(feds, base)
    for key, pub in (("p@cg", published["feds"][1]), ("p@99", published["feds"][2])):
        claim = f"FedS: {key.upper()} (× FedEP)"
        if m[key] is None:  # FedS never reached the level
            rows.append((key, claim, f"{pub:.2f}×", "not reached", "not reproduced"))
            continue
        rows.append((key, claim, f"{pub:.2f}×", f"{m[key]:.2f}×",
                     within([m[key] - pub], [0.1])))  # fmt: skip
    return rows


BLOCKS: dict[str, Callable[[Path], str]] = {
    "feds-table": feds_table,
    "feds-commands": lambda r: commands_list(r, [FILE.format(m) for m, _ in RUNS]),
    "feds-figures": lambda r: figures_markdown("feds-communication", "feds-curves"),
}
