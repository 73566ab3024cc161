r"""The documentation: the site builds with warnings as errors (broken
internal links and references included), and every tutorial runs.

A tutorial's ```python blocks run in one namespace, in order with its
```bash blocks, whose ``fedgraph ...`` lines run through
:func:`fedgraph.cli.main.main` (exit status 0 required); ```sh and ```text
blocks are shown, not run. Each page runs in an empty folder on the data
under ``FEDGRAPH_DATA``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from fedgraph.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [
    "getting-started.md",
    "concepts/index.md",
    "tutorials/own-triples.md",
    "tutorials/fede-vs-independent.md",
    "tutorials/unlearning.md",
    "tutorials/flower.md",
    "tutorials/own-method.md",
]
BLOCK = re.compile(r"^```(python|bash)\n(.*?)^```", re.S | re.M)


def run_page(page: Path) -> None:
    r"""Runs the page's python and bash blocks in order in the current folder."""
    namespace: dict = {"__name__": "__tutorial__"}
    for lang, body in BLOCK.findall(page.read_text()):
        if lang == "python":
            exec(compile(body, str(page), "exec"), namespace)
            continue
        for line in body.replace("\\\n", " ").splitlines():
            line = line.split(" #")[0].strip()
            if not line or line.startswith("#"):
                continue
            argv = shlex.split(line)
            assert argv[0] == "fedgraph", f"{page.name}: not a fedgraph command: {line}"
            assert main(argv[1:]) == 0, f"{page.name}: `{line}` failed"


@pytest.mark.dataset
@pytest.mark.slow
@pytest.mark.parametrize("name", PAGES)
def test_tutorial_runs(name, data_root, tmp_path, monkeypatch, one_thread):
    if name == "tutorials/flower.md":
        pytest.importorskip("flwr", reason="the Flower tutorial needs the flower extra")
    from fedgraph.federated import algorithms

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FEDGRAPH_DATA", str(data_root))
    # a tutorial may register an algorithm: the registries are restored after
    algorithms.algorithms()  # load the built-in ones before copying
    monkeypatch.setattr(algorithms, "_REGISTRY", dict(algorithms._REGISTRY))
    run_page(DOCS / name)


def test_every_tutorial_is_in_the_site_and_tested():
    index = (DOCS / "index.md").read_text()
    for page in (DOCS / "tutorials").glob("*.md"):
        assert f"tutorials/{page.stem}" in index, f"{page} is not in the site's toctree"
        assert f"tutorials/{page.name}" in PAGES, f"{page} is not run by this test"


def _have_docs_extra() -> bool:
    return all(
        importlib.util.find_spec(m)
        for m in ("sphinx", "myst_parser", "pydata_sphinx_theme")
    )


@pytest.mark.slow
def test_site_builds_strictly(tmp_path):
    if not _have_docs_extra():
        if os.environ.get("CI"):
            pytest.fail("the docs extra is not installed (pip install -e '.[docs]')")
        pytest.skip("the docs extra is not installed (pip install -e '.[docs]')")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-E",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            str(DOCS),
            str(tmp_path / "html"),
        ],  # fmt: skip
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0, out.stderr[-4000:]
    html = (tmp_path / "html" / "papers" / "fedlu.html").read_text()
    assert "fedlu-r3-curves.svg" in html
    assert (tmp_path / "html" / "reference" / "cli.html").read_text().count(
        "fedgraph report"
    ) > 0
