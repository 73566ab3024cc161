r"""The documentation speaks of the project only: no page (``README.md``,
``docs/**/*.md``) names a machine path (``/tmp/``, ``/work/``, ``/root/``), a file
outside the repository (``../shared``) or a date (``YYYY-MM-DD``); example paths
are project-relative (``runs/...``) or placeholders (``/path/to/...``), the data
root is ``$FEDGRAPH_DATA``.

The commands that the results pages quote come from the results files, which
record the paths of the machine that ran them; :func:`recorded_command`
rewrites those before a page shows them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from generator.commands import recorded_command

ROOT = Path(__file__).resolve().parents[2]

#: One pattern per kind of trace.
TRACES = {
    "machine path": re.compile(r"/(?:tmp|work|root)/"),
    "file outside the repository": re.compile(r"\.\./shared\b"),
    "date": re.compile(r"\b(?:19|20)\d\d-[01]\d-[0-3]\d\b"),
}


def pages() -> list[Path]:
    r"""README.md and every Markdown page under docs/ (a built site left out)."""
    docs = [p for p in sorted((ROOT / "docs").rglob("*.md")) if "_build" not in p.parts]
    return [ROOT / "README.md", *docs]


def traces(text: str) -> list[str]:
    r"""``"LINE: KIND: MATCH"`` for every trace in ``text``."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for kind, pattern in TRACES.items():
            found += [f"{number}: {kind}: {m.group(0)}" for m in pattern.finditer(line)]
    return found


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_page_has_no_traces(page: Path) -> None:
    assert traces(page.read_text(encoding="utf-8")) == []


def test_pages_found() -> None:
    names = {str(p.relative_to(ROOT)) for p in pages()}
    assert {"README.md", "docs/index.md", "docs/papers/fede-claims.md"} <= names
    assert not any("_build" in n for n in names)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("--out /tmp/umls-3", ["1: machine path: /tmp/"]),
        ("FEDGRAPH_DATA=/work/shared/datasets", ["1: machine path: /work/"]),
        ("ok\ncd /root/x", ["2: machine path: /root/"]),
        (
            "text in `../shared/papers/fede.txt`",
            ["1: file outside the repository: ../shared"],
        ),
        ("measured 2026-11-22 unless stated", ["1: date: 2026-11-22"]),
        ("--out runs/umls-3 --data $FEDGRAPH_DATA/umls, torch 2.13.0, 1,863 s", []),
        ("a /path/to/datasets placeholder; 2026 alone; 10-12 epochs", []),
    ],
)
def test_traces_found(text: str, expected: list[str]) -> None:
    assert traces(text) == expected


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        (
            "fedgraph train --data /work/shared/datasets/fedlu-fb15k-237/C3 --out /tmp/g/c3-fedec",
            "fedgraph train $FEDGRAPH_DATA/fedlu-fb15k-237/C3 --out runs/c3-fedec",
        ),
        (
            "fedgraph audit /tmp/priv/runs2/fede --attack membership",
            "fedgraph audit runs/fede --attack membership",
        ),
        (
            "fedgraph train --algorithm fede --data /tmp/p/umls-3 --out /tmp/p/r",
            "fedgraph train --algorithm fede runs/umls-3 --out runs/r",
        ),
        (
            "python -m fedgraph.runtime.baselines --data /work/shared/datasets/umls",
            "python -m fedgraph.runtime.baselines --data $FEDGRAPH_DATA/umls",
        ),
        (
            "fedgraph train --data ../shared/datasets/umls --out runs/x",
            "fedgraph train $FEDGRAPH_DATA/umls --out runs/x",
        ),
    ],
)
def test_recorded_command_hides_machine_paths(command: str, shown: str) -> None:
    assert recorded_command({"settings": {"command": command}}) == shown
    # a benchmark script's file records its command at the top level
    assert recorded_command({"command": command}) == shown


def results_files() -> list[Path]:
    r"""Every results file the docs link to (``docs/results/**/*.json``)."""
    return sorted((ROOT / "docs" / "results").rglob("*.json"))


@pytest.mark.parametrize(
    "path", results_files(), ids=lambda p: str(p.relative_to(ROOT / "docs"))
)
def test_results_file_has_no_machine_path(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert [t for t in traces(text) if "machine path" in t] == [], (
        f"{path.name}: run `python scripts/scrub_results.py --in-place {path.name}`"
    )


def test_scrub_results_rewrites_machine_paths(tmp_path: Path, load_script) -> None:
    import json

    scrub = load_script("scripts/scrub_results.py")
    run = tmp_path / "results.json"
    run.write_text(
        json.dumps(
            {
                "settings": {
                    "command": "fedgraph train /work/shared/datasets/umls --out "
                    "/tmp/a/b/umls-fede",
                    "encoder": f"{ROOT}/.venv/lib/python3.11/site-packages/m/model",
                    "data": f"{ROOT}/runs/umls-r3",
                },
                "rounds": 30,
            },
            indent=1,
        )
    )
    target = tmp_path / "clean.json"
    assert scrub.main([str(run), str(target)]) == 0
    assert json.loads(target.read_text()) == {
        "settings": {
            "command": "fedgraph train $FEDGRAPH_DATA/umls --out runs/umls-fede",
            "encoder": "site-packages/m/model",
            "data": "runs/umls-r3",
        },
        "rounds": 30,
    }
    assert target.read_text().startswith('{\n "settings"')  # the layout kept
    (tmp_path / "bad.json").write_text("{not json")
    assert scrub.main(["--in-place", str(tmp_path / "bad.json")]) == 2
