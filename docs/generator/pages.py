r"""The results pages: each page's module, and every generated block by name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from generator import (
    fedalign,
    fede,
    fede_claims,
    fedlu,
    fedmkgc,
    feds,
    kge_fb15k237,
    optimisers,
    partitions,
    privacy,
)
from generator.verdict import Row, at_a_glance, verdict_table

#: page (``docs/papers/PAGE.md``) → its module (``verdicts``, ``RULE``,
#: ``BLOCKS``, and ``figures`` where it draws some), in the order of the
#: index's "At a glance".
PAGES: dict[str, ModuleType] = {
    "fedlu": fedlu,
    "feds": feds,
    "fede": fede,
    "fede-claims": fede_claims,
    "server-optimisers": optimisers,
    "fedalign": fedalign,
    "fedmkgc": fedmkgc,
    "partitions": partitions,
    "privacy": privacy,
    "kge-fb15k237": kge_fb15k237,
}
VERDICT_PAGES = tuple(PAGES)


def verdict_rows(page: str, results: Path) -> list[Row]:
    r"""The verdict rows of ``page`` from the results files."""
    return PAGES[page].verdicts(results)


def page_verdict_table(page: str, results: Path) -> str:
    r"""Markdown: ``page``'s verdict table, then how its verdict is decided."""
    return verdict_table(page, verdict_rows(page, results), PAGES[page].RULE)


def glance(results: Path) -> str:
    r"""Markdown: the index's "At a glance", one row per page."""
    return at_a_glance({page: verdict_rows(page, results) for page in PAGES})


def _verdict_block(page: str) -> Callable[[Path], str]:
    return lambda results: page_verdict_table(page, results)


#: generated block name → its Markdown, from the results folder.
BLOCKS: dict[str, Callable[[Path], str]] = {
    **{name: block for m in PAGES.values() for name, block in m.BLOCKS.items()},
    "at-a-glance": glance,
    **{f"verdict-{page}": _verdict_block(page) for page in PAGES},
}

#: page → the function drawing its figures into ``img/``.
FIGURES: dict[str, Callable[[Path, Path], list[Path]]] = {
    page: m.figures for page, m in PAGES.items() if hasattr(m, "figures")
}
