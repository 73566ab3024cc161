r"""benchmarks/privacy_bench.sh and its entry points privacy_umls.sh and
privacy_fedlu_r3.sh, run with ``DRY_RUN=1``: the commands they would run equal,
argument for argument, the commands recorded in the committed results files
``docs/results/{umls-r3,fedlu-r3}-privacy-*.json`` that docs/papers/privacy.md
tabulates; resuming, skipping, ``DO`` and bad settings."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from fedgraph.report.privacy import SETTINGS

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "docs" / "results"
SCRIPTS = ("privacy_bench.sh", "privacy_umls.sh", "privacy_fedlu_r3.sh")
#: the work folder the UMLS results files record: the one part of their
#: commands rewritten before comparing (to the test's own folder)
UMLS_RECORDED_WORK = "runs/"
UMLS_PARTITION = ["partition", "umls", "--strategy", "relation", "--clients", "3"]


@pytest.fixture
def bench(tmp_path):
    r"""``bench(script, *args, **env)``: the lines a dry run of a copy of the
    benchmark scripts prints, as argument lists with the interpreter's
    ``python -m fedgraph.cli.main`` written ``fedgraph`` (the copy runs from
    ``tmp_path``, so the repository's own ``runs/`` cannot change its plan)."""
    (tmp_path / "benchmarks").mkdir()
    for name in SCRIPTS:
        shutil.copy(REPO / "benchmarks" / name, tmp_path / "benchmarks" / name)

    def dry_run(script: str, *args: str, **env: str) -> list[list[str]]:
        proc = _sh(tmp_path, script, *args, DRY_RUN="1", **env)
        assert proc.returncode == 0, proc.stderr
        lines = [shlex.split(line) for line in proc.stdout.splitlines()]
        for line in lines:
            assert line[:3] == ["python", "-m", "fedgraph.cli.main"], line
        return [["fedgraph", *line[3:]] for line in lines]

    dry_run.root = tmp_path
    return dry_run


def _sh(root: Path, script: str, *args: str, **env: str):
    return subprocess.run(
        ["sh", str(root / "benchmarks" / script), *args],
        cwd=root,
        env={"PATH": os.environ["PATH"], **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def _recorded(prefix: str) -> list[list[str]]:
    r"""Each setting's recorded training command, then its audits', in the
    table's order (a training command recorded as ``fedgraph train --data
    DATASET``, the spelling of its time, as ``fedgraph train DATASET``)."""
    cmds = []
    for name, _ in SETTINGS:
        doc = json.loads((RESULTS / f"{prefix}-{name}.json").read_text())
        cmds.append(doc["results"]["settings"]["command"])
        cmds += [audit["command"] for audit in doc["audits"].values()]
    out = [shlex.split(c) for c in cmds]
    for args in out:
        if args[:2] == ["fedgraph", "train"] and "--data" in args:
            args.remove("--data")
    return out


def _in_work(args: list[str], work: Path) -> list[str]:
    r"""``args`` with the UMLS files' recorded work folder replaced by
    ``work``, in the arguments that start with it and nowhere else."""
    n = len(UMLS_RECORDED_WORK)
    return [f"{work}/{a[n:]}" if a.startswith(UMLS_RECORDED_WORK) else a for a in args]


def test_fedlu_r3_commands_are_the_recorded_ones(bench):
    printed = bench(
        "privacy_fedlu_r3.sh", "runs/privacy-fedlu-r3-10", ROUNDS="10", THREADS="1"
    )
    recorded = _recorded("fedlu-r3-privacy")
    assert len(recorded) == 3 * len(SETTINGS)
    assert printed == recorded


def test_umls_commands_are_the_recorded_ones(bench):
    work = bench.root / "work"
    printed = bench("privacy_umls.sh", str(work))
    recorded = _recorded("umls-r3-privacy")
    # training: DATASET and --out in the work folder; audits: the run folder
    hits = [sum(a.startswith(UMLS_RECORDED_WORK) for a in c) for c in recorded]
    assert hits == [2, 1, 1] * len(SETTINGS)
    partition = ["fedgraph", *UMLS_PARTITION, "--out", f"{work}/umls-r3"]
    assert printed == [partition] + [_in_work(c, work) for c in recorded]
    assert not work.exists()  # a dry run writes nothing


@pytest.mark.parametrize(
    ("script", "rounds", "threads"),
    [("privacy_umls.sh", "30", "1"), ("privacy_fedlu_r3.sh", "110", "2")],
)
def test_default_rounds_and_threads(bench, script, rounds, threads):
    train = bench(script, "runs/w", NAMES="fede", DO="train")[-1]
    assert train[train.index("--rounds") + 1] == rounds
    assert train[train.index("--threads") + 1] == threads
    assert train[train.index("--eval-every") + 1] == "5"


@pytest.mark.parametrize("script", ["privacy_umls.sh", "privacy_fedlu_r3.sh"])
def test_resumes_runs_and_skips_finished_runs_and_audits(bench, script):
    work = bench.root / "runs" / "w"
    (work / "fede" / "checkpoints").mkdir(parents=True)
    (work / "dp-eps1").mkdir()
    (work / "dp-eps1" / "results.json").write_text("{}")
    (work / "dp-eps1" / "audit-membership.json").write_text("{}")
    (work / "umls-r3").mkdir()  # the UMLS partition exists: not written again
    lines = bench(script, "runs/w", NAMES="fede dp-eps1", EXTRA="--device cuda")
    steps = [
        (c[1], c[c.index("--out") + 1] if c[1] == "train" else c[2]) for c in lines
    ]
    assert steps == [
        ("train", "runs/w/fede"),
        ("audit", "runs/w/fede"),
        ("audit", "runs/w/fede"),
        ("audit", "runs/w/dp-eps1"),
    ]
    assert lines[0][-3:] == ["--out", "runs/w/fede", "--resume"]
    extra = lines[0].index("--device")
    assert lines[0][extra - 2 : extra + 3] == [
        "--record-uploads", "last", "--device", "cuda", "--algorithm"
    ]  # fmt: skip
    assert lines[3][3:] == ["--attack", "triple-inference", "--known-fraction", "0.1"]


@pytest.mark.parametrize("script", ["privacy_umls.sh", "privacy_fedlu_r3.sh"])
def test_do_splits_training_from_auditing(bench, script):
    train = bench(script, "runs/w", DO="train", NAMES="fedr secagg")
    audit = bench(script, "runs/w", DO="audit", NAMES="fedr secagg")
    both = bench(script, "runs/w", NAMES="fedr secagg")
    assert [c[1] for c in train] == ["partition"] * (script == "privacy_umls.sh") + [
        "train",
        "train",
    ]
    assert [c[1] for c in audit] == ["audit"] * 4
    assert [c for c in both if c[1] != "audit"] == train
    assert [c for c in both if c[1] == "audit"] == audit
    assert [c[-1] for c in train[-2:]] == ["runs/w/fedr", "runs/w/secagg"]


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["privacy_fedlu_r3.sh"], {"NAMES": "fede nope"}, "unknown run 'nope'"),
        (["privacy_umls.sh"], {"ROUNDS": "ten"}, "ROUNDS must be a positive"),
        (["privacy_umls.sh"], {"THREADS": "0"}, "THREADS must be a positive"),
        (["privacy_umls.sh"], {"DO": "fit"}, "DO takes train, audit or both"),
        (["privacy_umls.sh", "my runs"], {}, "WORK_DIR must be a path without"),
        (["privacy_bench.sh", "runs/w", "fedlu-r3"], {}, "ROUNDS must be a positive"),
        (["privacy_bench.sh", "runs/w"], {"ROUNDS": "3"}, "usage: privacy_bench.sh"),
    ],
)
def test_bad_settings_exit_2_with_one_line(bench, args, env, message):
    # not a dry run, and an interpreter that fails: the settings are checked
    # before anything runs or is written
    proc = _sh(bench.root, *args, DRY_RUN="", PYTHON="false", **env)
    assert proc.returncode == 2
    assert proc.stdout == "" and message in proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    assert not (bench.root / "runs").exists()
