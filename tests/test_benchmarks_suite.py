r"""``benchmarks/`` as a suite: every script is listed in its README, the
harness records the machine and times calls, and every experiment has a
README naming the page whose finding it backs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "benchmarks"
EXPERIMENTS = REPO / "experiments"


def _scripts(folder: Path) -> list[str]:
    return sorted(
        p.name for p in folder.iterdir() if p.suffix in (".py", ".sh") and p.is_file()
    )


def test_every_benchmark_is_listed_in_the_readme():
    readme = (BENCHMARKS / "README.md").read_text()
    listed = set(re.findall(r"`([\w-]+\.(?:py|sh))`", readme))
    assert [s for s in _scripts(BENCHMARKS) if s not in listed] == []


def test_every_experiment_has_its_script_and_a_readme_naming_a_page():
    folders = sorted(p for p in EXPERIMENTS.iterdir() if p.is_dir())
    assert [p.name for p in folders] == [
        "contrastive_speed",
        "fedlu_distill_diag",
        "fedprox_drift",
        "negatives_effect",
    ]
    index = (EXPERIMENTS / "README.md").read_text()
    for folder in folders:
        assert _scripts(folder) == [f"{folder.name}.py"]
        readme = (folder / "README.md").read_text()
        assert f"python experiments/{folder.name}/{folder.name}.py" in readme
        pages = re.findall(r"\]\((\.\./\.\./docs/[\w/.-]+\.md)\)", readme)
        assert pages and all((folder / p).is_file() for p in pages), folder.name
        assert f"({folder.name}/README.md)" in index


def test_the_harness_records_the_machine(load_script):
    harness = load_script("benchmarks/harness.py")
    info = harness.machine()
    assert sorted(info) == [
        "cpus",
        "load_average",
        "platform",
        "processor",
        "python",
        "threads",
        "torch",
    ]
    assert info["threads"] == __import__("torch").get_num_threads()
    assert len(info["load_average"]) == 3 and info["processor"]


def test_the_harness_times_each_call_after_the_warmup(load_script):
    harness = load_script("benchmarks/harness.py")
    calls = []
    seconds = harness.timed(lambda: calls.append(1), repeat=4, warmup=2)
    assert len(calls) == 6 and len(seconds) == 4
    assert all(s >= 0 for s in seconds)
    with pytest.raises(
        ValueError, match=r"`repeat` must be positive .*\(got 0 and 1\)"
    ):
        harness.timed(lambda: None, repeat=0)
