import pytest
import torch
from partition_kgs import random_kg

from fedgraph.partition import RandomRelationPartitioner, resolve_partitioner


def test_relations_dealt_evenly_and_disjoint():
    kg = random_kg(num_relations=10, num_triples=800)
    fed = RandomRelationPartitioner(3, seed=1)(kg)
    rel_sets = [set(s.relation_ids.tolist()) for s in fed]
    assert sorted(len(r) for r in rel_sets) == [3, 3, 4]
    assert set().union(*rel_sets) == set(range(10))
    assert sum(len(r) for r in rel_sets) == 10
    owner = fed.meta["relation_clients"]
    for c, rs in enumerate(rel_sets):
        assert all(owner[r] == c for r in rs)


def test_every_triple_in_exactly_one_client_and_follows_its_relation():
    kg = random_kg(num_relations=6, num_triples=500)
    fed = RandomRelationPartitioner(4, seed=2)(kg)
    owner = torch.tensor(fed.meta["relation_clients"])
    got = []
    for s in fed:
        for split in ("train", "valid", "test"):
            g = s.global_triples(split)
            assert (owner[g[:, 1]] == s.client_id).all()
            got.append(g)
    got = torch.cat(got)
    assert got.size(0) == kg.num_triples()
    key = lambda t: torch.sort(t[:, 0] * 10**6 + t[:, 1] * 10**3 + t[:, 2]).values  # noqa: E731
    assert torch.equal(key(got), key(kg.all_triples()))


def test_same_seed_same_partition_other_seed_differs():
    kg = random_kg(num_relations=12)
    a = RandomRelationPartitioner(3, seed=5)(kg)
    b = RandomRelationPartitioner(3, seed=5)(kg)
    c = RandomRelationPartitioner(3, seed=6)(kg)
    for x, y in zip(a, b, strict=True):
        assert torch.equal(x.entity_ids, y.entity_ids)
        for s in ("train", "valid", "test"):
            assert torch.equal(x.graph.triples(s), y.graph.triples(s))
    assert a.meta["relation_clients"] != c.meta["relation_clients"]


def test_meta_and_repr():
    p = resolve_partitioner("relation", 3, seed=4)
    assert isinstance(p, RandomRelationPartitioner)
    assert repr(p) == (
        "RandomRelationPartitioner(num_clients=3, seed=4, ratios=[0.8, 0.1, 0.1], splits=None)"
    )
    fed = p(random_kg())
    assert fed.meta["partitioner"] == "RandomRelationPartitioner"
    assert fed.meta["seed"] == 4 and fed.meta["source"] == "random"
    assert fed.meta["source_checksum"].startswith("sha256:")
    assert fed.entity_names == [f"e{i}" for i in range(40)]


def test_only_some_splits_pooled():
    kg = random_kg(num_relations=5)
    fed = RandomRelationPartitioner(2, splits=["train"])(kg)
    assert sum(s.graph.num_triples() for s in fed) == kg.num_triples("train")


def test_too_many_clients():
    with pytest.raises(ValueError, match="`num_clients`=6 exceeds"):
        RandomRelationPartitioner(6)(random_kg(num_relations=5))
    with pytest.raises(ValueError, match="`num_clients`"):
        RandomRelationPartitioner(0)
