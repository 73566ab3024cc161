r"""Fed-RGCN on the Flower apps against the in-process simulation
(:func:`~fedgraph.runtime.rgcn_runner.run_fed_rgcn`) on a toy RDF graph:
the same per-round test accuracies, training losses, final bases and
communication totals, for SP, FedAvg, FedProx, FedAlign and a -L variant."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("flwr")

from fedgraph.federated.algorithms import get  # noqa: E402
from fedgraph.federated.rgcn.setup import RGCNSettings  # noqa: E402
from fedgraph.partition.rdf_type import RDFTypePartitioner  # noqa: E402
from fedgraph.runtime import run_simulation  # noqa: E402
from fedgraph.runtime.flower import run_local  # noqa: E402
from fedgraph.runtime.flower.rgcn import (  # noqa: E402
    RGCNRunSettings,
    build_rgcn_strategy,
    client_app,
    load_rdf_federation,
    server_app,
)
from fedgraph.runtime.flower.state import load_state  # noqa: E402
from fedgraph.runtime.rgcn_runner import (  # noqa: E402
    build_clients,
    loop_kwargs,
    run_fed_rgcn,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "federated"))
from test_fedalign import toy_graph  # noqa: E402

ROUNDS, EPOCHS, BASES, HIDDEN = 4, 2, 4, 4


@pytest.fixture(autouse=True)
def _fresh_cache(one_thread):
    yield
    load_rdf_federation.cache_clear()


@pytest.fixture
def partition(tmp_path):
    path = tmp_path / "toy-rdf-3"
    RDFTypePartitioner(3, num_types=2, seed=0)(toy_graph()).save(path)
    return path


def run_config(data: Path, algorithm: str, out: Path) -> dict:
    return {
        "data": str(data),
        "algorithm": algorithm,
        "num-rounds": ROUNDS,
        "local-epochs": EPOCHS,
        "num-bases": BASES,
        "hidden-channels": HIDDEN,
        "out": str(out),
    }


@pytest.mark.parametrize(
    "algorithm", ["sp", "fedavg", "fedprox", "fedalign", "fedalign-l"]
)
def test_flower_rgcn_equals_the_simulation(partition, tmp_path, algorithm):
    sim = run_fed_rgcn(
        toy_graph(),
        algorithm,
        num_clients=3,
        num_types=2,
        rounds=ROUNDS,
        local_epochs=EPOCHS,
        num_bases=BASES,
        hidden_channels=HIDDEN,
    )
    out = tmp_path / "out"
    grid = run_local(server_app, client_app, run_config(partition, algorithm, out), 3)
    res = json.loads((out / "results.json").read_text())

    assert res["rounds"] == ROUNDS and res["settings"]["runtime"] == "flower"
    flower_acc = [h["test"]["accuracy"] for h in res["history"]]
    assert flower_acc == [c["test_accuracy"] for c in sim["curve"]]
    for h, c in zip(res["history"], sim["curve"], strict=True):
        assert h["train"] == pytest.approx(c["train"], rel=0, abs=0)
        per_client = {int(k): v["accuracy"] for k, v in h["test_clients"].items()}
        assert per_client == c["clients"]
    for key in ("params_up", "params_down", "bytes_up", "bytes_down"):
        assert res["comm"][key] == sim["comm"][key], key

    # The server ends with the simulation strategy's state and each node keeps
    # (in context.state) the simulation client's model, built from the same
    # saved partition. The bases differ only where the simulation's last
    # evaluation copied the global bases into its in-memory clients (a Flower
    # node does not store what an evaluation loads).
    fed = load_rdf_federation(str(partition))
    clients = build_clients(
        fed, hidden_channels=HIDDEN, num_bases=BASES, local_epochs=EPOCHS
    )
    alg = get(algorithm, "rgcn")
    common = RGCNSettings(local_epochs=EPOCHS)
    strategy = alg.build.strategy(common, alg.parse({}), clients[0].initial_arrays())
    run_simulation(strategy, clients, **loop_kwargs(ROUNDS), progress=False)
    server = torch.load(out / "server.pt", weights_only=False)
    assert server["round"] == ROUNDS
    for key, value in strategy.state_dict().items():
        assert _equal(server["strategy"][key], value), key
    nodes = {c.node_config["partition-id"]: c for c in grid.contexts.values()}
    synced = algorithm != "sp"
    for cid, client in clients.items():
        state = load_state(nodes[cid].state, "client")
        for key, value in client.model.state_dict().items():
            if synced and key in client.model.bases():
                continue
            assert torch.equal(state["model"][key], value), (cid, key)


def _equal(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return torch.equal(a, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def test_federated_methods_send_bases_and_sp_sends_nothing(partition, tmp_path):
    out = {}
    for algorithm in ("sp", "fedavg", "fedalign"):
        run_local(
            server_app,
            client_app,
            run_config(partition, algorithm, tmp_path / algorithm),
            3,
        )
        out[algorithm] = json.loads((tmp_path / algorithm / "results.json").read_text())
    assert out["sp"]["comm"]["params_up"] == out["sp"]["comm"]["params_down"] == 0
    bases = (BASES * HIDDEN * HIDDEN) + (
        BASES * HIDDEN * 2
    )  # conv1 + conv2 (2 classes)
    # client 0 registers its initial bases (the server reads no client data),
    # then every client uploads its bases each round
    assert out["fedavg"]["comm"]["params_up"] == bases + ROUNDS * 3 * bases
    # FedAlign also sends every client its 2 peers' last bases each round; in
    # round 1 (no uploads yet) one copy of the global bases stands in.
    extra = (
        out["fedalign"]["comm"]["params_down"] - out["fedavg"]["comm"]["params_down"]
    )
    assert extra == 3 * bases + (ROUNDS - 1) * 3 * 2 * bases


@pytest.mark.parametrize(
    "config, message",
    [
        ({"algorithm": "fedavg"}, "needs `data`"),
        ({"data": "x", "algorithm": "nope"}, "`algorithm`: could not resolve 'nope'"),
        (
            {"data": "x", "algorithm": "sp", "num-rounds": 0},
            "`num-rounds` must be positive",
        ),
        ({"data": "x", "algorithm": "sp", "lr": "fast"}, "`lr` must be a number"),
        ({"data": "x", "algorithm": "sp", "dim": 8}, "Unknown run-config key `dim`"),
    ],
)
def test_run_config_errors_name_the_key(config, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("'", "'")):
        RGCNRunSettings.from_run_config(config)


def test_the_server_needs_no_data_when_the_run_config_gives_the_clients(partition):
    cfg = RGCNRunSettings.from_run_config(
        {"data": "/no/such/partition", "algorithm": "fedalign", "num-clients": 3}
    )
    strategy, num_clients = build_rgcn_strategy(cfg)
    assert num_clients == 3 and strategy.arrays == {}  # bases: at registration
    sim = build_clients(
        load_rdf_federation(str(partition)), hidden_channels=HIDDEN, num_bases=BASES,
        seed_client=0,
    )  # fmt: skip
    strategy.register({c: client.register() for c, client in sim.items()})
    for key, value in sim[0].initial_arrays().items():
        assert torch.equal(strategy.arrays[key], value)
    assert all(not sim[c].register().arrays for c in (1, 2))


def test_data_must_be_a_partition_folder(tmp_path):
    with pytest.raises(ValueError, match="saved RDF partition folder"):
        load_rdf_federation(str(tmp_path / "missing"))


def test_compact_messages_give_the_same_rgcn_run_in_three_objects_a_message(
    partition, tmp_path
):
    # `compact-messages` in the Fed-RGCN apps: the run, its ledger and the
    # server's bases are those of the default layout; every message is 3
    # Flower objects (the toy's tensors fit in one chunk).
    docs, grids = [], []
    for compact in (False, True):
        out = tmp_path / f"out-{compact}"
        cfg = {**run_config(partition, "fedalign", out), "compact-messages": compact}
        grids.append(run_local(server_app, client_app, cfg, 3))
        doc = json.loads((out / "results.json").read_text())
        docs.append(
            (
                [
                    {k: v for k, v in h.items() if "seconds" not in k}
                    for h in doc["history"]
                ],
                doc["comm"],
                torch.load(out / "server.pt", weights_only=False)["strategy"],
            )
        )
    (plain_h, plain_comm, plain_state), (packed_h, packed_comm, packed_state) = docs
    assert packed_h == plain_h and packed_comm == plain_comm
    assert _equal(packed_state, plain_state)
    for way in ("down", "up"):
        assert grids[1].wire_objects[way] % 3 == 0
        assert grids[0].wire_objects[way] > 1.5 * grids[1].wire_objects[way]
