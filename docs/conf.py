"""Sphinx configuration of the fedgraph documentation.

Build (warnings are errors, internal links checked)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The CLI reference and the registry tables are generated from the code at build
time (:mod:`fedgraph.cli.reference`); the results pages under ``docs/papers/``
are generated from ``docs/results/*.json`` by ``python -m fedgraph.report.papers``.
"""

from __future__ import annotations

import sys
from pathlib import Path

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
html_title = "fedgraph"
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path: list[str] = []

write_generated_pages(Path(__file__).parent / "reference")
