r"""Real processes: ``benchmarks/flower_deploy.py`` starts a SuperLink and
three SuperNodes on 127.0.0.1, runs FedE on the toy partition with
``flwr run`` from a server folder without data, kills one node in round 2
and compares with the simulation. Slow (process start-up and Flower's
polling intervals), bounded by ``--timeout``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("flwr")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_flower import toy_federation  # noqa: E402

from fedgraph.runtime.flower.failures import outliving_a_lost_node  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TOY = [
    "model=\"transe\"", "dim=8", "gamma=4.0", "lr=0.01", "batch-size=16",
    "num-negatives=4", "local-epochs=1",
]  # fmt: skip


def free_ports(start: int, count: int = 8) -> int:
    r"""The first loopback port from ``start`` (in steps of ``count``) whose
    ``count`` ports are all free: the SuperLink takes the first, the
    SuperNodes the next ones (a port left busy by another run is skipped)."""
    import socket

    for base in range(start, start + 200 * count, count):
        try:
            for port in range(base, base + count):
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", port))
        except OSError:
            continue
        return base
    raise RuntimeError(f"no {count} free loopback ports from {start}")


def deploy(tmp_path: Path, port: int, *args: str) -> dict:
    from fedgraph.partition import save_partition

    port = free_ports(port)
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
    # fedgraph's SuperNode launcher with a 10 s heartbeat: the SuperLink
    # reports the killed node unavailable within 2 x 10 s of its last
    # heartbeat; with Flower's 30 s interval it cannot before 37.5 s after
    # the kill (its last heartbeat came at most 0.9 x 25 s before)
    doc = deploy(
        tmp_path, 9420, "--kill-client", "1", "--kill-at-round", "2",
        "--set", "min-fit-nodes=3", "--no-simulation",
        "--node-poll", "0.2", "--heartbeat-interval", "10",
    )  # fmt: skip
    assert doc["exit_code"] == 1 and doc["status"]["status"] == "failed"
    error = doc["status"]["error"]
    assert "Round 2, 'train': client 1 (partition-id 1" in error
    assert "Node Unavailable" in error
    # the settings that would have let the run outlive the lost node
    assert error.endswith(
        "the run stops; " + outliving_a_lost_node(0.0, checkpoint=True) + "."
    )
    assert "`wait-for-failed`" in error and "`resume = true`" in error
    assert doc["lost_client"]["completed"] is False
    assert doc["heartbeat_interval"] == 10
    assert doc["lost_client"]["unavailable_after"] < 35


@pytest.mark.slow
def test_a_deployment_with_the_executor_equals_the_simulation(tmp_path):
    # SuperNodes with --isolation process, each served by one long-lived
    # fedgraph.cli.flower_executor process.
    doc = deploy(tmp_path, 9440, "--clientapp", "executor")
    assert doc["exit_code"] == 0 and doc["same_results"] is True
    assert doc["clientapp"] == "executor"


def load_benchmark():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "flower_deploy", ROOT / "benchmarks" / "flower_deploy.py"
    )
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--heartbeat-interval", "10"], "--heartbeat-interval needs --node-poll"),
        (
            ["--node-poll", "0.2", "--heartbeat-interval", "5"],
            "--heartbeat-interval must lie in [10, 1800] s (got 5.0)",
        ),
    ],
)
def test_the_benchmark_names_a_bad_heartbeat_interval(tmp_path, capsys, extra, message):
    bench = load_benchmark()
    base = ["--data", str(tmp_path), "--algorithm", "fede", "--rounds", "3"]
    with pytest.raises(SystemExit) as exc:
        bench.parse_args([*base, "--json", str(tmp_path / "x.json"), *extra])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def _flower_line(when: str, text: str) -> str:
    return f"\x1b[92mINFO {when}\x1b[0m:      {text}"


def test_the_timeline_splits_each_exchange_into_node_app_and_wait(tmp_path):
    # Two nodes, two exchanges, hand-made DEBUG logs and worker logs.
    bench = load_benchmark()
    logs, workers = tmp_path / "logs", tmp_path / "workers"
    logs.mkdir()
    workers.mkdir()
    stamps = {  # node: (train in, train sent, evaluate in, evaluate sent)
        0: ("10:00:00,000", "10:00:02,000", "10:00:05,500", "10:00:06,000"),
        1: ("10:00:00,500", "10:00:03,000", "10:00:06,500", "10:00:08,000"),
    }
    for node, (a, b, c, d) in stamps.items():
        lines = [
            _flower_line(f"2026-01-01 {a}", "Receiving: train message (ID: x)"),
            _flower_line(f"2026-01-01 {a}", "Received successfully"),
            _flower_line(f"2026-01-01 {b}", "Sent successfully"),
            'INFO:     127.0.0.1:1 - "POST /v1/runtime/pull-messages HTTP/1.1" 200 OK',
            _flower_line(f"2026-01-01 {c}", "Receiving: evaluate message (ID: y)"),
            _flower_line(f"2026-01-01 {d}", "Sent successfully"),
        ]
        (logs / f"node{node}.log").write_text("\n".join(lines) + "\n")
        (workers / f"w{node}.log").write_text(
            "fedgraph worker 1 serving x on y\n"
            f"1.0 message done: handled in {1.0 + node} s, state saved in 0.1 s\n"
            f"2.0 message done: handled in {0.25 * (node + 1)} s, state saved in 0 s\n"
        )
    out = bench.timeline(logs, workers, 2)
    train, evaluate = out["exchanges"]
    assert train == {"message": "train", "node": 2.25, "app": 1.5}
    # the last train reply left at 10:00:03; evaluate arrived 2.5 s and 3.5 s later
    assert evaluate == {
        "message": "evaluate",
        "node": 1.0,
        "app": 0.375,
        "wait": 3.0,
        "max_wait": 3.5,
    }
    assert out["summary"]["evaluate"] == {"count": 1, **{
        k: evaluate[k] for k in ("node", "app", "wait", "max_wait")
    }}  # fmt: skip
    # nodes that saw different sequences (a lost node) give no timeline
    (logs / "node1.log").write_text("")
    assert bench.timeline(logs, workers, 2) is None


def test_the_timeline_adds_the_server_and_executor_steps(tmp_path):
    # One node, two exchanges; the ServerApp's and the executor's DEBUG lines
    # (epoch seconds) beside the node's log (local time stamps).
    import datetime

    bench = load_benchmark()
    logs = tmp_path / "logs"
    logs.mkdir()
    t0 = datetime.datetime(2026, 1, 1, 10, 0, 0).timestamp()

    def stamp(dt: float) -> str:
        when = datetime.datetime.fromtimestamp(t0 + dt)
        return when.strftime("%Y-%m-%d %H:%M:%S,%f")[:-3]

    (logs / "node0.log").write_text(
        "\n".join(
            [
                _flower_line(stamp(0), "SuperNode ID: 77"),
                _flower_line(stamp(1.0), "Receiving: train message (ID: x)"),
                _flower_line(stamp(4.0), "Sent successfully"),
                _flower_line(stamp(5.0), "Receiving: evaluate message (ID: y)"),
                _flower_line(stamp(6.0), "Sent successfully"),
            ]
        )
    )
    exchanges = [
        {"type": "train", "round": 1, "pushed": t0 + 0.5, "replies": {"77": t0 + 4.5}},
        {"type": "evaluate", "round": 1, "pushed": t0 + 4.75,
         "replies": {"77": t0 + 6.25}},
    ]  # fmt: skip
    (logs / "flwr-run.log").write_text(
        "".join(f"DEBUG : [fedgraph] exchange {json.dumps(e)}\n" for e in exchanges)
    )
    tasks = [
        {"acquired": 1.25, "pulled": 1.5, "app": 3.5, "pushed": 3.75, "closed": 3.8},
        {"acquired": 5.0, "pulled": 5.25, "app": 5.5, "pushed": 5.75, "closed": 5.8},
    ]
    (logs / "exec0.log").write_text(
        "".join(
            "DEBUG : fedgraph executor: task "
            + json.dumps({k: t0 + v for k, v in t.items()})
            + "\n"
            for t in tasks
        )
    )
    train, evaluate = bench.timeline(logs, tmp_path / "no-workers", 1)["exchanges"]
    assert train == pytest.approx(
        {"message": "train", "node": 3.0, "to_node": 0.5, "to_server": 0.5,
         "exchange": 4.0, "task_start": 0.25, "input": 0.25, "app": 2.0,
         "output": 0.25, "to_link": 0.25},
        abs=2e-3,
    )  # fmt: skip
    assert evaluate["server"] == pytest.approx(0.25, abs=2e-3)  # 4.5 -> 4.75
    assert evaluate["to_node"] == pytest.approx(0.25, abs=2e-3)
    assert evaluate["wait"] == pytest.approx(1.0, abs=2e-3)


@pytest.mark.slow
def test_a_deployment_that_waits_for_a_restarted_node_equals_the_simulation(
    tmp_path,
):
    # fedgraph's SuperNode launcher (shorter polls) and executor; client 1's
    # SuperNode is killed in round 2 and restarted: with wait-for-failed the
    # server redoes its exchange on the new node, which restored its snapshot.
    doc = deploy(
        tmp_path, 9460, "--clientapp", "executor", "--node-poll", "0.2",
        "--kill-client", "1", "--kill-at-round", "2", "--restart-after", "2",
        "--set", "wait-for-failed=300.0",
    )  # fmt: skip
    assert doc["exit_code"] == 0 and doc["status"]["status"] == "completed"
    events = [(e["event"], e["client"]) for e in doc["lost_client"]["events"]]
    assert ("retried", 1) in events and ("rejoined", 1) in events
    assert doc["same_results"] is True  # failure events aside
    assert doc["node_poll"] == 0.2


def named_toy():
    from fedgraph.data.shard import FederatedKG

    fed = toy_federation()
    ents = [f"http://org.example/e/{i:02d}" for i in range(fed.num_entities)]
    rels = [f"http://org.example/r/{i}" for i in range(fed.num_relations)]
    return FederatedKG(fed.shards, fed.num_entities, fed.num_relations, ents, rels)


def _valid(doc: dict) -> list[float]:
    return [h["valid"]["mrr"] for h in doc["history"] if "valid" in h]


@pytest.mark.slow
@pytest.mark.parametrize(("algorithm", "port"), [("fede", 9480), ("fedr", 9500)])
def test_nodes_with_only_their_own_folder_over_tls_equal_the_keyed_simulation(
    tmp_path, algorithm, port
):
    # Each SuperNode starts in its own folder holding a copy of its client
    # folder and the secret only; every process lists the files it opens.
    from fedgraph.partition import save_partition

    data = save_partition(named_toy(), tmp_path / "toy3")
    out, work = tmp_path / "deploy.json", tmp_path / "work"
    cmd = [
        sys.executable, str(ROOT / "benchmarks" / "flower_deploy.py"),
        "--data", str(data), "--algorithm", algorithm, "--rounds", "2",
        "--json", str(out), "--port", str(free_ports(port)), "--timeout", "1500",
        "--work", str(work), "--own-folders", "--audit-opens", "--tls",
        "--node-poll", "0.2",
        *(a for item in TOY for a in ("--set", item)),
    ]  # fmt: skip
    subprocess.run(cmd, timeout=1600, check=False, capture_output=True)
    doc = json.loads(out.read_text())
    assert doc["exit_code"] == 0 and doc["status"]["status"] == "completed"
    assert doc["tls"] and doc["own_folders"]
    dep, sim = doc["deployment"], doc["simulation"]
    assert "KeyedHashStrategy" in dep["settings"]["strategy"]
    assert "KeyedHashStrategy" in sim["settings"]["strategy"]
    assert len(_valid(dep)) == 2
    assert _valid(dep) == pytest.approx(_valid(sim), abs=1e-6)
    assert dep["weighted"]["mrr"] == pytest.approx(sim["weighted"]["mrr"], abs=1e-6)
    opened = doc["opened"]
    assert {"server", "node0", "node1", "node2"} <= set(opened)
    orgs = [str(work / "orgs" / f"org{k}") + "/" for k in range(3)]
    for role, paths in opened.items():
        others = [str(data) + "/"] + [
            o for k, o in enumerate(orgs) if role != f"node{k}"
        ]
        assert not [p for p in paths if p.startswith(tuple(others))], role
    for k in range(3):  # the hook saw each node read its own folder
        assert f"{orgs[k]}kg/train.txt" in opened[f"node{k}"]


@pytest.mark.slow
def test_a_superlink_restart_ends_the_run_as_lost_and_resume_continues_it(tmp_path):
    # The SuperLink is killed (SIGKILL) after round 1 and started again on the
    # same port and database: its SuperExec and ServerApp die with it, `flwr
    # run` exits 1, the ServerApp (stopped by Flower's signal handler) or the
    # follower writes `lost` naming how to resume, and the follower exits 1; the run
    # started again with `resume = true` ends as the simulation does.
    doc = deploy(
        tmp_path, 9520, "--node-poll", "0.2", "--restart-superlink-at-round", "2"
    )
    link = doc["superlink_restart"]
    assert link["round"] == 2
    assert link["flwr_run_exit_code"] == 1 and link["exit_code"] == 1
    ckpt = str(tmp_path / "work" / "server" / "ckpt")
    assert link["status"]["status"] == "lost"
    # The ServerApp writes `lost` itself: SystemExit from Flower's signal
    # handler, or KeyboardInterrupt when the SIGINT comes while Python's
    # default handler is in place. Or, when it dies before it can write (a
    # loaded machine), the follower writes it from the stale heartbeat.
    assert re.match(
        r"the ServerApp was stopped \((SystemExit|KeyboardInterrupt): a signal, or "
        r"its SuperLink or SuperExec ended\) before the run finished"
        r"|the ServerApp stopped beating \S+/heartbeat\.json \d+ s ago while "
        r"\S+/status\.json said running: it was killed or its SuperLink is gone",
        link["status"]["error"],
    )
    assert link["status"]["error"].endswith(
        f"; to continue from {ckpt}/last.pt, "
        "start it again with the same run config and `resume = true` "
        f"(`checkpoint-dir` '{ckpt}', `run-name` 'deploy'; every node keeps its "
        "`state-dir`)"
    )
    # nothing written before the restart was lost: the server's checkpoints
    # (of round 1) and every client's snapshot of round 1; a client keeps its
    # two newest snapshots and may be one round ahead (round 2's messages
    # can reach it before the SuperLink dies, on a loaded machine)
    assert {"ckpt/last.pt", "ckpt/best.pt"} <= set(link["written"])
    for k in range(3):
        prefix = f"node-state/deploy/client{k}/round"
        kept = sorted(
            int(f[len(prefix) : -3]) for f in link["written"] if f.startswith(prefix)
        )
        assert kept in ([0, 1], [1, 2]), (k, kept)
    assert doc["exit_code"] == 0 and doc["status"]["status"] == "completed"
    assert [h["round"] for h in doc["deployment"]["history"]] == [1, 2, 3]
    assert doc["same_results"] is True


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--restart-superlink-at-round", "4"],
         "--restart-superlink-at-round must lie in [2, 3] (got 4)"),
        (["--restart-superlink-at-round", "2", "--kill-client", "1",
          "--kill-at-round", "2"],
         "--restart-superlink-at-round and --kill-client exclude each other"),
        (["--restart-superlink-at-round", "2", "--algorithm", "fedavg"],
         "--restart-superlink-at-round resumes from checkpoints, which Fed-RGCN "
         "runs do not write (got --algorithm fedavg)"),
    ],
)  # fmt: skip
def test_the_benchmark_names_a_bad_superlink_restart(tmp_path, capsys, extra, message):
    bench = load_benchmark()
    base = ["--data", str(tmp_path), "--algorithm", "fede", "--rounds", "3"]
    with pytest.raises(SystemExit) as exc:
        bench.parse_args([*base, "--json", str(tmp_path / "x.json"), *extra])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
