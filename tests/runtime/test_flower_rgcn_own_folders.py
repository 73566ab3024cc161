r"""Fed-RGCN nodes that each hold only their own organisation's RDF client
folder: the folder validates alone and holds no global id and no global
predicate list, each node's R-GCN spans its own predicates, and the run
equals the simulation of the same own-predicate clients (the real
``ServerApp``/``ClientApp`` of :mod:`fedgraph.runtime.flower.rgcn` over
:class:`~fedgraph.runtime.flower.LocalGrid`)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("flwr")

from fedgraph.federated.algorithms import get  # noqa: E402
from fedgraph.federated.rgcn.setup import RGCNSettings, build_clients  # noqa: E402
from fedgraph.partition import load_partition, save_partition  # noqa: E402
from fedgraph.partition.io import PartitionFormatError  # noqa: E402
from fedgraph.partition.rdf_shard import (  # noqa: E402
    FederatedRDF,
    load_rdf_client_folder,
)
from fedgraph.partition.rdf_type import RDFTypePartitioner  # noqa: E402
from fedgraph.runtime import run_simulation  # noqa: E402
from fedgraph.runtime.flower import LocalGrid  # noqa: E402
from fedgraph.runtime.flower.rgcn import (  # noqa: E402
    client_app,
    load_rdf_client,
    load_rdf_federation,
    rdf_node,
    server_app,
)
from fedgraph.runtime.rgcn_runner import loop_kwargs  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "federated"))
from test_fedalign import toy_graph  # noqa: E402

ROUNDS, EPOCHS, BASES, HIDDEN = 3, 2, 4, 4
#: the predicates (global ids) of each toy client: none holds all three
OWN = {0: [0, 2], 1: [0], 2: [0, 1]}


@pytest.fixture(autouse=True)
def _fresh_caches(one_thread):
    yield
    load_rdf_federation.cache_clear()
    load_rdf_client.cache_clear()


def toy_federation() -> FederatedRDF:
    return RDFTypePartitioner(3, num_types=2, seed=0)(toy_graph())


@pytest.fixture
def partition(tmp_path):
    return save_partition(toy_federation(), tmp_path / "part")


@pytest.fixture
def own(partition, tmp_path):
    r"""Each client folder copied alone into its organisation's folder."""
    out = []
    for k in range(3):
        org = tmp_path / f"org{k}"
        org.mkdir()
        out.append(Path(shutil.copytree(partition / f"client{k}", org / "rdf")))
    return out


def test_a_lone_rdf_client_folder_holds_only_its_own_names(partition, own):
    fed = toy_federation()
    back = load_partition(partition)  # the simulation's view: global ids again
    for k, folder in enumerate(own):
        assert {p.name for p in folder.iterdir()} == {"META.json", "graph.pt"}
        shard, glob = load_rdf_client_folder(folder), fed.shards[k]
        assert shard.client_id == k
        assert shard.node_ids.tolist() == list(range(glob.num_nodes))
        g = shard.graph
        assert g.relation_names == [f"r{r}" for r in OWN[k]]
        assert g.node_names == glob.graph.node_names
        assert torch.equal(g.edge_index, glob.graph.edge_index)
        local = {r: i for i, r in enumerate(OWN[k])}
        assert g.edge_type.tolist() == [local[r] for r in glob.graph.edge_type.tolist()]
        assert torch.equal(back.shards[k].node_ids, glob.node_ids)
        assert back.shards[k].graph.checksum() == glob.graph.checksum()
        meta = json.loads((folder / "META.json").read_text())
        assert (meta["client"], meta["num_clients"], meta["kind"]) == (k, 3, "rdf")
        assert meta["num_relations"] == len(OWN[k])


def test_federated_rdf_save_writes_the_same_client_folders(partition, tmp_path):
    toy_federation().save(tmp_path / "saved")
    for k in range(3):
        folder = tmp_path / "saved" / f"client{k}"
        assert {p.name for p in folder.iterdir()} == {"META.json", "graph.pt"}
        a = load_rdf_client_folder(folder).graph
        b = load_rdf_client_folder(partition / f"client{k}").graph
        assert a.checksum() == b.checksum()
    back = FederatedRDF.load(tmp_path / "saved")
    for x, y in zip(back.shards, toy_federation().shards, strict=True):
        assert x.graph.checksum() == y.graph.checksum()
    # the layout of older releases (global node ids in the client folder)
    ids = tmp_path / "saved" / "ids" / "client0" / "node_ids.pt"
    ids.rename(tmp_path / "saved" / "client0" / "node_ids.pt")
    with pytest.raises(ValueError) as exc:
        FederatedRDF.load(tmp_path / "saved")
    cdir = tmp_path / "saved" / "client0"
    assert str(exc.value) == (
        f"Client folder '{cdir}' is corrupt: `{cdir}` holds global node ids "
        "(`node_ids.pt`): an RDF partition of an older fedgraph; write it again "
        "with `fedgraph partition`"
    )


def test_a_tampered_or_foreign_client_folder_is_refused(own, tmp_path):
    graph = own[0] / "graph.pt"
    data = graph.read_bytes()
    graph.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(PartitionFormatError) as exc:
        load_rdf_client_folder(own[0])
    assert str(exc.value) == (
        f"`{graph}`: checksum mismatch (truncated or modified since it was saved)"
    )
    meta = own[1] / "META.json"
    meta.write_text(meta.read_text().replace('"kind": "rdf"', '"kind": "kg"'))
    with pytest.raises(PartitionFormatError) as exc:
        load_rdf_client_folder(own[1])
    assert str(exc.value) == (
        f"`{own[1]}` is not an RDF client folder (`kind` 'kg', expected 'rdf')"
    )


def test_a_partition_id_that_is_not_the_folders_client_is_refused(own, tmp_path):
    from fedgraph.runtime.flower.rgcn import RGCNRunSettings

    cfg = RGCNRunSettings.from_run_config(
        {"data": str(tmp_path / "absent"), "algorithm": "fedavg"}
    )
    with pytest.raises(ValueError) as exc:
        rdf_node(cfg, {"data-dir": str(own[2]), "partition-id": 1})
    assert str(exc.value) == (
        f"Node-config key `partition-id` is 1 but `data-dir` {own[2]} holds client 2"
    )


def run_config(algorithm: str, out: Path, data: Path) -> dict:
    return {
        "data": str(data),
        "algorithm": algorithm,
        "num-rounds": ROUNDS,
        "local-epochs": EPOCHS,
        "num-bases": BASES,
        "hidden-channels": HIDDEN,
        "out": str(out),
    }


def run_nodes(nodes: list[dict], cfg: dict) -> LocalGrid:
    from flwr.app import Context, RecordDict

    grid = LocalGrid(client_app, nodes, cfg)
    context = Context(
        run_id=grid.run.run_id, node_id=0, node_config={}, state=RecordDict(),
        run_config=dict(cfg),
    )  # fmt: skip
    server_app(grid, context)
    return grid


def simulate_own(partition: Path, algorithm: str):
    r"""The simulation whose clients span only their own predicates."""
    alg = get(algorithm, "rgcn")
    common = RGCNSettings(HIDDEN, BASES, local_epochs=EPOCHS)
    clients = build_clients(
        load_partition(partition), hidden_channels=HIDDEN, num_bases=BASES,
        local_epochs=EPOCHS, seed_client=0 if alg.build.shares_bases else None,
        own_relations=True,
    )  # fmt: skip
    for k, client in clients.items():  # relation coefficients: [2 R_own, B]
        assert client.model.conv1.comp.shape == (2 * len(OWN[k]), BASES)
    strategy = alg.build.strategy(common, alg.parse({}))
    return run_simulation(strategy, clients, **loop_kwargs(ROUNDS), progress=False)


@pytest.mark.parametrize("algorithm", ["fedavg", "fedalign"])
def test_nodes_with_only_their_own_folder_equal_the_own_predicate_simulation(
    partition, own, tmp_path, algorithm
):
    out = tmp_path / "out"
    # `data` names nothing: the nodes read their `data-dir` only
    cfg = run_config(algorithm, out, tmp_path / "absent")
    shutil.rmtree(partition)  # nothing of the partition is left to open
    run_nodes([{"data-dir": str(f)} for f in own], cfg)
    doc = json.loads((out / "results.json").read_text())
    save_partition(toy_federation(), partition)
    res = simulate_own(partition, algorithm)
    assert len(doc["history"]) == len(res.history) == ROUNDS
    for h, s in zip(doc["history"], res.history, strict=True):
        assert h["test"]["accuracy"] == pytest.approx(s["test"]["accuracy"], abs=1e-6)
        assert h["train"] == pytest.approx(s["train"], abs=1e-6)
    plain_out = tmp_path / "plain"
    run_nodes(
        [{"partition-id": k} for k in range(3)],
        run_config(algorithm, plain_out, partition),
    )
    plain = json.loads((plain_out / "results.json").read_text())
    # the global predicate count changes the models' seeded start
    assert [h["train"] for h in plain["history"]] != [
        h["train"] for h in doc["history"]
    ]


def test_nodes_with_and_without_their_own_folder_are_refused(partition, own, tmp_path):
    from fedgraph.runtime.flower.protocol import ClientReplyError

    nodes = [{"data-dir": str(own[0])}, {"partition-id": 1}, {"partition-id": 2}]
    with pytest.raises(ClientReplyError) as exc:
        run_nodes(nodes, run_config("fedavg", tmp_path / "out", partition))
    assert str(exc.value) == (
        "Node 1000 (partition-id 0) reports own-folder = 1, node 998 "
        "(partition-id 2) 0: the nodes hold different partitions; the run stops."
    )


@pytest.mark.slow
def test_nodes_with_only_their_own_folder_over_tls_equal_the_simulation(tmp_path):
    # Real processes: a SuperLink and three SuperNodes over TLS, each node in
    # its own folder holding a copy of its client folder only; every process
    # lists the files it opens.
    import subprocess

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_flower_deploy import ROOT, free_ports

    data = save_partition(toy_federation(), tmp_path / "rdf3")
    out, work = tmp_path / "deploy.json", tmp_path / "work"
    settings = [f"num-bases={BASES}", f"hidden-channels={HIDDEN}", "local-epochs=2"]
    cmd = [
        sys.executable, str(ROOT / "benchmarks" / "flower_deploy.py"),
        "--data", str(data), "--algorithm", "fedavg", "--rounds", "2",
        "--json", str(out), "--port", str(free_ports(9540)), "--timeout", "1500",
        "--work", str(work), "--own-folders", "--audit-opens", "--tls",
        "--node-poll", "0.2", *(a for item in settings for a in ("--set", item)),
    ]  # fmt: skip
    subprocess.run(cmd, timeout=1600, check=False, capture_output=True)
    doc = json.loads(out.read_text())
    assert doc["exit_code"] == 0 and doc["status"]["status"] == "completed"
    assert doc["tls"] and doc["own_folders"]
    dep, sim = doc["deployment"], doc["simulation"]
    assert len(dep["history"]) == len(sim["history"]) == 2
    for h, s in zip(dep["history"], sim["history"], strict=True):
        assert h["test"]["accuracy"] == pytest.approx(s["test"]["accuracy"], abs=1e-6)
        assert h["train"] == pytest.approx(s["train"], abs=1e-6)
    opened = doc["opened"]
    assert {"server", "node0", "node1", "node2"} <= set(opened)
    orgs = [str(work / "orgs" / f"org{k}") + "/" for k in range(3)]
    for role, paths in opened.items():
        others = [str(data) + "/"] + [
            o for k, o in enumerate(orgs) if role != f"node{k}"
        ]
        assert not [p for p in paths if p.startswith(tuple(others))], role
    for k in range(3):  # the hook saw each node read its own folder
        assert f"{orgs[k]}kg/graph.pt" in opened[f"node{k}"]
