r"""The FedE page (``docs/papers/fede.md``): FedE on FedLU's R3 and on a
small UMLS federation, and its model fusion (Table 5 of
``published/fede.json``)."""

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
from generator.verdict import Row, slash, verdict_word

UMLS_METHODS = (
    ("independent", "Independent"),
    ("centralized", "Centralized"),
    ("fede", "FedE"),
    ("fedprox", "FedProx (μ = 0.1, sum over the table)"),
    ("fedec", "FedEC"),
)
FUSION_DATA = (("FB15k-237 R3", "fedlu-r3"), ("UMLS R3", "umls-r3"))

RULE = (
    "FedE beats Independent on every client (clients won, weighted test MRR "
    "points); fusion with FedE's fitted layer gains (weighted test MRR points)."
)


def _fusion_rows(doc: dict[str, Any], kind: str) -> list[tuple[str, str, dict]]:
    label_fused = (
        "fused, plain sum (`--epochs 0`)"
        if kind == "fusionsum"
        else "fused, fitted layer (FedE's fusion)"
    )
    return [
        ("single", "Independent (single)", doc["weighted_single"]),
        ("federated", "FedE (federated)", doc["weighted_federated"]),
        ("fusion", label_fused, doc["weighted"]),
    ]


def _per_client(doc: dict[str, Any]) -> dict[str, list[float]]:
    return {
        "single": [c["single"]["mrr"] for c in doc["clients"]],
        "federated": [c["federated"]["mrr"] for c in doc["clients"]],
        "fusion": [c["mrr"] for c in doc["clients"]],
    }


def fusion_table(results: Path) -> str:
    r"""Markdown: FedE's model fusion (``fedgraph fuse``) on FB15k-237 R3 and
    UMLS R3: the single, federated and fused models' weighted test metrics."""
    lines = [
        "| data | model | MRR | Hits@1 | Hits@3 | Hits@10 | MRR per client | results file |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for data, prefix in FUSION_DATA:
        shown = set()
        for kind in ("fusionsum", "fusion"):
            name = f"{prefix}-fede-{kind}-transe.json"
            doc = load_json(results / name)
            if doc is None:
                continue
            per = _per_client(doc)
            for key, label, m in _fusion_rows(doc, kind):
                if key != "fusion" and key in shown:
                    continue
                shown.add(key)
                clients = " / ".join(f"{100 * x:.2f}" for x in per[key])
                lines.append(
                    f"| {data} | {label} | {100 * m['mrr']:.2f} | {100 * m['hits@1']:.2f} "
                    f"| {100 * m['hits@3']:.2f} | {100 * m['hits@10']:.2f} | {clients} "
                    f"| {results_link(name)} |"
                )
    return "\n".join(lines)


def umls_table(results: Path) -> str:
    r"""Markdown: the small UMLS federation (3 clients split by relation)."""
    lines = [
        "| method | MRR | Hits@1 | Hits@10 | MRR per client | best / run length "
        "| MiB up + down | results file |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for _, label, name, doc in present_runs(
        results, UMLS_METHODS, "umls-r3-{}-transe.json"
    ):
        w = doc["weighted"]
        clients = " / ".join(f"{100 * c['mrr']:.2f}" for c in doc["clients"])
        comm = doc.get("comm") or {}
        mib = (comm.get("bytes_up", 0) + comm.get("bytes_down", 0)) / 2**20
        lines.append(
            f"| {label} | {100 * w['mrr']:.2f} | {100 * w['hits@1']:.2f} | "
            f"{100 * w['hits@10']:.2f} | {clients} | {run_length(doc)} | "
            f"{mib:.1f} | {results_link(name)} |"
        )
    return "\n".join(lines)


def _fusion_bars(results: Path, img: Path) -> list[Path]:
    from fedgraph.report.plots import grouped_bars

    doc = load_json(results / "fedlu-r3-fede-fusionsum-transe.json")
    fitted = load_json(results / "fedlu-r3-fede-fusion-transe.json")
    if doc is None:
        return []
    bars = {
        "Independent": [100 * c["single"]["mrr"] for c in doc["clients"]],
        "FedE": [100 * c["federated"]["mrr"] for c in doc["clients"]],
        "fused, plain sum": [100 * c["mrr"] for c in doc["clients"]],
    }
    if fitted is not None:
        bars["fused, fitted"] = [100 * c["mrr"] for c in fitted["clients"]]
    return [
        grouped_bars(
            [f"client {c['client']}" for c in doc["clients"]],
            bars,
            img / "fede-fusion-clients.svg",
            ylabel="test MRR (%)",
            title="FB15k-237 R3, TransE: model fusion per client",
        )
    ]


def figures(results: Path, img: Path) -> list[Path]:
    r"""UMLS validation curves and the fusion's test MRR per client."""
    from fedgraph.report.plots import line_plot

    curves = {}
    for method, label in UMLS_METHODS:
        doc = load_json(results / f"umls-r3-{method}-transe.json")
        if doc is not None and method not in ("independent", "centralized"):
            curves[label] = valid_curve(doc)
    curve = line_plot(
        curves,
        img / "fede-umls-curves.svg",
        xlabel="round",
        ylabel="validation MRR (%)",
        title="UMLS, 3 clients by relation, TransE: weighted validation MRR",
    )
    return [curve, *_fusion_bars(results, img)]


def wins(first: Sequence[float], then: Sequence[float]) -> int:
    r"""The clients where ``then`` is above ``first``."""
    return sum(b > a for a, b in zip(first, then, strict=True))


def verdicts(results: Path) -> list[Row]:
    r"""FedE on FedLU's R3 and on UMLS R3 (TransE): FedE against Independent
    on every client (weighted test MRR points), and Table 5's fusion gain
    with FedE's fitted layer (positive: reproduced)."""
    runs = {p: load_json(results / f"{p}-fede-fusion-transe.json")
            for p in ("fedlu-r3", "umls-r3")}  # fmt: skip
    if any(doc is None for doc in runs.values()):
        return [("beats-single", "FedE beats Independent", "", "not run", "not run")]
    every, gains, cells, won = [], [], [], [0, 0]
    for label, doc in zip(("R3", "UMLS"), runs.values(), strict=True):
        single = [c["single"]["mrr"] for c in doc["clients"]]
        fed = [c["federated"]["mrr"] for c in doc["clients"]]
        gain = 100 * (doc["weighted_federated"]["mrr"] - doc["weighted_single"]["mrr"])
        every.append(wins(single, fed) == len(single))
        won = [won[0] + wins(single, fed), won[1] + len(single)]
        cells.append(f"{label} {wins(single, fed)} / {len(single)} ({gain:+.2f})")
        gains.append(100 * (doc["weighted"]["mrr"] - doc["weighted_federated"]["mrr"]))
    fusion = published_table("fede", "fusion")
    t5 = [100 * (w - wo) for wo, w in fusion.values()]
    return [
        ("beats-single", "Tables 3–4: FedE beats Independent on every client",
         "every client", "; ".join(cells),
         f"{verdict_word(every)} ({won[0]} of {won[1]} clients)"),
        ("fusion", "Table 5: model fusion adds about one point", slash(t5, "+.2f"),
         f"R3 {gains[0]:+.2f} / UMLS {gains[1]:+.2f}",
         f"{verdict_word([g > 0 for g in gains])} (Δ "
         f"{slash([g - t5[0] for g in gains], '+.2f')} against FB15k-237-Fed3)"),
    ]  # fmt: skip


BLOCKS: dict[str, Callable[[Path], str]] = {
    "fede-fusion": fusion_table,
    "fede-fusion-commands": lambda r: commands_list(
        r,
        [
            f"{p}-fede-{k}-transe.json"
            for _, p in FUSION_DATA
            for k in ("fusionsum", "fusion")
        ],
    ),  # fmt: skip
    "fede-umls": umls_table,
    "fede-umls-commands": lambda r: commands_list(
        r, [f"umls-r3-{m}-transe.json" for m, _ in UMLS_METHODS]
    ),
    "fede-figures": lambda r: figures_markdown(
        "fede-umls-curves", "fede-fusion-clients"
    ),
}
