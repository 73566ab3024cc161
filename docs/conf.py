"""Sphinx configuration of the fedgraph documentation.

Build (warnings are errors, internal links checked)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The CLI reference and the registry tables are generated from the code at build
time (:mod:`fedgraph.cli.reference`); the results pages under ``docs/papers/``
are generated from ``docs/results/*.json`` by ``python docs/generate.py``.
"""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, metadata
from pathlib import Path

from sphinx import addnodes

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import fedgraph  # noqa: E402
from fedgraph.cli.reference import write_generated_pages  # noqa: E402

project = "fedgraph"
author = "fedgraph developers"
copyright = "fedgraph developers"
release = fedgraph.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    # MathJax 3 copied into the site (_static/mathjax): math renders offline
    "sphinx-mathjax-offline",
    "sphinx.ext.viewcode",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "results/curves", "Thumbs.db", ".DS_Store"]
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 4
suppress_warnings = ["myst.header"]

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "pydata_sphinx_theme"
html_title = f"fedgraph {release}"
templates_path = ["_templates"]
# the whole site (every caption of the root toctree) in the left sidebar of
# every page; the captions themselves in the header
html_sidebars = {"**": ["sidebar-collapse", "sidebar-site-nav"]}
html_theme_options = {
    "navbar_center": ["navbar-sections"],
    "navigation_depth": 2,
    "show_nav_level": 1,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path: list[str] = []


def repository_url() -> str | None:
    r"""The repository recorded under ``[project.urls]`` in pyproject.toml
    (``Repository`` or ``Source``; read from the installed package's metadata,
    so reinstall after adding one), or None."""
    try:
        entries = metadata("fedgraph-kg").get_all("Project-URL") or []
    except PackageNotFoundError:
        return None
    for entry in entries:
        label, _, url = entry.partition(",")
        if label.strip().lower() in {"repository", "source", "source code"}:
            return url.strip()
    return None


def icon_links() -> list[dict]:
    r"""The header's link to the repository, where pyproject.toml records one."""
    url = repository_url()
    if url is None:
        return []
    icon = "fa-brands fa-github" if "github.com" in url else "fa-solid fa-code-branch"
    return [{"name": "Repository", "url": url, "icon": icon, "type": "fontawesome"}]


html_theme_options["icon_links"] = icon_links()


def add_site_sections(app, pagename, templatename, context, doctree) -> None:
    r"""``site_sections`` for the header: per caption of the root toctree, its
    first page's link and whether ``pagename`` lies in that section."""
    root = app.config.root_doc
    parent = {c: p for p, cs in app.env.toctree_includes.items() for c in cs}
    top, seen = pagename, set()
    while parent.get(top, root) != root and top not in seen:
        seen.add(top)
        top = parent[top]
    sections = []
    for tree in app.env.tocs[root].findall(addnodes.toctree):
        docs = [doc for _, doc in tree["entries"]]
        href = context["pathto"](docs[0])
        sections.append(
            {"caption": tree["caption"], "href": href, "current": top in docs}
        )
    context["site_sections"] = sections


def setup(app) -> None:
    app.connect("html-page-context", add_site_sections)


write_generated_pages(Path(__file__).parent / "reference")
