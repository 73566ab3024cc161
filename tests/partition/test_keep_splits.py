r"""``fedgraph partition --keep-splits`` and the baselines on one KG with its
own splits (Nations, 14 entities, 55 relations, 1,592 / 199 / 201 triples)."""

import json

import pytest
import torch

from fedgraph.cli.main import main
from fedgraph.data import load_dataset
from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.data.shard import FederatedKG
from fedgraph.partition import partitioners
from fedgraph.partition.io import load_partition
from fedgraph.partition.split import keep_source_splits, to_local


def _rows(t):
    return sorted(map(tuple, t.tolist()))


@pytest.mark.dataset
@pytest.mark.parametrize("strategy", ["random", "dirichlet"])
def test_every_source_triple_stays_in_its_split(strategy):
    graph = load_dataset("nations")
    fed = partitioners.resolve(strategy, 3, seed=0)(graph)
    kept = keep_source_splits(fed, graph)
    assert kept.meta["keep_splits"] is True
    for split, n in (("train", 1592), ("valid", 199), ("test", 201)):
        held = torch.cat([s.global_triples(split) for s in kept])
        assert held.size(0) == n  # counted: no triple lost, none duplicated
        assert _rows(held) == _rows(graph.triples(split))
    # each triple goes to the client the partitioner gave it to
    for before, after in zip(fed, kept, strict=True):
        pooled = {
            s: set(map(tuple, before.global_triples(s).tolist()))
            for s in before.graph.split_names
        }
        mine = set().union(*pooled.values())
        for split in ("train", "valid", "test"):
            assert set(map(tuple, after.global_triples(split).tolist())) <= mine


@pytest.mark.dataset
def test_the_re_split_moves_triples_between_splits():
    # without --keep-splits about 1 in 5 training triples leaves training
    graph = load_dataset("nations")
    fed = partitioners.resolve("random", 3, seed=0)(graph)
    source = set(map(tuple, graph.triples("train").tolist()))
    stayed = sum(
        len(source & set(map(tuple, s.global_triples("train").tolist()))) for s in fed
    )
    assert stayed < 1592


@pytest.mark.dataset
def test_partition_cli_keeps_splits(tmp_path, capsys):
    out = tmp_path / "part"
    code = main([
        "partition", "nations", "--strategy", "random", "--clients", "2",
        "--keep-splits", "--out", str(out), "--quiet",
    ])  # fmt: skip
    assert code == 0
    fed = load_partition(out)
    counts = {
        split: sum(s.graph.num_triples(split) for s in fed)
        for split in ("train", "valid", "test")
    }
    assert counts == {"train": 1592, "valid": 199, "test": 201}


@pytest.mark.dataset
def test_centralized_trains_on_one_kg_with_its_own_splits(tmp_path, capsys):
    out = tmp_path / "run"
    code = main([
        "train", "nations", "--algorithm", "centralized", "--model", "distmult",
        "--dim", "8", "--rounds", "2", "--eval-every", "1", "--patience", "0",
        "--num-negatives", "4", "--out", str(out), "--quiet",
    ])  # fmt: skip
    assert code == 0
    res = json.loads((out / "results.json").read_text())
    assert res["rounds"] == 2
    assert res["clients"][0]["n_test"] == 201


def test_a_triple_two_clients_hold_goes_to_both_and_a_lost_one_is_named():
    t = torch.tensor
    graph = KnowledgeGraph(
        {
            "train": t([[0, 0, 1], [1, 1, 2], [2, 0, 3]]),
            "valid": t([[0, 1, 2]]),
            "test": t([[3, 1, 0]]),
        },
        4,
        2,
    )
    # client 0 holds relation 0, client 1 relation 1, and both (0, 1, 2)
    fed = FederatedKG(
        [
            to_local(0, {"train": t([[0, 0, 1], [2, 0, 3], [0, 1, 2]])}, 4),
            to_local(1, {"train": t([[1, 1, 2], [0, 1, 2], [3, 1, 0]])}, 4),
        ],
        4,
        2,
    )
    kept = keep_source_splits(fed, graph)
    assert _rows(kept[0].global_triples("train")) == [(0, 0, 1), (2, 0, 3)]
    assert _rows(kept[0].global_triples("valid")) == [(0, 1, 2)]
    assert _rows(kept[1].global_triples("train")) == [(1, 1, 2)]
    assert _rows(kept[1].global_triples("valid")) == [(0, 1, 2)]
    assert _rows(kept[1].global_triples("test")) == [(3, 1, 0)]
    assert kept[0].graph.num_triples("test") == 0
    fed.shards[1] = to_local(1, {"train": t([[1, 1, 2]])}, 4)
    with pytest.raises(
        ValueError, match=r"`fed` holds no client with the test triple \[3, 1, 0\]"
    ):
        keep_source_splits(fed, graph)
