r"""The measured privacy table of the results page ``docs/papers/privacy.md``.

``benchmarks/privacy_bench.sh`` trains and audits the settings of
:data:`SETTINGS` on one dataset (``benchmarks/privacy_umls.sh`` and
``benchmarks/privacy_fedlu_r3.sh`` call it with their dataset's arguments);
``benchmarks/privacy_table.py WORK_DIR PREFIX`` collects each run into
``docs/results/PREFIX-NAME.json``: the run's ``results.json`` with its two
audit reports, ``{"results": ..., "audits": {"triple-inference": ...,
"membership": ...}}``. :func:`privacy_table` tabulates those files, one row
per setting of :data:`SETTINGS`, with the attacks' random-guess baselines
from the audit reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fedgraph.report.files import LINK, load_json

#: results-file name → row label, in the table's order.
SETTINGS = (
    ("fede", "FedE, no defence"),
    ("dp-eps1", "FedE + DP ε=1"),
    ("dp-eps4", "FedE + DP ε=4"),
    ("dp-eps16", "FedE + DP ε=16"),
    ("secagg", "FedE + SecAgg"),
    ("alignment", "FedE + private alignment"),
    ("fedr", "FedR"),
    ("fedr-secagg", "FedR + SecAgg"),
)

#: results-file prefix → the benchmark script that runs its settings (each
#: calls ``benchmarks/privacy_bench.sh``).
SCRIPTS = {
    "umls-r3-privacy": "benchmarks/privacy_umls.sh",
    "fedlu-r3-privacy": "benchmarks/privacy_fedlu_r3.sh",
}

HEADER = (
    "| setting | test MRR | triple F1 | triple AUC | AUC without rows "
    "| membership F1 | membership AUC | traffic (MB) | × FedE | s/round | × FedE "
    "| ε per client |"
)


def privacy_files(results: Path, prefix: str) -> list[str]:
    r"""The names of the files ``PREFIX-NAME.json`` present in ``results``, in
    the order of :data:`SETTINGS`."""
    names = [f"{prefix}-{name}.json" for name, _ in SETTINGS]
    return [n for n in names if (results / n).is_file()]


def not_run(prefix: str) -> str:
    r"""The line shown instead of a table when no file of ``prefix`` exists."""
    script = SCRIPTS.get(prefix)
    if script is None:
        return f"Not run yet: no `{prefix}-*.json` results file."
    return f"Not run yet: {script}"


def _cell(x: float | None, fmt: str) -> str:
    return "–" if x is None else format(x, fmt)


def _ratio(x: float | None, base: float | None) -> str:
    return "–" if x is None or not base else f"{x / base:.2f}"


def _traffic(res: dict[str, Any]) -> int | None:
    comm = res.get("comm")
    if not comm:
        return None
    return comm.get("bytes_up", 0) + comm.get("bytes_down", 0)


def _audit(doc: dict[str, Any], attack: str, part: str, metric: str) -> float | None:
    value = (((doc.get("audits") or {}).get(attack) or {}).get(part) or {}).get(metric)
    return None if value is None else float(value)


def _epsilons(res: dict[str, Any]) -> str:
    dp = (res.get("privacy") or {}).get("dp")
    return "/".join(f"{v['epsilon']:.3g}" for v in dp.values()) if dp else ""


def _baseline_row(docs: Sequence[dict[str, Any]]) -> str:
    r"""The random-guess row: each attack's ``baseline`` from the audit reports
    (values that differ between runs are all shown, separated by ``/``)."""

    def guess(attack: str, metric: str) -> str:
        found = [_audit(d, attack, "baseline", metric) for d in docs]
        shown = [format(x, ".3f") for x in found if x is not None]
        return " / ".join(dict.fromkeys(shown))

    cells = ["random guess", ""]
    cells += [guess("triple-inference", "f1"), guess("triple-inference", "auc"), ""]
    cells += [guess("membership", "f1"), guess("membership", "auc")]
    return "| " + " | ".join(cells + [""] * 5) + " |"


def privacy_table(results: Path, prefix: str, link: str = LINK) -> str:
    r"""Markdown: the privacy benchmark ``prefix`` (e.g. ``umls-r3-privacy``)
    from its files ``results/PREFIX-NAME.json``.

    One row per setting of :data:`SETTINGS` whose file exists, linked to it:
    the weighted test MRR, the triple-inference attack's mean F1 and AUC over
    the clients (with the upload, and from the known triples alone), the
    membership attack's mean F1 and AUC, the bytes sent up and down over all
    rounds (MB, and relative to FedE's), seconds per round (and relative to
    FedE's) and the DP budget ε of each client; then the attacks' random-guess
    baselines. Without any file, one line saying which script runs them.
    """
    names = privacy_files(results, prefix)
    if not names:
        return not_run(prefix)
    docs = {name: load_json(results / name) for name in names}
    fede = docs.get(f"{prefix}-fede.json")
    base_traffic = _traffic(fede["results"]) if fede else None
    base_secs = fede["results"].get("seconds_per_round") if fede else None
    labels = {f"{prefix}-{name}.json": label for name, label in SETTINGS}
    lines = [HEADER, "|" + "---|" * 12]
    for name, doc in docs.items():
        res = doc["results"]
        traffic = _traffic(res)
        secs = res.get("seconds_per_round")
        cells = [
            f"[{labels[name]}]({link}{name})",
            format(res["weighted"]["mrr"], ".4f"),
            _cell(_audit(doc, "triple-inference", "mean", "f1"), ".3f"),
            _cell(_audit(doc, "triple-inference", "mean", "auc"), ".3f"),
            _cell(_audit(doc, "triple-inference", "knowledge_only", "auc"), ".3f"),
            _cell(_audit(doc, "membership", "mean", "f1"), ".3f"),
            _cell(_audit(doc, "membership", "mean", "auc"), ".3f"),
            _cell(None if traffic is None else traffic / 1e6, ".2f"),
            _ratio(traffic, base_traffic),
            _cell(secs, ".1f"),
            _ratio(secs, base_secs),
            _epsilons(res),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append(_baseline_row(list(docs.values())))
    return "\n".join(lines)
