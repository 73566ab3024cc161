r"""Where the pages, results and published numbers live, how they are read,
and the Markdown that shows them (tables, links to results files, figures)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from fedgraph.report.files import LINK, load_json

DOCS = Path(__file__).resolve().parents[1]
RESULTS = DOCS / "results"
PAGES = DOCS / "papers"
PUBLISHED = PAGES / "published"


def results_link(name: str) -> str:
    r"""Markdown: the results file ``name`` as a link from a results page."""
    return f"[`{name}`]({LINK}{name})"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    r"""Markdown: a table of the ``header`` cells and one line per row of
    cells."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def present_runs(
    results: Path, runs: Sequence[tuple[str, str]], pattern: str
) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    r"""``(method, label, file name, results)`` of each ``(method, label)``
    of ``runs`` whose results file ``pattern.format(method)`` is in
    ``results``, in the order of ``runs`` (runs not made yet are left out)."""
    for method, label in runs:
        name = pattern.format(method)
        doc = load_json(results / name)
        if doc is not None:
            yield method, label, name, doc


def published(paper: str, folder: Path | None = None) -> dict[str, Any]:
    r"""``published/PAPER.json``: the numbers a paper publishes (its
    ``source`` names the paper and the tables they come from).

    Raises:
        ValueError: if the file is missing or not a JSON object.
    """
    path = (folder or PUBLISHED) / f"{paper}.json"
    doc = load_json(path)
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: missing or not a JSON object")
    return doc


def published_table(paper: str, table: str) -> Any:
    r"""The ``values`` of table ``table`` in ``published/PAPER.json``.

    Raises:
        ValueError: if the file has no such table.
    """
    doc = published(paper)
    if not isinstance(doc.get(table), dict) or "values" not in doc[table]:
        raise ValueError(f"{PUBLISHED / paper}.json: no table `{table}` with `values`")
    return doc[table]["values"]


def figures_markdown(*names: str) -> str:
    r"""Markdown: the figures ``img/NAME.svg``, one paragraph each."""
    return "\n\n".join(f"![{n}](img/{n}.svg)" for n in names)
