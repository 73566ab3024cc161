r"""The named-run series scripts (``benchmarks/series.sh`` and its users),
run with a stand-in interpreter that records its arguments and writes a
``results.json`` into ``--out``: the commands they run, what a second call
skips, where the results are copied, and a bad name."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

STUB = r"""#!/bin/sh
if [ "$1" = "scripts/scrub_results.py" ]; then cp "$2" "$3"; exit 0; fi
echo "$*" >> "$CALLS"
out=""; prev=""
for a in "$@"; do [ "$prev" = "--out" ] && out=$a; prev=$a; done
mkdir -p "$out"; echo '{"done": true}' > "$out/results.json"
"""

pytestmark = pytest.mark.skipif(
    shutil.which("flock") is None, reason="the scripts hold their runs with flock"
)


@pytest.fixture
def stub(tmp_path):
    python = tmp_path / "python"
    python.write_text(STUB)
    python.chmod(0o755)
    return python


def _run(script, stub, tmp_path, *args, **env):
    full = {
        **os.environ,
        "PYTHON": str(stub),
        "RUNS": str(tmp_path / "runs"),
        "RESULTS": str(tmp_path / "results"),
        "CALLS": str(tmp_path / "calls.txt"),
        **env,
    }
    return subprocess.run(
        ["sh", str(ROOT / "benchmarks" / script), *args],
        cwd=ROOT, env=full, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def _calls(tmp_path):
    path = tmp_path / "calls.txt"
    return path.read_text().splitlines() if path.exists() else []


def test_kge_fb15k237_runs_each_recipe_once_at_its_budget(stub, tmp_path):
    done = _run("kge_fb15k237.sh", stub, tmp_path, "complex-n3", "r=rotate-fb15k-237",
                DIM="100", EPOCHS="4")  # fmt: skip
    assert done.returncode == 0, done.stderr
    runs = tmp_path / "runs"
    assert _calls(tmp_path) == [
        "-m fedgraph.cli.main train fb15k-237 --algorithm centralized --recipe "
        f"{recipe} --dim 100 --rounds 4 --eval-every 2 --patience 0 --seed 0 "
        f"--threads 2 --quiet --out {runs}/{name}-d100-e4 --resume"
        for name, recipe in (("complex-n3", "complex-n3-fb15k-237"),
                             ("r", "rotate-fb15k-237"))
    ]  # fmt: skip
    recorded = (runs / "commands.txt").read_text()
    assert f"--out {runs}/r-d100-e4 --resume" in recorded
    for name in ("complex-n3-d100-e4", "r-d100-e4"):
        copied = tmp_path / "results" / f"kge-fb15k237-{name}.json"
        assert json.loads(copied.read_text()) == {"done": True}
    # a second call finds both finished and trains nothing
    again = _run("kge_fb15k237.sh", stub, tmp_path, "complex-n3", DIM="100",
                 EPOCHS="4")  # fmt: skip
    assert again.returncode == 0
    assert "complex-n3-d100-e4: finished" in again.stdout
    assert len(_calls(tmp_path)) == 2


@pytest.mark.parametrize(
    "env, options, name",
    [
        ({"DIM": "100", "EPOCHS": "4"}, "", "transe-libkge"),
        # a control run: EXTRA wins over the recipe, SUFFIX names the variant
        ({"EXTRA": "--num-negatives 61", "SUFFIX": "-neg61"}, "--num-negatives 61 ",
         "transe-libkge-neg61"),
    ],
)  # fmt: skip
def test_kge_fb15k237_runs_a_libkge_recipe_at_its_own_budget(
    stub, tmp_path, env, options, name
):
    done = _run("kge_fb15k237.sh", stub, tmp_path, "transe-libkge", THREADS="1", **env)
    assert done.returncode == 0, done.stderr
    assert _calls(tmp_path) == [
        "-m fedgraph.cli.main train fb15k-237 --algorithm centralized --recipe "
        f"transe-libkge-fb15k-237 --seed 0 --threads 1 {options}--quiet --out "
        f"{tmp_path}/runs/{name} --resume"
    ]
    copied = tmp_path / "results" / f"kge-fb15k237-{name}.json"
    assert json.loads(copied.read_text()) == {"done": True}


@pytest.mark.parametrize("args", [["bogus"], []])
def test_kge_fb15k237_refuses_an_unknown_or_missing_name(stub, tmp_path, args):
    done = _run("kge_fb15k237.sh", stub, tmp_path, *args)
    assert done.returncode == 2
    assert ("unknown run bogus" if args else "usage:") in done.stderr
    assert _calls(tmp_path) == []


def test_fedmkgc_reduced_runs_independent_then_fedmkgc(stub, tmp_path):
    done = _run("fedmkgc_reduced.sh", stub, tmp_path, PARALLEL="0", TAG="t-")
    assert done.returncode == 0, done.stderr
    runs = tmp_path / "runs"
    common = ("--model text --batch-size 384 --max-steps 46 --patience 0 --seed 0 "
              "--threads 1 --quiet")  # fmt: skip
    assert _calls(tmp_path) == [
        "-m fedgraph.cli.main train dbp-5l --algorithm independent --languages el "
        f"--rounds 5 --eval-every 5 {common} --out {runs}/t-independent-el --resume",
        "-m fedgraph.cli.main train dbp-5l --algorithm fedmkgc --languages en el "
        f"--rounds 10 --eval-every 10 {common} --out {runs}/t-fedmkgc-en-el --resume",
    ]
    names = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert names == [
        "fedmkgc-reduced-t-fedmkgc-en-el.json",
        "fedmkgc-reduced-t-independent-el.json",
    ]


@pytest.mark.parametrize("only", ["fedmkgc", "independent"])
def test_fedmkgc_reduced_only_runs_the_one_named(stub, tmp_path, only):
    done = _run("fedmkgc_reduced.sh", stub, tmp_path, TAG="t-", ONLY=only)
    assert done.returncode == 0, done.stderr
    (call,) = _calls(tmp_path)
    assert f"--algorithm {only} " in call
    assert call.endswith(f"-{'en-el' if only == 'fedmkgc' else 'el'} --resume")


def test_fedmkgc_reduced_refuses_another_only(stub, tmp_path):
    done = _run("fedmkgc_reduced.sh", stub, tmp_path, ONLY="both")
    assert done.returncode == 2
    assert done.stderr.strip() == "ONLY=both: expected independent or fedmkgc"
    assert _calls(tmp_path) == []


def test_fedmkgc_reduced_every_language_trains_each_alone_too(stub, tmp_path):
    done = _run("fedmkgc_reduced.sh", stub, tmp_path, PARALLEL="0", TAG="s20-",
                PARTNERS="en fr es ja", EVERY_LANGUAGE="1", STEPS="20",
                GREEK_ROUNDS="3", VALID_EVERY="3", VALID_MAX_TRIPLES="1000",
                TEST_MAX_TRIPLES="2200")  # fmt: skip
    assert done.returncode == 0, done.stderr
    runs = tmp_path / "runs"
    common = ("--model text --batch-size 384 --max-steps 20 --patience 0 --seed 0 "
              "--threads 1 --quiet --valid-max-triples 1000 "
              "--test-max-triples 2200")  # fmt: skip
    # Independent: 3 rounds, each language at most 20 steps a round; FedMKGC:
    # 3 cycles of one round per language, so Greek trains 3 x 20 steps in both
    assert _calls(tmp_path) == [
        "-m fedgraph.cli.main train dbp-5l --algorithm independent --languages "
        f"en fr es ja el --rounds 3 --eval-every 3 {common} "
        f"--out {runs}/s20-independent-en-fr-es-ja-el --resume",
        "-m fedgraph.cli.main train dbp-5l --algorithm fedmkgc --languages "
        f"en fr es ja el --rounds 15 --eval-every 15 {common} "
        f"--out {runs}/s20-fedmkgc-en-fr-es-ja-el --resume",
    ]


def test_kge_fb15k237_trains_federated_clients_one_epoch_a_round(stub, tmp_path):
    done = _run("kge_fb15k237.sh", stub, tmp_path, "complex-n3", TAG="r3-fede-",
                ALGORITHM="fede", DATA="some/R3", EPOCHS="10",
                EVAL_EVERY="1")  # fmt: skip
    assert done.returncode == 0, done.stderr
    runs = tmp_path / "runs"
    assert _calls(tmp_path) == [
        "-m fedgraph.cli.main train some/R3 --algorithm fede --recipe "
        "complex-n3-fb15k-237 --dim 200 --rounds 10 --local-epochs 1 --eval-every 1 "
        f"--patience 0 --seed 0 --threads 2 --quiet "
        f"--out {runs}/r3-fede-complex-n3-d200-e10 --resume"
    ]
    copied = tmp_path / "results" / "kge-fb15k237-r3-fede-complex-n3-d200-e10.json"
    assert copied.is_file()


@pytest.mark.parametrize(
    "data, message",
    [
        (None, "set FEDGRAPH_DATA to the data root holding fedlu-fb15k-237"),
        ("missing", "missing/fedlu-fb15k-237: no such folder"),
    ],
)
def test_run_series_names_a_missing_data_root_before_running(tmp_path, data, message):
    env = {k: v for k, v in os.environ.items() if k != "FEDGRAPH_DATA"}
    if data is not None:
        env["FEDGRAPH_DATA"] = str(tmp_path / data)
    done = subprocess.run(
        ["sh", str(ROOT / "benchmarks" / "run_series.sh"), "r3-fede"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert message in done.stderr
    assert done.stderr.count("\n") == 1
    # the name list needs no data
    listed = subprocess.run(
        ["sh", str(ROOT / "benchmarks" / "run_series.sh"), "list"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert listed.returncode == 0 and "r3-fede" in listed.stdout.split()
