"""The Dirichlet label-skew relation partitioner on small hand-made KGs."""

import json
import sys
from pathlib import Path

import pytest
import torch

from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.partition import (
    DirichletRelationPartitioner,
    load_partition,
    resolve_partitioner,
    save_partition,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from partition_kgs import random_kg  # noqa: E402


def blocks_kg(num_relations=4, per_relation=50, num_entities=30):
    """``per_relation`` distinct triples for each relation (a chain over the
    entities, so every triple is unique), all in ``train``."""
    rows = []
    for r in range(num_relations):
        for i in range(per_relation):
            h = i % num_entities
            t = (i + 1 + i // num_entities) % num_entities
            rows.append((h, r, t))
    t = torch.tensor(rows, dtype=torch.long)
    return KnowledgeGraph({"train": t}, num_entities=num_entities, num_relations=4)


def _pooled(fed):
    return torch.cat(
        [s.global_triples(x) for s in fed for x in ("train", "valid", "test")]
    )


def _sorted(t):
    return sorted(map(tuple, t.tolist()))


def test_clients_are_disjoint_and_cover_the_graph():
    kg = random_kg(num_triples=400)
    fed = DirichletRelationPartitioner(5, seed=3)(kg)
    assert fed.num_clients == 5
    # every source triple in exactly one client and split (multiset equality)
    assert _sorted(_pooled(fed)) == _sorted(kg.all_triples())
    assert sum(fed.meta["client_sizes"]) == kg.all_triples().size(0)
    for s in fed:
        assert s.graph.triples("train").size(0) > 0
        train = s.graph.triples("train")
        for x in ("valid", "test"):  # evaluation ids occur in train
            t = s.graph.triples(x)
            assert set(t[:, [0, 2]].reshape(-1).tolist()) <= set(
                train[:, [0, 2]].reshape(-1).tolist()
            )
            assert set(t[:, 1].tolist()) <= set(train[:, 1].tolist())


def test_same_seed_same_shards_other_seed_other_shards():
    kg = random_kg(num_triples=400)
    a = DirichletRelationPartitioner(4, seed=1)(kg)
    b = DirichletRelationPartitioner(4, seed=1)(kg)
    c = DirichletRelationPartitioner(4, seed=2)(kg)
    for x, y in zip(a, b, strict=True):
        assert torch.equal(x.entity_ids, y.entity_ids)
        for split in ("train", "valid", "test"):
            assert torch.equal(x.graph.triples(split), y.graph.triples(split))
    assert a.meta["client_sizes"] == b.meta["client_sizes"]
    assert a.meta["client_sizes"] != c.meta["client_sizes"]


def _relation_shares(fed, num_relations):
    counts = torch.zeros(num_relations, fed.num_clients)
    for k, s in enumerate(fed):
        rel = torch.cat([s.global_triples(x)[:, 1] for x in ("train", "valid", "test")])
        counts[:, k] = torch.bincount(rel, minlength=num_relations).float()
    return counts / counts.sum(1, keepdim=True)


def test_alpha_moves_from_relation_split_to_iid_split():
    kg = blocks_kg()
    # alpha -> 0: every relation lies in one client (a relation partition)
    tiny = DirichletRelationPartitioner(2, alpha=1e-3, seed=0, min_triples=1)
    shares = _relation_shares(tiny(kg), 4)
    assert torch.equal(shares.max(1).values, torch.ones(4))
    # alpha -> inf: each relation's 50 triples split 25/25 (floor of n * 1/2)
    huge = DirichletRelationPartitioner(2, alpha=1e6, seed=0)
    shares = _relation_shares(huge(kg), 4)
    assert torch.allclose(shares, torch.full((4, 2), 0.5), atol=0.021)


def test_infeasible_and_bad_settings_are_refused():
    kg = blocks_kg()  # 200 triples
    with pytest.raises(ValueError, match="needs 210 triples"):
        DirichletRelationPartitioner(21, seed=0)(kg)
    with pytest.raises(ValueError, match="`max_tries`=3"):
        DirichletRelationPartitioner(3, alpha=1e-3, min_triples=60, max_tries=3)(kg)
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="`alpha`"):
            DirichletRelationPartitioner(2, alpha=bad)
    with pytest.raises(ValueError, match="`min_triples`"):
        DirichletRelationPartitioner(2, min_triples=0)


def test_more_clients_than_relations(tmp_path):
    kg = random_kg(num_relations=3, num_triples=400)
    fed = resolve_partitioner("dirichlet", 12, seed=0, alpha=1.0)(kg)
    assert fed.num_clients == 12 > kg.num_relations
    assert repr(resolve_partitioner("Dirichlet-Relation", 2)).startswith(
        "DirichletRelationPartitioner(num_clients=2, seed=0, alpha=0.5"
    )
    save_partition(fed, tmp_path / "d12")
    meta = json.loads((tmp_path / "d12" / "META.json").read_text())
    assert meta["partitioner"] == "DirichletRelationPartitioner"
    assert (
        meta["params"]["alpha"] == 1.0
        and meta["client_sizes"] == fed.meta["client_sizes"]
    )
    back = load_partition(tmp_path / "d12")
    assert _sorted(_pooled(back)) == _sorted(_pooled(fed))
