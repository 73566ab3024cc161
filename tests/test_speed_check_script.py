r"""benchmarks/speed_check.py: kernels timed against recorded figures, a
slowdown over the tolerance flagged with exit code 1, bad input a one-line
error with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def script(load_script, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the script imports harness
    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")  # eager kernels: no compiling
    module = load_script("benchmarks/speed_check.py")
    monkeypatch.setattr(module, "load_average", lambda: [0.0, 0.0, 0.0])  # quiet
    return module


def test_compare_flags_a_slowdown_over_the_tolerance(script):
    recorded = {"seconds": {"a": 1.0, "b": 2.0, "c": 4.0}}
    result = script.compare({"a": 1.15, "b": 2.4, "d": 1.0}, recorded, 0.15)
    assert result["unrecorded"] == ["d"]
    assert result["kernels"]["a"]["ratio"] == pytest.approx(1.15)
    assert result["kernels"]["a"]["regression"] is False
    assert result["kernels"]["b"] == {"seconds": 2.4, "recorded": 2.0,
                                      "ratio": pytest.approx(1.2), "regression": True}  # fmt: skip
    assert "c" not in result["kernels"]


def test_record_then_compare(script, tmp_path, capsys):
    figures = tmp_path / "figures.json"
    quick = ["--figures", str(figures), "--only", "transe_step", "--repeat", "1",
             "--warmup", "0"]  # fmt: skip
    assert script.main([*quick, "--record"]) == 0
    doc = json.loads(figures.read_text())
    assert sorted(doc) == ["command", "machine", "repeat", "seconds"]
    assert list(doc["seconds"]) == ["transe_step"] and doc["seconds"]["transe_step"] > 0
    assert doc["machine"]["threads"] == 1
    # recorded as 1000x slower: no regression
    doc["seconds"]["transe_step"] *= 1000
    figures.write_text(json.dumps(doc))
    out = tmp_path / "result.json"
    assert script.main([*quick, "--out", str(out)]) == 0
    assert json.loads(out.read_text())["kernels"]["transe_step"]["regression"] is False
    # recorded as 1 ns: a regression, exit code 1
    doc["seconds"]["transe_step"] = 1e-9
    figures.write_text(json.dumps(doc))
    capsys.readouterr()
    assert script.main(quick) == 1
    assert "REGRESSION" in capsys.readouterr().out


def test_record_refuses_a_busy_machine(script, tmp_path, monkeypatch, capsys):
    figures = tmp_path / "figures.json"
    quick = ["--figures", str(figures), "--only", "transe_step", "--repeat", "1",
             "--warmup", "0", "--record"]  # fmt: skip
    monkeypatch.setattr(script.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(script, "load_average", lambda: [2.0, 1.0, 1.0])
    assert script.main(quick) == 2
    err = capsys.readouterr().err
    assert err == (
        "speed_check.py: error: the machine is busy (load average 2.0 on 2 CPUs): "
        "figures recorded now would hide regressions; record on a quiet machine, "
        "or pass --busy-ok\n"
    )
    assert not figures.exists()
    assert script.main([*quick, "--busy-ok"]) == 0
    assert figures.exists()


@pytest.mark.parametrize(
    ("then", "now", "notes"),
    [
        ([0.5], [0.5], []),
        ([6.66], [0.5], ["figures recorded on a busy machine (load average 6.66 on 2"]),
        ([0.5], [2.0], ["this machine is busy (load average 2.0 on 2 CPUs)"]),
    ],
)  # fmt: skip
def test_a_comparison_says_when_either_side_was_busy(script, capsys, then, now, notes):
    info = {"processor": "p", "threads": 1, "torch": "t", "cpus": 2}
    result = {"kernels": {}, "unrecorded": []}
    script._report(result, {"machine": {**info, "load_average": then}},
                   {**info, "load_average": now})  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(notes)
    for line, note in zip(out, notes, strict=True):
        assert line.startswith("note: " + note)


@pytest.mark.parametrize(
    ("setup", "argv", "message"),
    [
        (None, [], "figures.json: no recorded figures (run with --record)"),
        (
            "{",
            [],
            "figures.json: not JSON (Expecting property name enclosed in "
            "double quotes, line 1)",
        ),  # fmt: skip
        ("[]", [], "figures.json: no `seconds` table of recorded figures"),
        (
            '{"seconds": {}}',
            ["--only", "nope"],
            "`--only` names unknown kernels ['nope'] (choices: ['transe_step', "
            "'rotate_step', 'transe_validation', 'rotate_validation'])",
        ),  # fmt: skip
        (
            '{"seconds": {}}',
            ["--tolerance", "-1"],
            "`--tolerance` must be >= 0 (got -1.0)",
        ),  # fmt: skip
    ],
)
def test_errors_are_one_line(script, tmp_path, capsys, setup, argv, message):
    figures = tmp_path / "figures.json"
    if setup is not None:
        figures.write_text(setup)
    assert script.main(["--figures", str(figures), *argv]) == 2
    err = capsys.readouterr().err
    assert err.endswith(f"{message}\n") and err.count("\n") == 1
    assert err.startswith("speed_check.py: error: ")


def test_the_recorded_figures_cover_every_kernel(script):
    doc = json.loads((BENCHMARKS / "speed_check.json").read_text())
    assert sorted(doc["seconds"]) == sorted(script.KERNELS)
    assert {"processor", "threads", "torch"} <= set(doc["machine"])
