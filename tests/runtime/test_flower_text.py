r"""The FedMKGC Flower apps (:mod:`fedgraph.runtime.flower.text`): run-config
parsing, the server that reads no client data, and a node's client equal
to the simulation's. (The local-grid run equal to ``fedgraph train --model
text`` is in ``tests/federated/test_algorithm_contract.py``.)"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("flwr")
pytest.importorskip("transformers")

from fedgraph.cli.train import FAMILY_DEFAULTS  # noqa: E402
from fedgraph.federated.separated import Separated  # noqa: E402
from fedgraph.federated.text.fedmkgc import FedMKGC  # noqa: E402
from fedgraph.federated.text.setup import (  # noqa: E402
    MKGCSettings,
    build_fedmkgc,
    load_text_model,
)
from fedgraph.runtime.fedmkgc_runner import load_language_graphs  # noqa: E402
from fedgraph.runtime.flower import run_local  # noqa: E402
from fedgraph.runtime.flower.alignment import AlignedRun  # noqa: E402
from fedgraph.runtime.flower.text import (  # noqa: E402
    TEXT_ALIGNMENT,
    TextRunSettings,
    build_text_client,
    build_text_server,
    clear_caches,
    client_app,
    server_app,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
from text_toy import save_tiny_model, write_toy_dbp5l  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(autouse=True)
def _fresh_caches():
    yield
    clear_caches()


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    root = tmp_path_factory.mktemp("text-flower")
    return write_toy_dbp5l(root / "dbp"), save_tiny_model(root / "bert")


def test_defaults_are_those_of_fedgraph_train():
    cfg = TextRunSettings(data="dbp-5l", algorithm="fedmkgc")
    assert cfg.mkgc_settings() == MKGCSettings()
    cli = FAMILY_DEFAULTS["text"]
    assert (cfg.num_rounds, cfg.lr, cfg.batch_size) == (
        cli["rounds"],
        cli["lr"],
        cli["batch_size"],
    )
    assert (cfg.margin, cfg.temperature) == (cli["gamma"], cli["temperature"])


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("algorithm", "fede", "`algorithm`: Could not resolve 'fede'"),
        ("lr", 0.0, "`lr` must be positive"),
        ("batch-size", 1.5, "`batch-size` must be an integer"),
        ("fraction", 0.5, "`fraction` must be 1.0 for fedmkgc"),
        ("rerank-hops", -1, "`rerank-hops` must be non-negative"),
        ("dim", 8, "Unknown run-config key `dim` for FedMKGC"),
        ("languages", "el, en el", "`languages` must name distinct languages"),
        ("resume", True, "`resume` needs `checkpoint-dir`"),
    ],
)
def test_run_config_errors_name_the_key(key, value, message):
    with pytest.raises(ValueError, match=message):
        TextRunSettings.from_run_config(
            {"data": "x", "algorithm": "fedmkgc", key: value}
        )
    parsed = TextRunSettings.from_run_config(
        {"data": "x", "algorithm": "FedMKGC-Parallel", "fraction": 0.5}
    )
    assert parsed.algorithm == "fedmkgcparallel"


def test_the_server_opens_no_data(toy):
    _, model = toy
    aligned = AlignedRun(num_clients=2)
    cfg = TextRunSettings(data="/no/such/data", algorithm="fedmkgc", encoder=str(model))
    strategy, n = build_text_server(cfg, aligned)
    assert n == 2 and isinstance(strategy, FedMKGC)
    encoder, _ = load_text_model(model)
    assert strategy.arrays.keys() == {
        f"encoder.{k}" for k, _ in encoder.named_parameters()
    }
    for k, p in encoder.named_parameters():
        assert torch.equal(strategy.arrays[f"encoder.{k}"], p)
    # independent shares nothing: the server needs no language model either
    cfg = TextRunSettings(data="/no/such/data", algorithm="independent", encoder="/no")
    assert isinstance(build_text_server(cfg, aligned)[0], Separated)
    with pytest.raises(ValueError, match="`num-clients`"):
        build_text_server(TextRunSettings(data="x", algorithm="independent"))


def test_a_node_reports_the_languages_and_builds_the_simulation_client(toy):
    data, model = toy
    cfg = TextRunSettings(
        data=str(data), algorithm="fedmkgc", encoder=str(model), languages="it,en"
    )
    reply = TEXT_ALIGNMENT.node_reply(cfg, {"partition-id": 1}, {})
    assert reply == {"partition-id": 1, "num-clients": 2}
    with pytest.raises(ValueError, match="`partition-id` must lie in \\[0, 2\\)"):
        TEXT_ALIGNMENT.node_reply(cfg, {"partition-id": 2}, {})
    # a language the data does not have, or data that is not multilingual
    bad = TextRunSettings(data=str(data), algorithm="fedmkgc", languages="en xx")
    with pytest.raises(ValueError, match="`languages` must name distinct languages"):
        build_text_client(bad, {"partition-id": 1})
    with pytest.raises(ValueError, match="`data` folder .* is not in the DBP-5L"):
        TEXT_ALIGNMENT.node_reply(
            TextRunSettings(data=str(data / "kg"), algorithm="fedmkgc"),
            {"partition-id": 0},
            {},
        )

    client, cid = build_text_client(cfg, {"partition-id": 1})
    graphs = list(load_language_graphs(data, ["it", "en"]).values())
    _, clients = build_fedmkgc(
        "fedmkgc", graphs, *load_text_model(model), cfg.mkgc_settings()
    )
    assert cid == 1 and client.graph.name == clients[1].graph.name
    same = clients[1].state_dict()
    for key, value in client.state_dict()["model"].items():
        assert torch.equal(value, same["model"][key]), key
    assert torch.equal(client.dropout_state, clients[1].dropout_state)


FAST = {"num-rounds": 2, "eval-every": 1, "lr": 1e-3, "batch-size": 6,
        "max-length": 6, "prefix-tokens": 2, "threads": 1}  # fmt: skip


class NodesOnly:
    r"""A ``ClientApp`` wrapper that makes the data folder exist only while a
    node handles a message: a server that opened it would fail."""

    def __init__(self, app, folder: Path) -> None:
        self.app, self.folder = app, folder
        self.hidden = folder.with_name(folder.name + ".nodes-only")

    def __call__(self, message, context):
        self.hidden.rename(self.folder)
        try:
            return self.app(message, context)
        finally:
            self.folder.rename(self.hidden)


def _results(folder: Path) -> dict:
    doc = json.loads((folder / "results.json").read_text())
    drop = ("train_seconds", "eval_seconds")
    doc["history"] = [
        {k: v for k, v in h.items() if k not in drop} for h in doc["history"]
    ]
    return doc


def test_a_run_with_the_data_on_the_nodes_only(toy, tmp_path, monkeypatch):
    data, model = toy
    local = tmp_path / "dbp"
    shutil.copytree(data, local)
    cfg = {"data": str(local), "algorithm": "fedmkgc", "encoder": str(model), **FAST}
    run_local(server_app, client_app, {**cfg, "out": str(tmp_path / "plain")}, 2)
    clear_caches()
    monkeypatch.setenv("FEDGRAPH_DATA", str(tmp_path / "no-data-here"))
    wrapped = NodesOnly(client_app, local)
    local.rename(wrapped.hidden)
    run_local(server_app, wrapped, {**cfg, "out": str(tmp_path / "hidden")}, 2)
    a, b = _results(tmp_path / "plain"), _results(tmp_path / "hidden")
    assert a["weighted"] == b["weighted"] and a["history"] == b["history"]


@pytest.mark.slow
def test_the_process_lived_text_app_gives_the_same_numbers(toy, tmp_path, monkeypatch):
    # examples/flower_text_app's ClientApp: a worker process keeps the client
    from fedgraph.runtime.flower.node import WorkerClientApp

    data, model = toy
    monkeypatch.setenv("FEDGRAPH_WORKER_DIR", str(tmp_path / "workers"))
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]))
    cfg = {"data": str(data), "algorithm": "fedmkgcparallel", "encoder": str(model),
           **FAST}  # fmt: skip
    run_local(server_app, client_app, {**cfg, "out": str(tmp_path / "plain")}, 2)
    app = WorkerClientApp("text", start_timeout=300, parent=os.getpid())
    try:
        run_local(server_app, app, {**cfg, "out": str(tmp_path / "worker")}, 2)
    finally:
        assert app.stop()
    a, b = _results(tmp_path / "plain"), _results(tmp_path / "worker")
    assert a["weighted"] == b["weighted"] and a["history"] == b["history"]
    assert a["comm"] == b["comm"]


def test_a_checkpointed_run_stopped_and_resumed_gives_the_whole_runs_numbers(
    toy, tmp_path
):
    from fedgraph.runtime.flower import LocalGrid, run_server

    data, model = toy
    cfg = {"data": str(data), "algorithm": "fedmkgc", "encoder": str(model),
           **FAST, "num-rounds": 3}  # fmt: skip
    run_local(server_app, client_app, {**cfg, "out": str(tmp_path / "whole")}, 2)
    cfg.update(
        {"out": str(tmp_path / "resumed"), "checkpoint-dir": str(tmp_path / "ckpt"),
         "run-name": "toy"}
    )  # fmt: skip
    nodes = [
        {"partition-id": i, "state-dir": str(tmp_path / f"node{i}")} for i in (0, 1)
    ]
    apps = dict(
        build_strategy=build_text_server,
        parse=TextRunSettings.from_run_config,
        alignment=TEXT_ALIGNMENT,
    )
    _, partial = run_server(
        LocalGrid(client_app, nodes, cfg), cfg, stop_after=2, **apps
    )
    assert partial.rounds == 2 and not (tmp_path / "resumed" / "results.json").exists()
    resumed = {**cfg, "resume": True}  # a new Flower run: fresh node contexts
    run_server(LocalGrid(client_app, nodes, resumed), resumed, **apps)
    a, b = _results(tmp_path / "whole"), _results(tmp_path / "resumed")
    assert a["rounds"] == b["rounds"] == 3
    assert a["weighted"] == b["weighted"] and a["history"] == b["history"]
    assert a["clients"] == b["clients"]


def test_compact_messages_give_the_same_text_run_in_three_objects_a_message(
    toy, tmp_path
):
    # `compact-messages` in the FedMKGC apps: the results and the ledger of the
    # default layout; every message 3 Flower objects, or 6 where the tensors
    # exceed one Flower array chunk.
    data, model = toy
    cfg = {"data": str(data), "algorithm": "fedmkgc", "encoder": str(model), **FAST}
    runs, grids = [], []
    for compact in (False, True):
        out = tmp_path / f"out-{compact}"
        grids.append(
            run_local(
                server_app,
                client_app,
                {**cfg, "out": str(out), "compact-messages": compact},
                2,
            )
        )
        clear_caches()
        runs.append(_results(out))
    plain, packed = runs
    for key in ("weighted", "clients", "history", "comm"):
        assert packed[key] == plain[key], key
    for way in ("down", "up"):
        assert grids[1].wire_objects[way] % 3 == 0
        assert grids[0].wire_objects[way] > 1.5 * grids[1].wire_objects[way]
