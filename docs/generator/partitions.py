r"""The partitions page (``docs/papers/partitions.md``): the random relation
split against FedE's Table 2, the spectral split and the overlap against
FedLU (``published/fedlu.json``), FedAlign's client sizes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from fedgraph.report.files import load_json
from generator.fedalign import partition_row
from generator.files import published_table
from generator.verdict import Row, slash, verdict_word, within

PARTITION_FILE = "fb15k-237-partition.json"

RULE = (
    "Mean entities per client within our seed-to-seed standard deviation; "
    "spectral clients with the published triples; counts exact; client sizes "
    "within the spread of the mean over partition seeds."
)


def _n(x: float) -> str:
    return f"{x:,.1f}"


def _relation_splits(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    rows = [(f"FB15k-237, {k}", v) for k, v in doc.get("relation", {}).items()]
    if "nell_995_fed3" in doc:
        rows.append(("NELL-995, 3", doc["nell_995_fed3"]))
    return rows


def relation_split_table(results: Path) -> str:
    r"""Markdown: mean entities per client of the random relation split
    against FedE's Table 2 (``fb15k-237-partition.json``, seeds 0–9)."""
    doc = load_json(results / PARTITION_FILE) or {}
    lines = [
        "| data, clients | mean entities per client, mean ± std over seeds [min, max] "
        "| FedE Table 2 | mean vs FedE | worst seed vs FedE |",
        "|---|---|---|---|---|",
    ]
    for label, v in _relation_splits(doc):
        m = v["mean_entities"]
        worst = (
            f"{100 * v['max_abs_rel_error']:.2f} %" if "max_abs_rel_error" in v else "–"
        )
        lines.append(
            f"| {label} | {_n(m['mean'])} ± {_n(m['std'])} [{_n(m['min'])}, "
            f"{_n(m['max'])}] | {_n(v['fede_table2'])} | "
            f"{100 * v['rel_error_of_mean']:+.2f} % | {worst} |"
        )
    return "\n".join(lines)


def spectral_split_table(results: Path) -> str:
    r"""Markdown: the spectral relation split against FedLU's published
    C3/C5/C10 (client triples of seed 0 and the adjusted Rand index of the
    relation clusters over seeds 0–9)."""
    doc = load_json(results / PARTITION_FILE) or {}
    lines = [
        "| clients | ours (seed 0), triples per client | FedLU's published | "
        "ARI mean [min] | seconds (seed 0) |",
        "|---|---|---|---|---|",
    ]
    for k, v in doc.get("spectral", {}).items():
        ours = " / ".join(f"{x:,}" for x in v["triples_seed0"])
        pub = " / ".join(f"{x:,}" for x in v["published_triples"])
        same = "identical" if v["triples_seed0"] == v["published_triples"] else pub
        lines.append(
            f"| {k} | {ours} | {same} | {v['ari']['mean']:.4f} [{v['ari']['min']:.4f}] "
            f"| {v['seconds_seed0']:.1f} |"
        )
    return "\n".join(lines)


def _get(doc: dict[str, Any], dotted: str) -> Any:
    for key in dotted.split("."):
        doc = doc[key]
    return doc


def published_partition_table(results: Path) -> str:
    r"""Markdown: statistics of FedLU's published C3 and R3 clients."""
    doc = load_json(results / PARTITION_FILE) or {}
    lines = [
        "| partition | entities | shared entities | training triples | mean degree "
        "| clustering |",
        "|---|---|---|---|---|---|",
    ]
    for name in ("C3", "R3"):
        cl = (doc.get(f"published_{name}") or {}).get("clients", [])
        if not cl:
            continue

        def col(key: str, fmt: str, cl=cl) -> str:
            return " / ".join(format(_get(c, key), fmt) for c in cl)

        lines.append(
            f"| {name}, clients 0 / 1 / 2 | {col('entities', ',')} | "
            f"{col('shared_entities', ',')} | {col('triples.train', ',')} | "
            f"{col('mean_degree', '.2f')} | {col('clustering', '.4f')} |"
        )
    return "\n".join(lines)


def _relation_split_rows(doc: dict[str, Any]) -> list[Row]:
    out = []
    for label, v in _relation_splits(doc):
        m = v["mean_entities"]
        delta = m["mean"] - v["fede_table2"]
        word = verdict_word([abs(delta) <= m["std"]])
        out.append((label, f"FedE Table 2: {label} clients",
                    f"{v['fede_table2']:,.1f} entities", f"{m['mean']:,.1f} ± {m['std']:,.1f}",
                    f"{word} (Δ {100 * v['rel_error_of_mean']:+.2f} %)"))  # fmt: skip
    return out


def _spectral_row(doc: dict[str, Any]) -> Row:
    spectral = doc.get("spectral", {})
    same = [v["triples_seed0"] == v["published_triples"] for v in spectral.values()]
    ari = " / ".join(f"C{k} {v['ari']['mean']:.4f}" for k, v in spectral.items())
    return ("spectral", "FedLU's spectral C3 / C5 / C10: triples per client",
            "FedLU's published clients", f"ARI {ari}",
            f"{verdict_word(same)} ({sum(same)} of {len(same)} identical)")  # fmt: skip


def _overlap_row(doc: dict[str, Any]) -> Row:
    overlap = published_table("fedlu", "overlapping_entities")
    pub = list(overlap.values())
    ours = [doc[f"published_{k}"]["overall"]["shared_entities"] for k in overlap]
    deltas = [o - p for o, p in zip(ours, pub, strict=True)]
    return ("overlap", "FedLU §5.1: overlapping entities, C3 / R3", slash(pub, ","),
            slash(ours, ","), within(deltas, [0, 0], "+,"))  # fmt: skip


def verdicts(results: Path) -> list[Row]:
    r"""FedE's Table 2 (mean entities per client; within our seed-to-seed
    std), FedLU's spectral clients (identical triples per client) and
    overlapping entities (exact), FedAlign's Table 3."""
    doc = load_json(results / PARTITION_FILE)
    if doc is None:
        return [("relation", "FedE Table 2", "", "not run", "not run")]
    rows = [*_relation_split_rows(doc), _spectral_row(doc), _overlap_row(doc)]
    return [*rows, partition_row(results)]


BLOCKS: dict[str, Callable[[Path], str]] = {
    "partition-relation": relation_split_table,
    "partition-spectral": spectral_split_table,
    "partition-published": published_partition_table,
}
