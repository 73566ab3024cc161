r"""A Flower server that holds no client data, and rounds that lose a node.

The apps run on :class:`~fedgraph.runtime.flower.LocalGrid` (real apps and
records, no SuperLink). The partition folder exists only while a node
handles a message, so any read of it by the server would fail; nodes are
taken offline and restarted (a new node id, an empty ``context.state``) as
a killed SuperNode is.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("flwr")

from fedgraph.runtime.flower import (  # noqa: E402
    ClientReplyError,
    LocalGrid,
    run_local,
    run_server,
)
from fedgraph.runtime.flower.client_app import app as client_app  # noqa: E402
from fedgraph.runtime.flower.federation import load_federation  # noqa: E402
from fedgraph.runtime.flower.protocol import SERVER_ROUND, from_content  # noqa: E402
from fedgraph.runtime.flower.server_app import app as server_app  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_flower import (  # noqa: E402
    ROUNDS,
    _json,
    _no_seconds,
    run_config,
    simulate,
    toy_federation,
)


@pytest.fixture(autouse=True)
def _fresh_federation_cache(one_thread):
    load_federation.cache_clear()
    yield
    load_federation.cache_clear()


@pytest.fixture
def partition(tmp_path):
    from fedgraph.partition import save_partition

    return save_partition(toy_federation(), tmp_path / "toy3")


class NodesOnly:
    r"""Wraps a ``ClientApp`` so that ``folder`` exists only while a node
    handles a message: the server side of the run cannot open it."""

    def __init__(self, app, folder: Path) -> None:
        self.app, self.folder = app, Path(folder)
        self.hidden = self.folder.with_name(self.folder.name + ".nodes-only")
        self.folder.rename(self.hidden)

    def __call__(self, message, context):
        self.hidden.rename(self.folder)
        try:
            return self.app(message, context)
        finally:
            self.folder.rename(self.hidden)


def test_the_kge_server_opens_no_data(partition, tmp_path, monkeypatch):
    strategy, _, res = simulate(partition, "fede")
    load_federation.cache_clear()
    monkeypatch.setenv("FEDGRAPH_DATA", str(tmp_path / "no-data-here"))
    server_dir = tmp_path / "server"
    server_dir.mkdir()
    monkeypatch.chdir(server_dir)  # a working directory without a dataset
    out = tmp_path / "out"
    cfg = run_config(partition, "fede", out)  # no num-entities, no num-clients
    run_local(server_app, NodesOnly(client_app, partition), cfg, num_nodes=3)
    doc = json.loads((out / "results.json").read_text())
    assert _no_seconds(doc["history"]) == _json(_no_seconds(res.history))
    assert doc["weighted"] == res.test and doc["comm"] == res.comm
    assert doc["settings"]["strategy_params"] == _json(strategy.get_params())
    assert json.loads((out / "status.json").read_text())["status"] == "completed"
    assert list(server_dir.iterdir()) == []


def test_the_rgcn_server_opens_no_data(tmp_path, monkeypatch):
    from fedgraph.partition.rdf_type import RDFTypePartitioner
    from fedgraph.runtime.flower.rgcn import client_app as rgcn_client
    from fedgraph.runtime.flower.rgcn import load_rdf_federation
    from fedgraph.runtime.flower.rgcn import server_app as rgcn_server
    from fedgraph.runtime.rgcn_runner import run_fed_rgcn

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "federated"))
    from test_fedalign import toy_graph

    data = tmp_path / "toy-rdf-3"
    RDFTypePartitioner(3, num_types=2, seed=0)(toy_graph()).save(data)
    sim = run_fed_rgcn(
        toy_graph(),
        "fedavg",
        num_clients=3,
        num_types=2,
        rounds=3,
        local_epochs=2,
        num_bases=4,
        hidden_channels=4,
    )
    load_rdf_federation.cache_clear()
    monkeypatch.setenv("FEDGRAPH_DATA", str(tmp_path / "no-data-here"))
    out = tmp_path / "out"
    cfg = {
        "data": str(data),
        "algorithm": "fedavg",
        "num-rounds": 3,
        "local-epochs": 2,
        "num-bases": 4,
        "hidden-channels": 4,
        "out": str(out),
    }
    try:
        run_local(rgcn_server, NodesOnly(rgcn_client, data), cfg, num_nodes=3)
    finally:
        load_rdf_federation.cache_clear()
    doc = json.loads((out / "results.json").read_text())
    # client 0's registration brought the initial bases: the simulation's
    accs = [h["test"]["accuracy"] for h in doc["history"]]
    assert accs == [c["test_accuracy"] for c in sim["curve"]]
    for key in ("params_up", "params_down", "bytes_up", "bytes_down"):
        assert doc["comm"][key] == sim["comm"][key], key


def _kill(grid: LocalGrid, partition_id: int, at_round: int, restart: bool):
    r"""A ``ClientApp`` that kills the node of ``partition_id`` when it is
    sent its ``train`` message of ``at_round`` (and starts a new node for
    the same partition when ``restart``)."""
    app = grid.client_app
    killed: list[int] = []

    def wrapped(message, context):
        _, control = from_content(message.content)
        if (
            not killed
            and message.metadata.message_type == "train"
            and context.node_config.get("partition-id") == partition_id
            and control.get(SERVER_ROUND) == at_round
        ):
            killed.append(context.node_id)
            grid.stop_node(context.node_id)
            if restart:
                grid.start_node(dict(context.node_config))
            raise RuntimeError("SuperNode killed")
        return app(message, context)

    grid.client_app = wrapped
    return killed


def _nodes(tmp_path: Path, n: int = 3) -> list[dict]:
    return [{"partition-id": i, "state-dir": str(tmp_path / "nodes")} for i in range(n)]


@pytest.mark.parametrize("checkpointed", [True, False])
def test_a_lost_round_is_recorded_and_the_node_rejoins(
    partition, tmp_path, checkpointed
):
    _, _, sim = simulate(partition, "fede")
    out = tmp_path / "out"
    cfg = run_config(
        partition, "fede", out, **{"accept-failures": True, "min-fit-nodes": 2}
    )
    if checkpointed:  # nodes save snapshots: the restarted one restores round 1
        cfg.update({"checkpoint-dir": str(tmp_path / "ck"), "run-name": "toy"})
    grid = LocalGrid(client_app, _nodes(tmp_path), cfg)
    killed = _kill(grid, partition_id=1, at_round=2, restart=True)
    run_server(grid, cfg)
    assert killed
    doc = json.loads((out / "results.json").read_text())
    hist = doc["history"]
    assert doc["rounds"] == ROUNDS and doc["weighted"]
    # Round 1 is the simulation's; round 2 lost client 1's upload.
    assert _no_seconds(hist[:1]) == _json(_no_seconds(sim.history[:1]))
    events = hist[1]["events"]
    assert [(e["event"], e["client"], e["round"]) for e in events] == [
        ("failed", 1, 2),
        ("rejoined", 1, 2),
    ]
    assert events[0]["stage"] == "train" and "SuperNode killed" in events[0]["reason"]
    assert events[1]["restored_round"] == (1 if checkpointed else 0)
    assert all("events" not in h for h in hist[2:])
    # The ledger: all three payloads went down, two came back.
    flower2 = doc["comm_per_round"]["2"]
    sim2 = sim.comm_per_round[2]
    assert flower2["params_down"] == sim2["params_down"]
    assert flower2["params_up"] * 3 == sim2["params_up"] * 2  # 7 rows each
    assert flower2["messages_up"] == sim2["messages_up"] - 1
    # It rejoined: every later exchange and the test pass reached it.
    assert hist[1]["valid_clients"].keys() == {"0", "1", "2"}
    assert [r["client"] for r in doc["clients"]] == [0, 1, 2]
    assert json.loads((out / "status.json").read_text())["status"] == "completed"


def test_a_lost_node_that_stays_away_is_skipped(partition, tmp_path):
    out = tmp_path / "out"
    cfg = run_config(
        partition, "fede", out, **{"accept-failures": True, "min-fit-nodes": 2}
    )
    grid = LocalGrid(client_app, _nodes(tmp_path), cfg)
    _kill(grid, partition_id=1, at_round=2, restart=False)
    _, res = run_server(grid, cfg)
    hist = res.history
    assert [e["event"] for e in hist[1]["events"]] == ["failed", "skipped"]
    for h in hist[2:]:  # left out, and not counted as sent
        assert [(e["event"], e["client"]) for e in h["events"]] == [("skipped", 1)] * (
            2 if "valid" in h else 1
        )
    assert res.comm_per_round[3]["messages_down"] == 2
    assert sorted(res.test_clients) == [0, 2]
    assert [e["event"] for e in res.test_events] == ["skipped"]


@pytest.mark.parametrize(
    "extra,message",
    [
        ({}, r"Round 2, 'train': client 1 \(partition-id 1, node \d+\): "
             r".*SuperNode killed.*accept-failures is off"),
        ({"accept-failures": True, "min-fit-nodes": 3},
         r"Round 2, 'train': client 1 .*2 replies, fewer than min-fit-nodes 3"),
    ],
)  # fmt: skip
def test_a_lost_node_stops_the_run_naming_client_and_round(
    partition, tmp_path, extra, message
):
    out = tmp_path / "out"
    cfg = run_config(partition, "fede", out, **extra)
    grid = LocalGrid(client_app, _nodes(tmp_path), cfg)
    _kill(grid, partition_id=1, at_round=2, restart=False)
    with pytest.raises(ClientReplyError, match=message):
        run_server(grid, cfg)
    status = json.loads((out / "status.json").read_text())
    assert status["status"] == "failed" and "Round 2" in status["error"]
    assert not (out / "results.json").exists()


def test_failure_settings_name_the_key(partition, tmp_path):
    from fedgraph.runtime.flower import FlowerRunSettings

    cfg = run_config(partition, "fede", tmp_path)
    with pytest.raises(ValueError, match="`min-fit-nodes` must be non-negative"):
        FlowerRunSettings.from_run_config({**cfg, "min-fit-nodes": -1})
    with pytest.raises(ValueError, match="`client-mods`: unknown mod 'nope'"):
        FlowerRunSettings.from_run_config({**cfg, "client-mods": "nope"})
    with pytest.raises(ValueError, match="`accept-failures`"):
        FlowerRunSettings.from_run_config({**cfg, "accept-failures": "yes"})
    with pytest.raises(ValueError, match="`wait-for-failed` must be non-negative"):
        FlowerRunSettings.from_run_config({**cfg, "wait-for-failed": -1.0})
    with pytest.raises(ValueError, match=r"`pull-backoff` must lie in \[0, 60\] s"):
        FlowerRunSettings.from_run_config({**cfg, "pull-backoff": 90.0})


def test_client_mods_from_the_run_config_wrap_every_handler(partition, tmp_path):
    calls = []

    def counting_mod(message, context, call_next):
        calls.append(message.metadata.message_type)
        return call_next(message, context)

    sys.modules[__name__].counting_mod = counting_mod
    cfg = run_config(
        partition,
        "fede",
        tmp_path / "out",
        **{"num-rounds": 1, "client-mods": f"message-size, {__name__}:counting_mod"},
    )
    run_local(server_app, client_app, cfg, num_nodes=3)
    assert calls.count("query.align") == 3 and calls.count("train") == 3
    assert calls.count("evaluate") == 6  # valid and test


@pytest.mark.slow
def test_a_process_lived_worker_gives_the_same_numbers(
    partition, tmp_path, monkeypatch, fresh_compile
):
    # The forwarding ClientApp (imports only Flower) and a real worker
    # process that keeps the fedgraph client in memory across messages.
    from fedgraph.runtime.flower.node import WorkerClientApp

    monkeypatch.setenv("FEDGRAPH_WORKER_DIR", str(tmp_path / "workers"))
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]))
    # one intra-op thread in the worker too, as in this process: float sums in
    # the same order, so the numbers are bit-equal whatever ran before
    cfg = run_config(
        partition, "fede", tmp_path / "in-process", **{"num-rounds": 2, "threads": 1}
    )
    plain = run_local(server_app, client_app, cfg, num_nodes=3)
    app = WorkerClientApp("kge", start_timeout=300, parent=os.getpid())
    try:
        cfg["out"] = str(tmp_path / "worker")
        worker = run_local(server_app, app, cfg, num_nodes=3)
    finally:
        assert app.stop()
    a = json.loads((tmp_path / "in-process" / "results.json").read_text())
    b = json.loads((tmp_path / "worker" / "results.json").read_text())
    assert _no_seconds(a["history"]) == _no_seconds(b["history"])
    assert a["weighted"] == b["weighted"] and a["comm"] == b["comm"]
    # The client state stays in the worker (memory and its snapshots): the
    # nodes' context.state stays empty, the snapshots hold what the
    # in-process nodes kept in theirs.
    from flwr.common.serde import recorddict_from_proto
    from flwr.proto.recorddict_pb2 import RecordDict as ProtoRecordDict

    (folder,) = (tmp_path / "workers").glob("*.state")
    run_id = worker.run.run_id
    for node, ctx in plain.contexts.items():
        assert len(worker.contexts[node].state) == 0
        snapshot = folder / f"run{run_id}-node{node}.bin"
        held = recorddict_from_proto(ProtoRecordDict.FromString(snapshot.read_bytes()))
        assert held.keys() == ctx.state.keys()
    # one worker served every message: one process started
    logs = list((tmp_path / "workers").glob("*.log"))
    assert len(logs) == 1 and logs[0].read_text().count("serving") == 1


def _forwarded(message, context):
    from flwr.common.serde import context_to_proto

    from fedgraph.runtime.flower.node import to_wire

    root, contents = to_wire(message)
    ctx = context_to_proto(context).SerializeToString()
    return (root, contents, message.metadata.message_id, ctx)


def test_the_worker_keeps_the_node_state_out_of_the_messages(tmp_path):
    # A worker holds each node's context.state itself: in memory, in a
    # snapshot that a restarted worker reads, and unchanged by a message
    # that fails.
    from flwr.app import ConfigRecord, Context, Message, RecordDict
    from flwr.supercore.task_identity import TaskIdentity

    from fedgraph.runtime.flower.failures import NODE_ERROR_MESSAGE
    from fedgraph.runtime.flower.worker import NodeStates, handle

    def counting_app(message, context):
        if message.content["config"]["fail"]:
            context.state["count"] = ConfigRecord({"n": -1})  # then fails
            raise RuntimeError("bad message")
        n = context.state["count"]["n"] if "count" in context.state else 0
        context.state["count"] = ConfigRecord({"n": n + 1})
        return Message(
            RecordDict({"config": ConfigRecord({"n": n + 1})}), reply_to=message
        )

    def send(states, node, fail=False, run=7):
        TaskIdentity.run_id, TaskIdentity.node_id = run, 0  # as a ServerApp
        TaskIdentity.task_id = 1
        message = Message(
            RecordDict({"config": ConfigRecord({"fail": fail})}),
            dst_node_id=node,
            message_type="query",
        )
        message.metadata.__dict__["_message_id"] = message.object_id
        context = Context(run, node, {}, RecordDict(), {})
        ok, answer = handle(counting_app, _forwarded(message, context), states)
        states.save()
        if not ok:
            return answer
        from fedgraph.runtime.flower.node import from_wire

        return from_wire(*answer, answer[0]).content["config"]["n"]

    states = NodeStates(tmp_path / "states")
    assert [send(states, 1), send(states, 1), send(states, 2)] == [1, 2, 1]
    # the server gets the error's class only (the worker logs the text)
    assert send(states, 1, fail=True) == f"RuntimeError: {NODE_ERROR_MESSAGE}"
    assert send(states, 1) == 3  # the failed message changed nothing
    # a restarted worker goes on from the snapshots
    again = NodeStates(tmp_path / "states")
    assert [send(again, 1), send(again, 2)] == [4, 2]
    # another run starts from nothing and leaves the first run's state alone
    assert send(again, 1, run=8) == 1 and send(again, 1) == 5
    assert sorted(p.name for p in (tmp_path / "states").iterdir()) == [
        "run7-node1.bin",
        "run7-node2.bin",
        "run8-node1.bin",
    ]
    again.remove()
    assert not (tmp_path / "states").exists()


def test_min_available_nodes_waits_for_a_lost_node(partition, tmp_path, monkeypatch):
    from fedgraph.runtime.flower import transport as grid_transport

    cfg = run_config(
        partition,
        "fede",
        tmp_path / "out",
        **{"accept-failures": True, "min-available-nodes": 3, "connect-timeout": 5.0},
    )
    # Nobody comes back: round 3 waits for the lost client, then stops.
    grid = LocalGrid(client_app, _nodes(tmp_path), cfg)
    _kill(grid, partition_id=1, at_round=2, restart=False)
    monkeypatch.setattr(grid_transport.time, "sleep", lambda s: None)
    with pytest.raises(
        ClientReplyError,
        match=r"Round 3: 2 clients connected, min-available-nodes is 3 "
        r"\(lost: client 1 in round 2",
    ):
        run_server(grid, cfg)
    # The node comes back while round 3 waits: the round runs with it.
    grid = LocalGrid(client_app, _nodes(tmp_path / "again"), cfg)
    _kill(grid, partition_id=1, at_round=2, restart=False)
    waits = []

    def sleep(seconds):
        if not waits:
            grid.start_node(_nodes(tmp_path / "again")[1])
        waits.append(seconds)

    monkeypatch.setattr(grid_transport.time, "sleep", sleep)
    _, res = run_server(grid, cfg)
    assert waits
    events = [
        (e["event"], e["client"], e["round"])
        for h in res.history
        for e in h.get("events", [])
    ]
    assert ("rejoined", 1, 3) in events and res.history[2]["clients"] == [0, 1, 2]
    assert "events" not in res.history[3]


def _fail_once(grid: LocalGrid, partition_id: int, at_round: int, stage: str):
    r"""A ``ClientApp`` whose node of ``partition_id`` answers its ``stage``
    message of ``at_round`` once with an error (the node stays up, its state
    untouched)."""
    app = grid.client_app
    failed: list[int] = []

    def wrapped(message, context):
        _, control = from_content(message.content)
        if (
            not failed
            and message.metadata.message_type == stage
            and context.node_config.get("partition-id") == partition_id
            and control.get(SERVER_ROUND) == at_round
        ):
            failed.append(context.node_id)
            raise RuntimeError("transient failure")
        return app(message, context)

    grid.client_app = wrapped
    return failed


def _events(history):
    return [
        (e["event"], e["client"], e["round"], e.get("stage"))
        for h in history
        for e in h.get("events", [])
    ]


def _without_events(history):
    return [{k: v for k, v in h.items() if k != "events"} for h in history]


@pytest.mark.parametrize(
    "how,stage,extra",
    [
        # the node stays up and keeps its state: no snapshot needed
        ("error", "train", {}),
        ("error", "evaluate", {}),
        # a restarted SuperNode restores its snapshot of round 1
        ("restart", "train", {"checkpoint-dir": "ck", "run-name": "toy"}),
    ],
)
def test_wait_for_failed_redoes_the_exchange_as_in_the_simulation(
    partition, tmp_path, how, stage, extra
):
    _, _, sim = simulate(partition, "fede")
    out = tmp_path / "out"
    if "checkpoint-dir" in extra:
        extra = {**extra, "checkpoint-dir": str(tmp_path / "ck")}
    cfg = run_config(partition, "fede", out, **{"wait-for-failed": 30.0, **extra})
    grid = LocalGrid(client_app, _nodes(tmp_path), cfg)
    if how == "error":
        hit = _fail_once(grid, partition_id=1, at_round=2, stage=stage)
    else:
        hit = _kill(grid, partition_id=1, at_round=2, restart=True)
    _, res = run_server(grid, cfg)
    assert hit
    assert _events(res.history) == [
        ("failed", 1, 2, stage),
        ("rejoined", 1, 2, None),
        ("retried", 1, 2, stage),
    ]
    # Every round, the test pass and the ledger are the simulation's.
    doc = json.loads((out / "results.json").read_text())
    assert _without_events(_no_seconds(doc["history"])) == _json(
        _no_seconds(sim.history)
    )
    assert doc["weighted"] == sim.test and sim.test
    assert doc["comm"] == sim.comm
    assert json.loads((out / "status.json").read_text())["status"] == "completed"


def test_wait_for_failed_gives_up_on_a_client_back_with_another_state(
    partition, tmp_path
):
    # No snapshots: the restarted node is back with its initial state, which
    # cannot redo round 2's training; accept-failures decides.
    cfg = run_config(partition, "fede", tmp_path / "out", **{"wait-for-failed": 30.0})
    grid = LocalGrid(client_app, _nodes(tmp_path), cfg)
    _kill(grid, partition_id=1, at_round=2, restart=True)
    with pytest.raises(
        ClientReplyError,
        match=r"Round 2, 'train': client 1 .*back with its state of round 0, the "
        r"exchange started from round 1 \(accept-failures is off\)",
    ):
        run_server(grid, cfg)
    cfg["accept-failures"] = True
    grid = LocalGrid(client_app, _nodes(tmp_path / "again"), cfg)
    _kill(grid, partition_id=1, at_round=2, restart=True)
    _, res = run_server(grid, cfg)
    assert _events(res.history[1:2]) == [
        ("failed", 1, 2, "train"),
        ("rejoined", 1, 2, None),
        ("failed", 1, 2, "retry"),
    ]
    # round 2 trained without it; it is back from round 2's validation on
    _, _, sim = simulate(partition, "fede")
    assert (
        res.comm_per_round[2]["messages_up"] == sim.comm_per_round[2]["messages_up"] - 1
    )
    assert sorted(res.history[1]["valid_clients"]) == [0, 1, 2]


def test_wait_for_failed_stops_after_its_timeout(partition, tmp_path):
    cfg = run_config(partition, "fede", tmp_path / "out", **{"wait-for-failed": 0.5})
    grid = LocalGrid(client_app, _nodes(tmp_path), cfg)
    _kill(grid, partition_id=1, at_round=2, restart=False)  # never back
    with pytest.raises(
        ClientReplyError, match=r"Round 2, 'train': client 1 .*SuperNode killed"
    ):
        run_server(grid, cfg)


def test_status_json_says_running_while_the_server_runs(partition, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "status.json").write_text('{"status": "completed", "error": ""}')  # stale
    cfg = run_config(partition, "fede", out)
    grid = LocalGrid(client_app, _nodes(tmp_path), cfg)
    seen = []

    def app(message, context):
        seen.append(json.loads((out / "status.json").read_text())["status"])
        return client_app(message, context)

    grid.client_app = app
    run_server(grid, cfg)
    assert seen and set(seen) == {"running"}
    assert json.loads((out / "status.json").read_text())["status"] == "completed"
