r"""Each node holds only its own organisation's client folder: the folder
validates alone, holds no global id and no global vocabulary, and the nodes
align by keyed hashes of their names to the simulation's keyed numbers
(the real ``ServerApp``/``ClientApp`` of :mod:`fedgraph.privacy.flower` over
:class:`~fedgraph.runtime.flower.LocalGrid`; the real processes are the
``slow`` test of ``test_flower_deploy.py``)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("flwr")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_flower import (  # noqa: E402
    EVAL_EVERY,
    ROUNDS,
    SETTINGS,
    run_config,
    toy_federation,  # noqa: E402
)

from fedgraph.data.shard import FederatedKG  # noqa: E402
from fedgraph.federated.kge.setup import KGESettings, build_kge_federation  # noqa: E402
from fedgraph.partition import load_partition, save_partition  # noqa: E402
from fedgraph.partition.io import (  # noqa: E402
    PartitionFormatError,
    load_client_folder,
)
from fedgraph.privacy.alignment import KeyedHashClient, KeyedHashStrategy  # noqa: E402
from fedgraph.privacy.setup import SECRET_FILE, PrivacySettings, apply_privacy  # noqa: E402
from fedgraph.runtime import run_simulation  # noqa: E402
from fedgraph.runtime.flower import LocalGrid  # noqa: E402
from fedgraph.runtime.flower.federation import (  # noqa: E402
    load_federation,
    load_own_folder,
)

SECRET = "0f1e2d3c4b5a69788796a5b4c3d2e1f0" * 2
CLIENT_FILES = {
    "META.json", "entities.txt", "relations.txt", "train.txt", "valid.txt", "test.txt",
}  # fmt: skip


@pytest.fixture(autouse=True)
def _fresh_caches(one_thread):
    yield
    load_federation.cache_clear()
    load_own_folder.cache_clear()


def named_toy() -> FederatedKG:
    fed = toy_federation()
    ents = [f"http://org.example/e/{i:02d}" for i in range(fed.num_entities)]
    rels = [f"http://org.example/r/{i}" for i in range(fed.num_relations)]
    return FederatedKG(fed.shards, fed.num_entities, fed.num_relations, ents, rels)


@pytest.fixture
def partition(tmp_path):
    return save_partition(named_toy(), tmp_path / "part")


@pytest.fixture
def own(partition, tmp_path):
    r"""Each client folder copied alone into its organisation's folder."""
    out = []
    for k in range(3):
        org = tmp_path / f"org{k}"
        org.mkdir()
        out.append(Path(shutil.copytree(partition / f"client{k}", org / "kg")))
    return out


def test_a_lone_client_folder_is_the_clients_kg(partition, own):
    fed = load_partition(partition)
    for k, folder in enumerate(own):
        shard = load_client_folder(folder)
        glob = fed.shards[k]
        assert shard.client_id == k
        assert shard.entity_ids.tolist() == list(range(glob.num_entities))
        assert shard.relation_ids.tolist() == list(range(glob.num_relations))
        assert shard.graph.entity_names == [
            fed.entity_names[i] for i in glob.entity_ids.tolist()
        ]
        assert shard.graph.relation_names == [
            fed.relation_names[i] for i in glob.relation_ids.tolist()
        ]
        for split in ("train", "valid", "test"):
            assert torch.equal(shard.graph.triples(split), glob.graph.triples(split))


def test_a_client_folder_holds_no_global_id_and_no_global_vocabulary(partition):
    fed = named_toy()
    folder = partition / "client1"
    assert {p.name for p in folder.iterdir()} == CLIENT_FILES
    own = fed.shards[1]
    names = [fed.entity_names[i] for i in own.entity_ids.tolist()]
    assert (folder / "entities.txt").read_text().splitlines() == names
    rels = [fed.relation_names[i] for i in own.relation_ids.tolist()]
    assert (folder / "relations.txt").read_text().splitlines() == rels
    text = "".join((folder / f).read_text() for f in sorted(CLIENT_FILES))
    others = set(fed.entity_names) - set(names)
    assert others and not any(n in text for n in others)
    meta = json.loads((folder / "META.json").read_text())
    assert set(meta) == {
        "client", "files", "format", "format_version", "num_clients",
        "num_entities", "num_relations", "source", "splits",
    }  # fmt: skip
    assert (meta["client"], meta["num_clients"], meta["num_entities"]) == (1, 3, 7)
    for split in ("train", "valid", "test"):  # local ids only: 0 … 6, 0 … 1
        rows = [list(map(int, line.split("\t"))) for line in
                (folder / f"{split}.txt").read_text().splitlines()]  # fmt: skip
        assert rows == own.graph.triples(split).tolist()


def test_a_tampered_client_folder_names_the_file(own):
    train = own[0] / "train.txt"
    train.write_text(train.read_text().replace("\t1\t", "\t0\t", 1))
    with pytest.raises(PartitionFormatError) as exc:
        load_client_folder(own[0])
    assert str(exc.value) == (
        f"`{train}`: checksum mismatch (truncated or modified since it was saved)"
    )
    (own[1] / "entities.txt").unlink()
    with pytest.raises(PartitionFormatError) as exc:
        load_client_folder(own[1])
    assert str(exc.value) == f"`{own[1]}`: file `entities.txt` is missing"
    (own[2] / "META.json").unlink()
    with pytest.raises(PartitionFormatError) as exc:
        load_client_folder(own[2])
    assert str(exc.value) == (
        f"`{own[2]}` is not a fedgraph client folder: META.json is missing"
    )


def test_an_older_partition_names_the_command_that_rewrites_it(partition):
    meta_path = partition / "META.json"
    meta = json.loads(meta_path.read_text())
    meta.update(format_version=1, partitioner="RandomRelationPartitioner", seed=3)
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(PartitionFormatError) as exc:
        load_partition(partition)
    assert str(exc.value) == (
        f"{meta_path}: unsupported `format_version` (got 1, this fedgraph reads 2); "
        "write it again with `fedgraph partition DATASET --strategy "
        f"RandomRelationPartitioner --clients 3 --seed 3 --out {partition} "
        "--overwrite`"
    )


@pytest.mark.parametrize("algorithm", ["fede", "fedr"])
def test_keyed_names_of_lone_folders_give_the_simulations_rows(
    partition, own, algorithm
):
    secret = bytes.fromhex(SECRET)
    settings = KGESettings(**SETTINGS)
    fed = load_partition(partition)
    sim_strategy, sim_clients = build_kge_federation(algorithm, fed, settings)
    lone = FederatedKG([load_client_folder(f) for f in own], 15, 6)  # the unions
    node_strategy, node_clients = build_kge_federation(algorithm, lone, settings)
    key = "relation" if algorithm == "fedr" else "entity"
    sims = {c: KeyedHashClient(cl, secret, fed.entity_names) for c, cl in sim_clients.items()}  # fmt: skip
    nodes = {c: KeyedHashClient(cl, secret) for c, cl in node_clients.items()}
    for c in range(3):
        a, b = sims[c].register(), nodes[c].register()
        assert a.row_ids[key].tolist() == b.row_ids[key].tolist()
    sim_server, node_server = KeyedHashStrategy(sim_strategy), KeyedHashStrategy(node_strategy)  # fmt: skip
    sim_server.register({c: cl.register() for c, cl in sims.items()})
    node_server.register({c: cl.register() for c, cl in nodes.items()})
    assert sim_server.key == node_server.key == key
    assert torch.equal(sim_server.tokens, node_server.tokens)
    union = 15 if key == "entity" else 6
    assert sim_server.tokens.numel() == union


def _simulate_keyed(partition, algorithm, run_dir):
    fed = load_partition(partition)
    strategy, clients = build_kge_federation(algorithm, fed, KGESettings(**SETTINGS))
    run_dir.mkdir()
    (run_dir / SECRET_FILE).write_text(SECRET + "\n")
    strategy, clients = apply_privacy(
        strategy, clients, PrivacySettings(private_alignment=True),
        rounds=ROUNDS, run_dir=run_dir, entity_names=fed.entity_names,
    )  # fmt: skip
    return run_simulation(
        strategy, clients, num_rounds=ROUNDS, eval_every=EVAL_EVERY,
        seed=SETTINGS["seed"], progress=False,
    )  # fmt: skip


@pytest.mark.parametrize("algorithm", ["fede", "fedr"])
def test_nodes_with_only_their_own_folder_equal_the_keyed_simulation(
    partition, own, tmp_path, algorithm
):
    from flwr.app import Context, RecordDict

    from fedgraph.privacy.flower import client_app, server_app

    secret = tmp_path / "secret.key"
    secret.write_text(SECRET + "\n")
    out = tmp_path / "out"
    # `data` names nothing: the nodes read their `data-dir` only
    cfg = run_config(tmp_path / "absent", algorithm, out)
    nodes = [{"data-dir": str(f), "alignment-secret": str(secret)} for f in own]
    shutil.rmtree(partition)  # nothing of the partition is left to open
    grid = LocalGrid(client_app, nodes, cfg)
    context = Context(
        run_id=grid.run.run_id, node_id=0, node_config={}, state=RecordDict(),
        run_config=dict(cfg),
    )  # fmt: skip
    server_app(grid, context)
    doc = json.loads((out / "results.json").read_text())
    assert "KeyedHashStrategy" in doc["settings"]["strategy"]
    save_partition(named_toy(), partition)
    res = _simulate_keyed(partition, algorithm, tmp_path / "sim")
    dep = [h["valid"]["mrr"] for h in doc["history"] if "valid" in h]
    sim = [h["valid"]["mrr"] for h in res.history if "valid" in h]
    assert len(dep) == ROUNDS // EVAL_EVERY
    assert dep == pytest.approx(sim, abs=1e-6)
    assert doc["weighted"]["mrr"] == pytest.approx(res.test["mrr"], abs=1e-6)
    losses = [h["train"]["loss"] for h in doc["history"]]
    assert losses == pytest.approx([h["train"]["loss"] for h in res.history], abs=1e-6)


def test_the_plain_apps_refuse_a_node_with_its_own_folder(own, tmp_path):
    from fedgraph.runtime.flower.alignment import describe_kge_node
    from fedgraph.runtime.flower.config import FlowerRunSettings

    cfg = FlowerRunSettings.from_run_config(run_config(tmp_path / "absent", "fede", ""))
    with pytest.raises(ValueError) as exc:
        describe_kge_node(cfg, {"data-dir": str(own[0])})
    assert str(exc.value) == (
        "Node-config key `data-dir`: a node holding only its own client folder "
        "aligns by keyed hashes of its names, which these apps do not run; use "
        "the apps of fedgraph.privacy.flower (examples/flower_private_app) with "
        "`alignment-secret` in the node config"
    )


def test_a_partition_id_that_is_not_the_folders_client_is_refused(own, tmp_path):
    from fedgraph.runtime.flower.federation import node_data

    with pytest.raises(ValueError) as exc:
        node_data(
            str(tmp_path / "absent"), {"data-dir": str(own[2]), "partition-id": 1}
        )
    assert str(exc.value) == (
        f"Node-config key `partition-id` is 1 but `data-dir` {own[2]} holds client 2"
    )
