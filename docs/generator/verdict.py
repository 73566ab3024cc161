r"""Verdict tables: each results page opens with its claims, the published
and fedgraph numbers, a verdict and the one-line reason from
``docs/papers/verdicts.json``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fedgraph.report.files import load_json
from generator import files

#: one verdict row: ``(key, claim, published, fedgraph, verdict)``; the
#: one-line reason is ``verdicts.json[page]["why"][key]``.
Row = tuple[str, str, str, str, str]

VERDICT_WORDS = ("reproduced", "partly", "not reproduced")

#: the one-line reasons behind the verdicts, beside the pages.
WHY_FILE = files.PAGES / "verdicts.json"


def verdict_word(ok: Sequence[bool]) -> str:
    r"""``reproduced`` when every check holds, ``not reproduced`` when none
    does, else ``partly``."""
    if all(ok):
        return "reproduced"
    return "partly" if any(ok) else "not reproduced"


def within(deltas: Sequence[float], tol: Sequence[float], fmt: str = "+.2f") -> str:
    r"""The verdict of differences ``deltas`` each within ``tol``, with them."""
    ok = [abs(d) <= t for d, t in zip(deltas, tol, strict=True)]
    shown = " / ".join(format(d, fmt) for d in deltas)
    return f"{verdict_word(ok)} (Δ {shown})"


def slash(values: Sequence[float], fmt: str = ".2f") -> str:
    r"""``values`` formatted with ``fmt`` and joined by `` / ``."""
    return " / ".join(format(v, fmt) for v in values)


def word_of(verdict: str) -> str:
    r"""The verdict word a verdict cell starts with (``""`` for ``not run``)."""
    return next((w for w in VERDICT_WORDS if verdict.startswith(w)), "")


def verdict_reasons(path: Path | None = None) -> dict[str, Any]:
    r"""``verdicts.json``: per page its ``paper``, a ``summary`` and ``why``
    (row key → the one-line reason)."""
    path = WHY_FILE if path is None else path
    doc = load_json(path)
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: missing or not a JSON object")
    return doc


def _reason(reasons: dict[str, Any], page: str, key: str) -> str:
    why = (reasons.get(page) or {}).get("why") or {}
    if key not in why:
        raise ValueError(
            f"{WHY_FILE.name}: page `{page}` has no reason for the row `{key}`"
        )
    return str(why[key])


def verdict_table(page: str, rows: list[Row], rule: str) -> str:
    r"""Markdown: ``page``'s verdict table (claim, published, fedgraph,
    verdict, why) of ``rows``, then how the verdict is decided (``rule``)."""
    reasons = verdict_reasons()
    lines = [
        "| claim | published | fedgraph | verdict | why |",
        "|---|---|---|---|---|",
    ]
    for key, *cells in rows:
        why = "–" if cells[-1] == "not run" else _reason(reasons, page, key)
        lines.append("| " + " | ".join([*cells, why]) + " |")
    return "\n".join(lines) + f"\n\nVerdict: {rule}"


def at_a_glance(rows_per_page: dict[str, list[Row]]) -> str:
    r"""Markdown: one row per paper with its claims by verdict and its
    summary (``verdicts.json``)."""
    reasons = verdict_reasons()
    lines = ["| paper | reproduced | partly | not reproduced | in one line |",
             "|---|---|---|---|---|"]  # fmt: skip
    for page, rows in rows_per_page.items():
        cells = ["; ".join(r[1] for r in rows if word_of(r[4]) == w) or "–"
                 for w in VERDICT_WORDS]  # fmt: skip
        paper = f"[{reasons[page]['paper']}]({page}.md)"
        lines.append(
            "| " + " | ".join([paper, *cells, reasons[page]["summary"]]) + " |"
        )
    return "\n".join(lines)
