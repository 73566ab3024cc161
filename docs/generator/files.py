r"""Where the pages, results and published numbers live, and how they are read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parents[1]
RESULTS = DOCS / "results"
PAGES = DOCS / "papers"
PUBLISHED = PAGES / "published"
LINK = "../results/"  # from a page under docs/papers/ to a results file


def load_json(path: Path) -> Any | None:
    r"""The JSON document at ``path``, or ``None`` when there is no such file."""
    if not path.exists():
        return None
    with open(path) as f:
        return json.load(f)


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
