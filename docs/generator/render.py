r"""Rewriting the pages' generated blocks and figures, and checking them."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from fedgraph.data.io import atomic_write_text
from generator.files import PAGES, RESULTS
from generator.pages import BLOCKS, FIGURES

BLOCK = re.compile(
    r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>(?:(?!<!-- generated: ).)*?)"
    r"(<!-- end generated -->)",
    re.S,
)


def render_page(text: str, results: Path = RESULTS, page: str = "") -> str:
    r"""``text`` with every generated block rewritten from ``results``.

    Raises:
        ValueError: if a block names no entry of :data:`generator.pages.BLOCKS`.
    """

    def sub(m: re.Match[str]) -> str:
        name = m.group("name")
        if name not in BLOCKS:
            raise ValueError(f"{page}: unknown generated block {name!r}")
        return m.group(1) + BLOCKS[name](results).rstrip("\n") + "\n" + m.group(4)

    return BLOCK.sub(sub, text)


def generate(
    pages: Path = PAGES, results: Path = RESULTS, out: Path | None = None
) -> list[Path]:
    r"""Rewrites the pages' generated blocks and draws their figures.

    Args:
        pages: the folder of the results pages (``docs/papers``).
        results: the folder of the results files (``docs/results``).
        out: where to write the pages and ``img/`` (default: ``pages``
            itself; a check writes elsewhere and compares).

    Returns:
        the pages and figures written.
    """
    out = pages if out is None else out
    written = []
    for page in sorted(pages.glob("*.md")):
        new = render_page(page.read_text(), results, page=str(page))
        target = out / page.name
        if not target.exists() or target.read_text() != new:
            atomic_write_text(target, new)
        written.append(target)
    for name, draw in FIGURES.items():
        if (pages / f"{name}.md").exists():
            written += draw(results, out / "img")
    return written


def _differs(old: Path, new: Path) -> bool:
    r"""Whether ``new`` differs from ``old`` (a figure only when ``old`` was
    drawn by this matplotlib version: another one may write other text)."""
    import matplotlib

    a = old.read_bytes()
    if (
        new.suffix == ".svg"
        and f"Matplotlib v{matplotlib.__version__}".encode() not in a
    ):
        return False
    return a != new.read_bytes()


def stale(
    pages: Path = PAGES, results: Path = RESULTS, scratch: Path | None = None
) -> list[str]:
    r"""Pages and figures that differ from what :func:`generate` would write."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(scratch or tmp)
        bad = []
        for path in generate(pages, results, out):
            rel = path.relative_to(out)
            if not (pages / rel).exists():
                bad.append(f"{rel}: missing")
            elif _differs(pages / rel, path):
                bad.append(f"{rel}: out of date")
        return bad
