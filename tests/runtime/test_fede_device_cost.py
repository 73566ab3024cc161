r"""benchmarks/fede_device_cost.sh (which `fedgraph train` commands it runs,
in which order, and which it skips when the budget is spent; driven by a
stand-in for Python) and benchmarks/fede_device_cost.py (the seconds it
reads from the run folders, against hand computations)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# `$PYTHON -m fedgraph.cli.main train ...`: log the run's folder name and
# the options that differ between configurations.
STUB = r"""#!/bin/sh
shift 3
line=""
while [ $# -gt 0 ]; do
    case "$1" in
    --out) line="$(basename "$2")$line" ;;
    --algorithm|--model|--sample-on|--local-training|--stop-after|--rounds|--device)
        line="$line $1 $2" ;;
    esac
    shift
done
echo "$line" >> "$LOG"
"""

ORDER = [
    "distmult-fede-host",
    "distmult-fede-device",
    "distmult-fede-batched",
    "complex-fede-device",
    "distmult-single-device",
    "distmult-entire-device",
    "complex-single-device",
    "complex-entire-device",
    "complex-fede-host",
]


def _run(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    stub = tmp_path / "python"
    stub.write_text(STUB)
    stub.chmod(0o755)
    log = tmp_path / "log"
    log.write_text("")
    proc = subprocess.run(
        ["sh", str(ROOT / "benchmarks/fede_device_cost.sh"), *args],
        env={**os.environ, "PYTHON": str(stub), "LOG": str(log)},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return proc, log.read_text().split("\n")[:-1]


@pytest.fixture
def data(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    (d / "META.json").write_text("{}")
    return d


def test_script_runs_every_configuration_in_order(tmp_path, data):
    proc, lines = _run(tmp_path, str(data), str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    assert [line.split()[0] for line in lines] == ORDER
    runs = dict(line.split(" ", 1) for line in lines)
    for name, opts in runs.items():
        assert "--device cuda" in opts
        model, setting, draws = name.split("-")
        assert f"--model {model}" in opts
        if setting == "fede":
            assert "--algorithm fede" in opts and "--stop-after 6" in opts
        else:  # a baseline trains ten epochs and has no --stop-after
            algorithm = {"single": "independent", "entire": "centralized"}[setting]
            assert f"--algorithm {algorithm}" in opts and "--rounds 10" in opts
            assert "--stop-after" not in opts
        assert ("--sample-on device" in opts) == (draws == "device")
        assert ("--local-training batched" in opts) == (draws == "batched")
    assert proc.stdout.count(": rc 0 in ") == len(ORDER)


def test_script_skips_what_the_budget_no_longer_holds(tmp_path, data):
    proc, lines = _run(tmp_path, str(data), str(tmp_path / "out"), "20", "cpu")
    assert proc.returncode == 0, proc.stderr
    assert lines == []
    assert proc.stdout.count("skipped (") == len(ORDER)


def test_script_refuses_a_folder_without_a_partition(tmp_path):
    proc, lines = _run(tmp_path, str(tmp_path), str(tmp_path / "out"))
    assert proc.returncode == 2 and lines == []
    assert "META.json not found" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def _write(folder: Path, name: str, doc: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(doc))


def test_summary_against_hand_computations(tmp_path, load_script, capsys):
    script = load_script("benchmarks/fede_device_cost.py")
    runs = tmp_path / "runs"
    # FedE, stopped: round 1 (the warm-up) is left out of the mean
    rounds = [
        {"round": i + 1, "train_seconds": s} for i, s in enumerate([9.0, 2.0, 4.0])
    ]
    rounds[1]["eval_seconds"] = 0.5
    _write(runs / "a-fede", "progress.json", {"settings": {}, "history": rounds})
    # finished: its results file does not make it a baseline
    _write(runs / "a-fede", "results.json", {"rounds": 3, "seconds_per_round": 5.0})
    # Single: one history per client
    history = [
        [{"epoch": 10, "eval_seconds": 0.2}],
        [{"epoch": 10, "eval_seconds": 0.4}],
    ]
    _write(runs / "b-single", "results.json",
           {"rounds": 10, "seconds_per_round": 1.5, "history": history})  # fmt: skip
    # a baseline's progress.json records its settings and each graph's validations
    _write(runs / "b-single", "progress.json", {"settings": {}, "history": history})
    (runs / "c-empty").mkdir()  # neither file: no row
    out = tmp_path / "cost.json"
    assert (
        script.main(["alone=" + str(runs), "--device", "GPU", "--out", str(out)]) == 0
    )
    doc = json.loads(out.read_text())
    assert doc["device"] == "GPU"
    a, b = doc["runs"]
    assert a["run"] == "a-fede" and a["unit"] == "round" and a["steps"] == 3
    assert a["seconds_per_step"] == pytest.approx(3.0)
    assert a["first_step_seconds"] == 9.0 and a["seconds_per_validation"] == 0.5
    assert a["round_seconds"] == [9.0, 2.0, 4.0]
    assert b["run"] == "b-single" and b["unit"] == "epoch" and b["steps"] == 10
    assert b["seconds_per_step"] == 1.5 and b["validations"] == 2
    assert b["seconds_per_validation"] == pytest.approx(0.3)
    assert a["sharing"] == b["sharing"] == "alone"
    table = capsys.readouterr().out
    assert "| a-fede | alone | round | 3 | 3.00 | 9.00 | 0.50 |" in table
    assert "| b-single | alone | epoch | 10 | 1.50 | – | 0.30 |" in table


def test_summary_errors_are_one_line(tmp_path, load_script, capsys):
    script = load_script("benchmarks/fede_device_cost.py")
    assert script.main(["alone=" + str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert "missing: not a folder" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(SystemExit) as exc:
        script.main([str(tmp_path)])  # no LABEL=
    assert exc.value.code == 2
