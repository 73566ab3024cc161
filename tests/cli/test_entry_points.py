r"""Every command-line entry point lives in :mod:`fedgraph.cli`: no module
below it parses arguments, and each ``python -m fedgraph.cli.…`` process
answers a bad argument with one line naming it, exit code 2."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _argparse_users() -> list[str]:
    out = []
    for path in sorted((ROOT / "fedgraph").rglob("*.py")):
        rel = path.relative_to(ROOT / "fedgraph")
        if rel.parts[0] == "cli":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n.split(".")[0] == "argparse" for n in names):
                out.append(f"{rel.as_posix()}:{node.lineno}")
    return out


def test_no_module_below_cli_parses_arguments():
    assert _argparse_users() == []


def _run(module: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("module", "args", "line"),
    [
        (
            "fedgraph.cli.flower_worker",
            ["--target", "m:a", "--address", "s", "--parent", "x"],
            "python -m fedgraph.cli.flower_worker: error: argument --parent: "
            "invalid int value: 'x' (see `python -m fedgraph.cli.flower_worker "
            "--help`)",
        ),
        (
            "fedgraph.cli.flower_executor",
            ["--runtime-api", "127.0.0.1:9094"],
            "python -m fedgraph.cli.flower_executor: error: give `--insecure` or "
            "`--root-certificates` (see `python -m fedgraph.cli.flower_executor "
            "--help`)",
        ),
        (
            "fedgraph.cli.flower_executor",
            ["--runtime-api", "h:1", "--insecure", "--pull-backoff", "61"],
            "python -m fedgraph.cli.flower_executor: error: `--pull-backoff` must "
            "lie in [0, 60] s (got 61.0) (see `python -m "
            "fedgraph.cli.flower_executor --help`)",
        ),
        (
            "fedgraph.cli.flower_supernode",
            ["--idle-poll-interval", "0", "--insecure"],
            "python -m fedgraph.cli.flower_supernode: error: argument "
            "--idle-poll-interval: must lie in (0, 60] s (got 0) (see `python -m "
            "fedgraph.cli.flower_supernode --help`)",
        ),
        (
            "fedgraph.cli.fede_pickle",
            ["f.pkl", "--out", "o", "--num-entities", "0"],
            "python -m fedgraph.cli.fede_pickle: error: argument --num-entities: "
            "must be a positive integer (got 0) (see `python -m "
            "fedgraph.cli.fede_pickle --help`)",
        ),
    ],
)
def test_a_bad_argument_is_one_line_and_exit_2(module, args, line):
    done = _run(module, *args)
    assert done.returncode == 2
    assert done.stderr == line + "\n"
    assert done.stdout == ""


def test_the_worker_is_started_through_the_cli_module():
    from fedgraph.runtime.flower import node

    source = Path(node.__file__).read_text()
    assert '"fedgraph.cli.flower_worker",' in source
    done = _run("fedgraph.cli.flower_worker", "--help")
    assert done.returncode == 0
    assert "  --parent PARENT    exit when this process is gone\n" in done.stdout
