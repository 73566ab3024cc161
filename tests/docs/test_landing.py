r"""The landing page opens with a ``fedgraph.pipeline`` example of at most 10
lines that runs and prints exactly what the page shows, and the
``fedgraph predict`` command the page names answers from the saved run."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from fedgraph.cli.main import main

INDEX = Path(__file__).resolve().parents[2] / "docs" / "index.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def test_the_landing_page_opens_with_a_short_pipeline_example():
    text = INDEX.read_text()
    blocks = BLOCK.findall(text)
    lang, code = blocks[0]
    assert lang == "python" and len(code.splitlines()) <= 10
    assert "fedgraph.pipeline(" in code
    # the first block comes right after the title and the one-line summary
    assert text.index("```python") < text.index("Several organisations")


@pytest.mark.dataset
def test_the_landing_example_prints_what_the_page_shows(
    data_root, tmp_path, monkeypatch, one_thread
):
    (_, code), (lang, shown) = BLOCK.findall(INDEX.read_text())[:2]
    assert lang == "text"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FEDGRAPH_DATA", str(data_root))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(INDEX), "exec"), {"__name__": "__landing__"})
    assert out.getvalue() == shown
    command = re.search(r"`(fedgraph predict [^`]*)`", INDEX.read_text()).group(1)
    answers = io.StringIO()
    with contextlib.redirect_stdout(answers):
        assert main(shlex.split(command)[1:] + ["--k", "3"]) == 0
    names = [line.split()[-1] for line in answers.getvalue().splitlines()]
    assert str(names) == shown.splitlines()[1]


def test_the_readme_shows_the_landing_example():
    readme = INDEX.parents[1] / "README.md"
    (_, code) = BLOCK.findall(INDEX.read_text())[0]
    assert f"```python\n{code}```" in readme.read_text()
