r"""benchmarks/fede_claims.sh: which runs it starts, in which order, and which
it skips (a finished run folder, or results recorded in docs/results that no
pending fusion needs), driven by a stand-in for Python that records each
``fedgraph`` command and writes what that command would leave behind."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    shutil.which("flock") is None, reason="the script runs each job under flock"
)

# `$PYTHON -m fedgraph.cli.main CMD ...`: log CMD and its target, then write
# the file the real command leaves behind (META.json, results.json).
STUB = r"""#!/bin/sh
shift 2
cmd=$1
case "$cmd" in
partition)
    while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done
    mkdir -p "$out" && echo '{}' > "$out/META.json"
    echo "partition $(basename "$out")" >> "$LOG" ;;
train)
    while [ $# -gt 0 ]; do
        case "$1" in --out) out=$2 ;; --resume) echo "resume $(basename "$out")" >> "$LOG" ;; esac
        shift
    done
    echo "train $(basename "$out")" >> "$LOG"
    [ -n "${THPLOG:-}" ] && echo "$(basename "$out") $THP_MEM_ALLOC_ENABLE" >> "$THPLOG"
    [ -n "${FAIL:-}" ] && [ "$(basename "$out")" = "$FAIL" ] && { mkdir -p "$out"; exit 1; }
    mkdir -p "$out" && echo '{}' > "$out/results.json" ;;
fuse)
    mkdir -p "$2/fusion" && echo '{}' > "$2/fusion/results.json"
    echo "fuse $(basename "$2")" >> "$LOG" ;;
esac
"""

ROTATE = ["rotate-single", "rotate-fede"]
TRANSE = ["transe-single", "transe-fede", "transe-entire"]
OTHERS = [
    f"{m}-{s}" for m in ("distmult", "complex") for s in ("single", "fede", "entire")
]


def _run(tmp_path: Path, recorded: list[str], **env: str) -> list[str]:
    stub = tmp_path / "python"
    stub.write_text(STUB)
    stub.chmod(0o755)
    results = tmp_path / "results"
    results.mkdir(exist_ok=True)
    for name in recorded:
        (results / f"fede-{name}.json").write_text("{}")
    log = tmp_path / "log"
    log.write_text("")
    proc = subprocess.run(
        ["sh", str(ROOT / "benchmarks/fede_claims.sh")],
        env={**os.environ, "PYTHON": str(stub), "RUNS": str(tmp_path / "runs"),
             "RESULTS": str(results), "LOG": str(log), **env},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return log.read_text().split("\n")[:-1]


def _trains(data: str, settings: list[str]) -> list[str]:
    return [f"train {data}-{s}" for s in settings]


def test_fresh_series_runs_everything_in_order(tmp_path):
    lines = _run(tmp_path, recorded=[])
    expected = (
        ["partition nell-995-fed3", "partition fb15k-237-fed3"]
        + _trains("fb15k237-fed3", ROTATE) + ["fuse fb15k237-fed3-rotate-fede"]
        + _trains("nell995-fed3", ROTATE) + ["fuse nell995-fed3-rotate-fede"]
        + _trains("fb15k237-fed3", TRANSE) + ["fuse fb15k237-fed3-transe-fede"]
        + _trains("nell995-fed3", TRANSE)
        + ["train fb15k237-fed3-rotate-entire", "train nell995-fed3-rotate-entire"]
        + _trains("fb15k237-fed3", OTHERS) + _trains("nell995-fed3", OTHERS)
    )  # fmt: skip
    assert lines == expected
    # a second pass finds every run folder finished: nothing is started again
    assert _run(tmp_path, recorded=[]) == []


def test_recorded_runs_are_skipped_unless_a_pending_fusion_needs_them(tmp_path):
    recorded = [
        "fb15k237-fed3-rotate-single", "fb15k237-fed3-rotate-fede",
        "fb15k237-fed3-rotate-fusion", "nell995-fed3-rotate-single",
        "fb15k237-fed3-transe-single", "fb15k237-fed3-transe-entire",
        "nell995-fed3-transe-single",
    ]  # fmt: skip
    lines = _run(tmp_path, recorded=recorded)
    # FB15k-237-Fed3's RotatE runs and fusion are done; NELL-995-Fed3's Single is
    # recorded but its fusion is not, so its models are trained again
    assert lines[2:5] == [
        "train nell995-fed3-rotate-single", "train nell995-fed3-rotate-fede",
        "fuse nell995-fed3-rotate-fede",
    ]  # fmt: skip
    assert not any(line.startswith("train fb15k237-fed3-rotate-s") for line in lines)
    # TransE on FB15k-237-Fed3 is fused too: its recorded Single is trained again,
    # its Entire (no fusion reads it) is not; NELL-995-Fed3's TransE has no fusion
    assert lines[5:8] == [
        "train fb15k237-fed3-transe-single", "train fb15k237-fed3-transe-fede",
        "fuse fb15k237-fed3-transe-fede",
    ]  # fmt: skip
    assert "train fb15k237-fed3-transe-entire" not in lines
    assert "train nell995-fed3-transe-single" not in lines
    assert "train nell995-fed3-transe-fede" in lines


def test_interrupted_run_resumes_and_fusion_waits(tmp_path):
    # the NELL-995-Fed3 FedE run fails (is killed): fusion is not attempted
    lines = _run(tmp_path, recorded=[], FAIL="nell995-fed3-rotate-fede")
    assert "fuse nell995-fed3-rotate-fede" not in lines
    assert "train nell995-fed3-rotate-entire" in lines  # the series goes on
    # the next pass resumes it (its folder exists) and then fuses
    lines = _run(tmp_path, recorded=[])
    assert lines == [
        "resume nell995-fed3-rotate-fede", "train nell995-fed3-rotate-fede",
        "fuse nell995-fed3-rotate-fede",
    ]  # fmt: skip


def test_huge_pages_for_nell_runs_only_unless_thp_is_set(tmp_path):
    # PyTorch's THP_MEM_ALLOC_ENABLE: on for NELL-995-Fed3's large entity
    # tables, off for FB15k-237-Fed3's; THP=0/1 sets it for every run
    thp = tmp_path / "thp"
    _run(tmp_path, recorded=[], THPLOG=str(thp), THP_MEM_ALLOC_ENABLE="1")
    runs = dict(line.split() for line in thp.read_text().splitlines())
    assert len(runs) == 24
    assert {v for k, v in runs.items() if k.startswith("nell995")} == {"1"}
    assert {v for k, v in runs.items() if k.startswith("fb15k237")} == {"0"}
    for value in ("0", "1"):
        shutil.rmtree(tmp_path / "runs")
        thp.write_text("")
        _run(tmp_path, recorded=[], THPLOG=str(thp), THP=value)
        assert {line.split()[1] for line in thp.read_text().splitlines()} == {value}
