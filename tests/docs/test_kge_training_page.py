r"""The KGE training page (docs/kge-training.md) quotes its results files: every
table row that links a file under ``results/`` shows that file's numbers, and
the verdict table's gap is the difference of the two MRRs it shows, so the page
cannot drift from the runs behind it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "kge-training.md"
VERDICT_HEADER = "| KG | model and regime | fedgraph MRR | published MRR | gap | why |"
LINK = re.compile(r"\]\((results/[^)]+\.json)\)")


def tables(text: str) -> list[list[list[str]]]:
    r"""Every Markdown table of ``text`` as rows of cells (header first,
    the separator row left out)."""
    out: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(set(c) <= set("-: ") for c in cells):
                current.append(cells)
        elif current:
            out.append(current)
            current = []
    return out


def number(cell: str) -> str:
    r"""The first decimal number written in ``cell``."""
    found = re.search(r"[+-]?\d+\.\d+", cell)
    assert found, f"no number in {cell!r}"
    return found.group(0)


def results(cell: str) -> dict:
    link = LINK.search(cell)
    assert link, f"no results link in {cell!r}"
    return json.loads((ROOT / "docs" / link.group(1)).read_text(encoding="utf-8"))


def best_valid_mrr(doc: dict) -> float:
    return max(entry["valid"]["mrr"] for entry in doc["history"][0])


#: column header -> the value a results file gives it, as the page writes it
COLUMNS = {
    "test MRR": lambda d: f"{d['weighted']['mrr']:.3f}",
    "test Hits@10": lambda d: f"{d['weighted']['hits@10']:.3f}",
    "valid MRR": lambda d: f"{best_valid_mrr(d):.3f}",
    "best epoch": lambda d: (
        f"{d['clients'][0]['best_epoch']} of {d['clients'][0]['epochs']}"
    ),
}


def page_tables() -> list[list[list[str]]]:
    return tables(PAGE.read_text(encoding="utf-8"))


def test_the_page_opens_with_the_verdict_table():
    text = PAGE.read_text(encoding="utf-8")
    first = next(line for line in text.splitlines() if line.startswith("|"))
    assert first == VERDICT_HEADER


def verdict_rows() -> list[pytest.param]:
    rows = page_tables()[0][1:]
    return [pytest.param(row, id=f"{row[0]}-{row[1]}") for row in rows]


@pytest.mark.parametrize("row", verdict_rows())
def test_a_verdict_row_shows_its_results_file_and_the_gap(row):
    kg, _, ours, published, gap, why = row
    shown = number(ours)
    assert shown == f"{results(ours)['weighted']['mrr']:.3f}"
    if published == "—":
        assert gap == "—"
    else:
        expected = round(float(shown) - float(number(published)), 3)
        assert gap == f"{expected:+.3f}"
    assert why


def linked_rows() -> list[pytest.param]:
    out = []
    for table in page_tables()[1:]:
        header = table[0]
        for row in table[1:]:
            if any(LINK.search(c) for c in row):
                out.append(pytest.param(header, row, id=LINK.search(" ".join(row))[1]))
    return out


def test_the_per_kg_tables_link_every_run():
    files = {
        LINK.search(" ".join(row))[1] for _, row in (p.values for p in linked_rows())
    }
    # the FB15k-237 runs have a page of their own (papers/kge-fb15k237.md)
    on_disk = {
        f"results/{p.name}"
        for p in (ROOT / "docs" / "results").glob("kge-*-*.json")
        if not p.name.startswith("kge-fb15k237-")
    }
    assert files == on_disk


@pytest.mark.parametrize(("header", "row"), linked_rows())
def test_a_per_kg_row_shows_its_results_file(header, row):
    doc = results(" ".join(row))
    checked = 0
    for name, cell in zip(header, row, strict=True):
        if name in COLUMNS:
            assert cell.strip("*") == COLUMNS[name](doc), name
            checked += 1
    assert checked >= 3


def test_the_speed_table_shows_its_results_file():
    doc = json.loads(
        (ROOT / "docs" / "results" / "pykeen-1vsall-speed-fb15k-237.json").read_text(
            encoding="utf-8"
        )
    )
    text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    section = text.split("### One epoch of 1-vs-all training", 1)[1]
    rows = {row[0]: row for row in tables(section)[0][1:]}
    for label, key in (
        ("PyKEEN, LCWA", "pykeen_lcwa"),
        ("fedgraph, `kvsall` (the same rows)", "fedgraph_kvsall"),
        ("fedgraph, `1vsall`", "fedgraph_1vsall"),
    ):
        part = doc[key]
        _, rows_cell, epoch, per_row = rows[label]
        assert rows_cell == f"{part['rows']:,}"
        assert number(epoch) == f"{part['cpu_seconds']:.1f}"
        assert number(per_row) == f"{1000 * part['cpu_seconds'] / part['rows']:.2f}"
    pk, kv = doc["pykeen_lcwa"], doc["fedgraph_kvsall"]
    assert (
        f"({pk['cpu_seconds'] / kv['cpu_seconds']:.2f}×)"
        in rows["fedgraph, `kvsall` (the same rows)"][2]
    )
