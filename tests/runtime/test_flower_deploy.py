r"""Real processes: ``benchmarks/flower_deploy.py`` starts a SuperLink and
three SuperNodes on 127.0.0.1, runs FedE on the toy partition with
``flwr run`` from a server folder without data, kills one node in round 2
and compares with the simulation. Slow (process start-up and Flower's
polling intervals), bounded by ``--timeout``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("flwr")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_flower import toy_federation  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TOY = [
    "model=\"transe\"", "dim=8", "gamma=4.0", "lr=0.01", "batch-size=16",
    "num-negatives=4", "local-epochs=1",
]  # fmt: skip


def deploy(tmp_path: Path, port: int, *args: str) -> dict:
    from fedgraph.partition import save_partition

    data = save_partition(toy_federation(), tmp_path / "toy3")
    out = tmp_path / "deploy.json"
    cmd = [
        sys.executable, str(ROOT / "benchmarks" / "flower_deploy.py"),
        "--data", str(data), "--algorithm", "fede", "--rounds", "3",
        "--json", str(out), "--port", str(port), "--timeout", "900",
        "--work", str(tmp_path / "work"),
        *(a for item in TOY for a in ("--set", item)), *args,
    ]  # fmt: skip
    subprocess.run(cmd, timeout=1000, check=False, capture_output=True)
    return json.loads(out.read_text())


@pytest.mark.slow
def test_a_deployment_equals_the_simulation_and_survives_a_restart(tmp_path):
    doc = deploy(
        tmp_path, 9400, "--kill-client", "1", "--kill-at-round", "2",
        "--restart-after", "2",
    )  # fmt: skip
    assert doc["exit_code"] == 0 and doc["status"]["status"] == "completed"
    lost = doc["lost_client"]
    assert lost["completed"] and lost["rejoined"]
    assert {(e["event"], e["client"]) for e in lost["events"]} >= {
        ("failed", 1),
        ("rejoined", 1),
    }
    hist = doc["deployment"]["history"]
    assert hist[0]["train"] == doc["simulation"]["history"][0]["train"]
    assert doc["seconds_per_round"]["deployment"] > 0


@pytest.mark.slow
def test_a_deployment_that_loses_too_many_nodes_exits_non_zero(tmp_path):
    doc = deploy(
        tmp_path, 9420, "--kill-client", "1", "--kill-at-round", "2",
        "--set", "min-fit-nodes=3", "--no-simulation",
    )  # fmt: skip
    assert doc["exit_code"] == 1 and doc["status"]["status"] == "failed"
    assert "Round 2, 'train': client 1 (partition-id 1" in doc["status"]["error"]
    assert doc["lost_client"]["completed"] is False


@pytest.mark.slow
def test_a_deployment_with_the_executor_equals_the_simulation(tmp_path):
    # SuperNodes with --isolation process, each served by one long-lived
    # fedgraph.runtime.flower.executor process.
    doc = deploy(tmp_path, 9440, "--clientapp", "executor")
    assert doc["exit_code"] == 0 and doc["same_results"] is True
    assert doc["clientapp"] == "executor"
