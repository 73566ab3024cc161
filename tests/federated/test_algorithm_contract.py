r"""The contract every registered federated algorithm keeps, parametrised
over the registry: two rounds on a toy federation through ``fedgraph
train``, the ``results.json`` schema, stop-and-resume equality, the Flower
apps on a local grid giving the simulation's results, and a state
round-trip of the strategy and clients.

A family whose algorithms have no harness here fails
:func:`test_every_registered_family_has_a_harness`, so a new family cannot
join the registry untested.
"""

from __future__ import annotations

import json

import pytest
import torch

from fedgraph.cli.main import main
from fedgraph.data import load_dataset
from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.data.shard import FederatedKG, KGShard
from fedgraph.federated import algorithms as registry
from fedgraph.federated.kge.setup import KGESettings, build_kge_federation
from fedgraph.partition import save_partition

pytestmark = pytest.mark.usefixtures("one_thread")

ARGS = dict(dim=8, gamma=4.0, lr=0.01, batch_size=16, num_negatives=4, local_epochs=1)
RESULT_KEYS = {
    "weighted", "clients", "rounds", "seconds_per_round", "comm", "settings",
    "history", "best_round", "best_valid", "stopped_early", "comm_per_round",
}  # fmt: skip
HARNESSES = {"kge", "rgcn", "text"}


def _toy() -> FederatedKG:
    # 3 clients over 15 entities, neighbours sharing 3, two relations each
    gen = torch.Generator().manual_seed(0)
    shards = []
    for c in range(3):
        ids = torch.arange(4 * c, 4 * c + 7)
        trip = torch.stack(
            [torch.randint(7, (60,), generator=gen),
             torch.randint(2, (60,), generator=gen),
             torch.randint(7, (60,), generator=gen)], 1,
        )  # fmt: skip
        trip = torch.unique(trip, dim=0)
        k = trip.size(0)
        splits = {"train": trip[: k - 12], "valid": trip[k - 12 : k - 6]}
        splits["test"] = trip[k - 6 :]
        shards.append(
            KGShard(
                c, KnowledgeGraph(splits, 7, 2), ids, torch.tensor([2 * c, 2 * c + 1])
            )
        )
    return FederatedKG(shards, 15, 6)


@pytest.fixture(scope="module")
def partition(tmp_path_factory):
    return save_partition(_toy(), tmp_path_factory.mktemp("contract") / "toy3")


def _train(partition, algorithm, out, *extra):
    argv = ["train", str(partition), "--algorithm", algorithm,
            "--out", str(out), "--rounds", "2", "--eval-every", "1", "--quiet"]  # fmt: skip
    for k, v in ARGS.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    assert main(argv + list(extra)) == 0
    return json.loads((out / "results.json").read_text())


def _timeless(doc):
    drop = ("train_seconds", "eval_seconds")
    return [{k: v for k, v in h.items() if k not in drop} for h in doc["history"]]


def test_every_registered_family_has_a_harness():
    families = {a.family for a in registry.algorithms().values()}
    assert families <= HARNESSES, families - HARNESSES


@pytest.mark.parametrize("algorithm", list(registry.algorithms("kge")))
def test_kge_algorithm_contract(partition, tmp_path, algorithm, capsys):
    doc = _train(partition, algorithm, tmp_path / "full")
    assert RESULT_KEYS <= set(doc) and doc["rounds"] == 2
    assert doc["settings"]["algorithm"] == algorithm
    assert {"mrr", "hits@1", "hits@10"} <= set(doc["weighted"])
    assert [h["round"] for h in doc["history"]] == [1, 2]
    assert all("valid" in h for h in doc["history"])
    assert len(doc["clients"]) == 3 and doc["comm"]["params_up"] > 0

    # stopped after round 1 and resumed: the uninterrupted run's numbers
    part = tmp_path / "part"
    with pytest.raises(FileNotFoundError):
        _train(partition, algorithm, part, "--stop-after", "1")
    assert (part / "checkpoints" / "last.pt").exists()
    resumed = _train(partition, algorithm, part, "--resume")
    assert resumed["weighted"] == doc["weighted"]
    assert _timeless(resumed) == _timeless(doc)

    # state round-trip: the last checkpoint loads into a fresh federation
    # and gives the same state back
    state = torch.load(
        tmp_path / "full" / "checkpoints" / "last.pt", weights_only=False
    )
    fed = load_dataset(partition)
    strategy, clients = build_kge_federation(algorithm, fed, KGESettings(**ARGS))
    strategy.load_state_dict(state["models"]["strategy"])
    _same(strategy.state_dict(), state["models"]["strategy"])
    for c, cl in clients.items():
        cl.load_state_dict(state["models"]["clients"][c])
        _same(cl.state_dict(), state["models"]["clients"][c])

    # the Flower apps on a local grid: the simulation's results
    pytest.importorskip("flwr")
    from fedgraph.runtime.flower import run_local
    from fedgraph.runtime.flower.client_app import app as client_app
    from fedgraph.runtime.flower.federation import load_federation
    from fedgraph.runtime.flower.server_app import app as server_app

    out = tmp_path / "flower"
    cfg = {"data": str(partition), "algorithm": algorithm, "num-rounds": 2,
           "eval-every": 1, "out": str(out), "seed": 0,
           **{k.replace("_", "-"): v for k, v in ARGS.items()}}  # fmt: skip
    try:
        run_local(server_app, client_app, cfg, num_nodes=3)
    finally:
        load_federation.cache_clear()
    flower = json.loads((out / "results.json").read_text())
    assert flower["weighted"] == doc["weighted"]
    assert _timeless(flower) == _timeless(doc)
    assert flower["comm"] == doc["comm"]


def _same(a, b):
    if isinstance(a, torch.Tensor):
        assert torch.equal(a, b)
    elif isinstance(a, dict):
        assert set(a) == set(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, list | tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    else:
        assert a == b


RGCN_ARGS = ["--rounds", "2", "--local-epochs", "2", "--num-bases", "4", "--dim", "4"]


@pytest.fixture(scope="module")
def rdf_partition(tmp_path_factory):
    import sys
    from pathlib import Path

    from fedgraph.partition.rdf_type import RDFTypePartitioner

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_fedalign import toy_graph

    path = tmp_path_factory.mktemp("contract") / "toy-rdf-3"
    RDFTypePartitioner(3, num_types=2, seed=0)(toy_graph()).save(path)
    return path


def _train_rgcn(partition, algorithm, out, *extra):
    argv = ["train", "--model", "rgcn", str(partition), "--algorithm",
            algorithm, "--out", str(out), "--quiet", *RGCN_ARGS]  # fmt: skip
    assert main(argv + list(extra)) == 0
    return json.loads((out / "results.json").read_text())


@pytest.mark.parametrize("algorithm", list(registry.algorithms("rgcn")))
def test_rgcn_algorithm_contract(rdf_partition, tmp_path, algorithm):
    doc = _train_rgcn(rdf_partition, algorithm, tmp_path / "full")
    assert RESULT_KEYS <= set(doc) and doc["rounds"] == 2
    assert doc["settings"]["algorithm"] == algorithm
    assert doc["weighted"]["accuracy"] == doc["history"][-1]["test"]["accuracy"]
    assert [h["round"] for h in doc["history"]] == [1, 2]
    assert len(doc["clients"]) == 3
    assert (doc["comm"]["params_up"] > 0) == (algorithm != "sp")

    # stopped after round 1 and resumed: the uninterrupted run's numbers
    part = tmp_path / "part"
    with pytest.raises(FileNotFoundError):
        _train_rgcn(rdf_partition, algorithm, part, "--stop-after", "1")
    resumed = _train_rgcn(rdf_partition, algorithm, part, "--resume")
    assert resumed["weighted"] == doc["weighted"]
    assert _timeless(resumed) == _timeless(doc)

    # state round-trip through the last checkpoint
    from fedgraph.federated.rgcn.setup import RGCNSettings
    from fedgraph.partition.rdf_shard import FederatedRDF

    state = torch.load(
        tmp_path / "full" / "checkpoints" / "last.pt", weights_only=False
    )
    alg = registry.get(algorithm, "rgcn")
    common = RGCNSettings(hidden_channels=4, num_bases=4, local_epochs=2)
    strategy, clients = alg.build(
        FederatedRDF.load(rdf_partition), common, alg.parse({})
    )
    strategy.load_state_dict(state["models"]["strategy"])
    _same(strategy.state_dict(), state["models"]["strategy"])
    for c, cl in clients.items():
        cl.load_state_dict(state["models"]["clients"][c])
        _same(cl.state_dict(), state["models"]["clients"][c])

    # the Flower R-GCN apps on a local grid: the same accuracies and traffic
    pytest.importorskip("flwr")
    from fedgraph.runtime.flower import run_local
    from fedgraph.runtime.flower.rgcn import client_app, load_rdf_federation, server_app

    out = tmp_path / "flower"
    cfg = {"data": str(rdf_partition), "algorithm": algorithm, "num-rounds": 2,
           "local-epochs": 2, "num-bases": 4, "hidden-channels": 4, "out": str(out)}  # fmt: skip
    try:
        run_local(server_app, client_app, cfg, 3)
    finally:
        load_rdf_federation.cache_clear()
    flower = json.loads((out / "results.json").read_text())
    assert [h["test"] for h in flower["history"]] == [h["test"] for h in doc["history"]]
    for key in ("params_up", "params_down", "bytes_up", "bytes_down"):
        assert flower["comm"][key] == doc["comm"][key], key


TEXT_ARGS = ["--rounds", "2", "--eval-every", "1", "--lr", "1e-3", "--batch-size",
             "6", "--max-length", "6", "--prefix-tokens", "2"]  # fmt: skip


@pytest.fixture(scope="module")
def text_federation(tmp_path_factory):
    # two toy language KGs in the DBP-5L layout and a tiny BERT (dropout on)
    # saved as a Hugging Face model folder: nothing is downloaded
    pytest.importorskip("transformers")
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
    from text_toy import save_tiny_model, write_toy_dbp5l

    root = tmp_path_factory.mktemp("contract")
    return write_toy_dbp5l(root / "toy-dbp"), save_tiny_model(root / "tiny-bert")


def _train_text(federation, algorithm, out, *extra):
    data, model = federation
    argv = ["train", str(data), "--model", "text", "--encoder", str(model),
            "--algorithm", algorithm, "--out", str(out), "--quiet", *TEXT_ARGS]  # fmt: skip
    assert main(argv + list(extra)) == 0
    return json.loads((out / "results.json").read_text())


@pytest.mark.parametrize("algorithm", list(registry.algorithms("text")))
def test_text_algorithm_contract(text_federation, tmp_path, algorithm):
    doc = _train_text(text_federation, algorithm, tmp_path / "full")
    assert RESULT_KEYS <= set(doc) and doc["rounds"] == 2
    assert doc["settings"]["algorithm"] == algorithm
    assert doc["settings"]["client_languages"] == ["en", "it"]
    assert 0 < doc["weighted"]["mrr"] <= 1 and len(doc["clients"]) == 2
    assert [h["round"] for h in doc["history"]] == [1, 2]
    assert all("valid" in h for h in doc["history"])
    assert (doc["comm"]["params_up"] > 0) == (algorithm != "independent")

    # stopped after round 1 and resumed: the uninterrupted run's numbers
    part = tmp_path / "part"
    with pytest.raises(FileNotFoundError):
        _train_text(text_federation, algorithm, part, "--stop-after", "1")
    resumed = _train_text(text_federation, algorithm, part, "--resume")
    assert resumed["weighted"] == doc["weighted"]
    assert _timeless(resumed) == _timeless(doc)

    # state round-trip: the last checkpoint loads into a fresh federation
    from fedgraph.federated.text.setup import MKGCSettings, load_text_model
    from fedgraph.runtime.fedmkgc_runner import load_language_graphs

    data, model = text_federation
    state = torch.load(
        tmp_path / "full" / "checkpoints" / "last.pt", weights_only=False
    )["models"]
    alg = registry.get(algorithm, "text")
    fast = MKGCSettings(lr=1e-3, batch_size=6, max_length=6, num_prefix_tokens=2)
    graphs = list(load_language_graphs(data).values())
    strategy, clients = alg.build(graphs, *load_text_model(model), fast, alg.parse({}))
    strategy.load_state_dict(state["strategy"])
    _same(strategy.state_dict(), state["strategy"])
    for c, cl in clients.items():
        cl.load_state_dict(state["clients"][c])
        _same(cl.state_dict(), state["clients"][c])

    # the Flower text apps on a local grid: the command's results, bit for bit
    pytest.importorskip("flwr")
    from fedgraph.runtime.flower import run_local
    from fedgraph.runtime.flower.text import clear_caches, client_app, server_app

    out = tmp_path / "flower"
    cfg = {"data": str(data), "encoder": str(model), "algorithm": algorithm,
           "num-rounds": 2, "eval-every": 1, "lr": 1e-3, "batch-size": 6,
           "max-length": 6, "prefix-tokens": 2, "out": str(out)}  # fmt: skip
    try:
        run_local(server_app, client_app, cfg, 2)
    finally:
        clear_caches()
    flower = json.loads((out / "results.json").read_text())
    assert flower["weighted"] == doc["weighted"]
    assert flower["clients"] == doc["clients"]
    assert _timeless(flower) == _timeless(doc)
    assert flower["comm"] == doc["comm"]
