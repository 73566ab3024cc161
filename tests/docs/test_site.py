r"""The documentation: the site builds with warnings as errors (broken
internal links and references included), and every tutorial runs.

A tutorial's ```python blocks run in one namespace, in order with its
```bash blocks, whose ``fedgraph ...`` lines run through
:func:`fedgraph.cli.main.main` (exit status 0 required); ```sh and ```text
blocks are shown, not run. A ```text block right after the line
``<!-- output -->`` is what the runnable block before it prints: each of its
lines must appear, in order, among the lines that block printed. Lines are
compared cell by cell (Markdown table cells, then words); two numbers agree
within the marker's ``tol`` (``<!-- output tol=0.3 -->``: the last digits of
a metric move with the CPU's vector width), and the table columns the marker
names in ``skip`` (``skip=s / round``: times) are not compared. Each page runs
in an empty folder on the data under ``FEDGRAPH_DATA``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
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
BLOCK = re.compile(
    r"^(?:<!-- output( [^>]*)?-->\n)?```(python|bash|text)\n(.*?)^```", re.S | re.M
)


def run_block(page: Path, lang: str, body: str, namespace: dict) -> str:
    r"""Runs one python or bash block; returns what it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        if lang == "python":
            exec(compile(body, str(page), "exec"), namespace)
            return out.getvalue()
        for line in body.replace("\\\n", " ").splitlines():
            line = line.split(" #")[0].strip()
            if not line or line.startswith("#"):
                continue
            argv = shlex.split(line)
            assert argv[0] == "fedgraph", f"{page.name}: not a fedgraph command: {line}"
            assert main(argv[1:]) == 0, f"{page.name}: `{line}` failed"
    return out.getvalue()


def cells(line: str) -> list[list[str]]:
    r"""A line's cells (a Markdown table row's, else one), each as words."""
    line = line.strip()
    parts = line.strip("|").split("|") if line.startswith("|") else [line]
    return [part.split() for part in parts]


def agree(want: str, got: str, tol: float) -> bool:
    r"""Equal words, or two numbers (``1,017``, ``64.51``, ``0.125;``) within
    ``tol`` and followed by the same punctuation."""
    if want == got:
        return True
    a, b = want.rstrip(";:)"), got.rstrip(";:)")
    if want[len(a) :] != got[len(b) :]:
        return False
    try:
        return abs(float(a.replace(",", "")) - float(b.replace(",", ""))) <= tol
    except ValueError:
        return False


def same_line(want: str, got: str, tol: float, skip: set[int]) -> bool:
    r"""``got`` shows ``want``, up to ``tol`` and the cells ``skip``."""
    a, b = cells(want), cells(got)
    if len(a) != len(b):
        return False
    return all(
        i in skip
        or (
            len(x) == len(y)
            and all(agree(u, v, tol) for u, v in zip(x, y, strict=True))
        )
        for i, (x, y) in enumerate(zip(a, b, strict=True))
    )


def check_output(page: Path, options: str, shown: str, printed: str) -> None:
    r"""Each line of ``shown`` appears, in order, among the lines of
    ``printed`` (see the module's docstring for ``options``)."""
    opts = dict(re.findall(r"(\w+)=([^=]+?)(?=\s+\w+=|$)", options.strip()))
    tol = float(opts.get("tol", 0))
    header = [" ".join(c) for c in cells(shown.splitlines()[0])]
    skip = {
        header.index(name.strip()) for name in opts.get("skip", "").split(";") if name
    }
    lines = iter(printed.splitlines())
    for want in shown.splitlines():
        assert any(same_line(want, got, tol, skip) for got in lines), (
            f"{page.name}: the page shows\n{want}\nbut the block before it printed\n"
            f"{printed}"
        )


def run_page(page: Path) -> None:
    r"""Runs the page's python and bash blocks in order in the current folder,
    checking each ``<!-- output -->`` block against what the block before it
    printed."""
    namespace: dict = {"__name__": "__tutorial__"}
    printed = None
    text = page.read_text()
    for match in BLOCK.finditer(text):
        options, lang, body = match.groups()
        if lang != "text":
            printed = run_block(page, lang, body, namespace)
        elif match.group(0).startswith("<!-- output"):
            assert printed is not None, f"{page.name}: an output block before any code"
            check_output(page, options or "", body, printed)


@pytest.mark.dataset
@pytest.mark.slow
@pytest.mark.parametrize("name", PAGES)
def test_tutorial_runs(
    name, data_root, tmp_path, monkeypatch, one_thread, fresh_compile
):
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


@pytest.mark.parametrize(
    ("want", "got", "tol", "same"),
    [
        ("0.125;", "0.131;", 0.01, True),  # a number before punctuation
        ("0.125;", "0.150;", 0.01, False),  # beyond the tolerance
        ("0.125;", "0.125", 0.01, False),  # the punctuation differs
        ("26,880", "26,880", 0, True),
        ("(70", "(71", 5, False),  # not a number: equal words only
        ("10/10);", "10/10);", 0, True),
    ],
)
def test_output_words_agree(want, got, tol, same):
    assert agree(want, got, tol) is same


def test_output_check_names_the_line_it_misses():
    printed = "| run | MRR | s |\n| a | 40.1 | 9.0 |\n"
    check_output(
        Path("p.md"), "tol=0.3 skip=s", "| run | MRR | s |\n| a | 40.3 | 1.0 |", printed
    )
    with pytest.raises(AssertionError, match=r"\| a \| 41.0 \| 1.0 \|"):
        check_output(
            Path("p.md"),
            "tol=0.3 skip=s",
            "| run | MRR | s |\n| a | 41.0 | 1.0 |",
            printed,
        )
