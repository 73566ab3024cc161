import numpy as np
import torch
from partition_kgs import random_kg, two_domain_kg

from fedgraph.partition import SpectralRelationPartitioner, resolve_partitioner
from fedgraph.partition.relation_cluster import canonical_labels, cooccurrence_matrix


def test_cooccurrence_hand_computed():
    # e0 -r0-> e1, e1 -r1-> e2, e1 -r1-> e3, e3 -r2-> e0, e0 -r0-> e0
    t = torch.tensor([[0, 0, 1], [1, 1, 2], [1, 1, 3], [3, 2, 0], [0, 0, 0]])
    m = cooccurrence_matrix(t, 4, 3)
    # e0: {r0, r2}; e1: {r0, r1}; e2: {r1}; e3: {r1, r2}
    expected = np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]])
    assert (m == expected).all()
    t2 = torch.tensor([[0, 0, 1], [0, 1, 1], [2, 1, 0]])
    # e0: {r0, r1}, e1: {r0, r1}, e2: {r1}  -> M[0,1] = 2
    assert cooccurrence_matrix(t2, 3, 2).tolist() == [[0, 2], [2, 0]]


def test_cooccurrence_matches_fedlu_loop():
    kg = random_kg(num_entities=25, num_relations=7, num_triples=120, seed=4)
    t = kg.all_triples()
    e2r = {}
    for h, r, tt in t.tolist():
        e2r.setdefault(h, set()).add(r)
        e2r.setdefault(tt, set()).add(r)
    ref = np.zeros((7, 7), dtype=np.int64)
    for rs in e2r.values():
        rs = sorted(rs)
        for i in range(len(rs)):
            for j in range(i + 1, len(rs)):
                ref[rs[i], rs[j]] += 1
                ref[rs[j], rs[i]] += 1
    assert (cooccurrence_matrix(t, 25, 7) == ref).all()


def test_two_domains_become_two_clients():
    fed = SpectralRelationPartitioner(2, seed=0)(two_domain_kg())
    assert [s.relation_ids.tolist() for s in fed] == [[0, 1, 2], [3, 4]]
    assert [s.entity_ids.tolist() for s in fed] == [
        list(range(10)),
        list(range(10, 20)),
    ]
    assert [s.graph.num_triples() for s in fed] == [30, 20]
    assert fed.meta["relation_clients"] == [0, 0, 0, 1, 1]


def test_canonical_labels():
    assert canonical_labels(torch.tensor([2, 2, 0, 1, 0]), 3).tolist() == [
        0,
        0,
        1,
        2,
        1,
    ]
    # an empty cluster is numbered last
    assert canonical_labels(torch.tensor([3, 1, 1]), 4).tolist() == [0, 1, 1]


def test_seeded_and_resolvable():
    kg = random_kg(num_relations=9)
    p = resolve_partitioner("spectral", 3, seed=3)
    assert isinstance(p, SpectralRelationPartitioner)
    a, b = p(kg), SpectralRelationPartitioner(3, seed=3)(kg)
    assert a.meta["relation_clients"] == b.meta["relation_clients"]
    for x, y in zip(a, b, strict=True):
        assert torch.equal(x.graph.triples("valid"), y.graph.triples("valid"))
    assert "n_init=10" in repr(p)
