r"""The built site: math rendered by a MathJax copied into the site (no CDN),
the whole navigation in the left sidebar of every page, the sections in the
header with no "More" dropdown, and the version on the landing page.

The site is built once for the module (``sphinx -W``, as in
``test_site.py``) and read with BeautifulSoup (a dependency of the theme).
"""

from __future__ import annotations

import importlib.util
import os
import posixpath
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urljoin, urlparse

import pytest

import fedgraph

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EXTRA = (
    "sphinx",
    "myst_parser",
    "pydata_sphinx_theme",
    "bs4",
    "sphinx-mathjax-offline",
)
TOCTREE = re.compile(r"^```\{toctree\}\n(.*?)^```", re.S | re.M)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    r"""The HTML site built from ``docs/`` with warnings as errors."""
    if not all(importlib.util.find_spec(m) for m in EXTRA):
        msg = "the docs extra is not installed (pip install -e '.[docs]')"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    out = tmp_path_factory.mktemp("site") / "html"
    argv = ["-m", "sphinx", "-E", "-W", "--keep-going", "-q", "-b", "html"]
    done = subprocess.run(
        [sys.executable, *argv, str(DOCS), str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return out


def soup_of(path: Path):
    from bs4 import BeautifulSoup

    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def pages(site: Path) -> list[Path]:
    return sorted(
        p for p in site.rglob("*.html") if p.relative_to(site).parts[0][0] != "_"
    )


def root_toctrees() -> list[tuple[str, list[str]]]:
    r"""``(caption, entries)`` of each toctree of ``docs/index.md``, in order."""
    trees = []
    for body in TOCTREE.findall((DOCS / "index.md").read_text()):
        lines = [line.strip() for line in body.splitlines() if line.strip()]
        caption = next(
            line.split(":", 2)[2].strip()
            for line in lines
            if line.startswith(":caption:")
        )
        trees.append((caption, [line for line in lines if not line.startswith(":")]))
    return trees


def targets(page: Path, site: Path, links) -> set[str]:
    r"""The site-relative pages that ``links`` (``<a>`` tags on ``page``) point to."""
    base = page.relative_to(site).as_posix()
    found = set()
    for a in links:
        url = urlparse(urljoin(base, a.get("href", "")))
        if not url.scheme and not url.netloc and url.path:
            found.add(posixpath.normpath(url.path))
    return found


def test_math_is_typeset_by_a_local_mathjax(site):
    math_pages = 0
    for page in pages(site):
        soup = soup_of(page)
        scripts = [
            s["src"] for s in soup("script", src=True) if "mathjax" in s["src"].lower()
        ]
        assert not [s for s in scripts if urlparse(s).scheme or s.startswith("//")], (
            page
        )
        if soup.select(".math"):
            math_pages += 1
            assert len(scripts) == 1, f"{page}: MathJax scripts {scripts}"
            assert (page.parent / scripts[0]).resolve().is_file(), scripts[0]
        for tag in soup(["script", "style", "pre", "code", "textarea"]) + soup.select(
            ".math"
        ):
            tag.decompose()
        text = soup.get_text()
        for raw in ("\\[", "\\(", "$$"):
            assert raw not in text, f"{page}: raw {raw} outside the math elements"
    assert math_pages >= 2
    fonts = site / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2"
    assert (fonts / "MathJax_Main-Regular.woff").is_file()


def test_every_page_shows_the_whole_navigation(site):
    expected = {f"{entry}.html" for _, entries in root_toctrees() for entry in entries}
    assert {"reference/api.html", "reference/cli.html", "papers/index.html"} <= expected
    assert expected <= {page.relative_to(site).as_posix() for page in pages(site)}
    for page in pages(site):
        nav = soup_of(page).select_one("nav.bd-docs-nav")
        assert nav is not None, f"{page}: no sidebar navigation"
        missing = expected - targets(page, site, nav("a"))
        if page.relative_to(site).as_posix() in expected:
            # the current page is linked as "#"
            missing.discard(page.relative_to(site).as_posix())
        assert not missing, f"{page}: the sidebar lacks {sorted(missing)}"
        captions = [p.get_text(strip=True) for p in nav.select("p.caption")]
        assert captions == [caption for caption, _ in root_toctrees()], page


def test_header_lists_the_sections_without_a_dropdown(site):
    trees = root_toctrees()
    for name in ("index.html", "data.html", "reference/cli.html"):
        page = site / name
        header = soup_of(page).select_one("header ul.bd-navbar-elements")
        assert header is not None, f"{page}: no header navigation"
        assert header.select(".dropdown-toggle") == [], f"{page}: a 'More' dropdown"
        links = header("a")
        assert [a.get_text(strip=True) for a in links] == [c for c, _ in trees]
        hrefs = [targets(page, site, [a]) for a in links]
        assert hrefs == [{f"{entries[0]}.html"} for _, entries in trees]
    current = soup_of(site / "reference" / "cli.html").select(
        "header ul.bd-navbar-elements li.current a"
    )
    assert [a.get_text(strip=True) for a in current] == ["Reference"]


def test_landing_page_shows_the_version(site):
    soup = soup_of(site / "index.html")
    logo = soup.select_one(".navbar-brand")
    assert logo.get_text(" ", strip=True) == f"fedgraph {fedgraph.__version__}"
    assert soup.title.get_text().endswith(f"fedgraph {fedgraph.__version__}")
