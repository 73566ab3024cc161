"""Property-based tests on random small KGs (hypothesis)."""

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.partition import (
    RandomRelationPartitioner,
    SpectralRelationPartitioner,
    save_partition,
)


@st.composite
def kgs(draw):
    num_e = draw(st.integers(2, 25))
    num_r = draw(st.integers(1, 8))
    n = draw(st.integers(1, 120))
    rows = draw(
        st.lists(
            st.tuples(
                st.integers(0, num_e - 1),
                st.integers(0, num_r - 1),
                st.integers(0, num_e - 1),
            ),
            min_size=n,
            max_size=n,
        )
    )
    t = torch.tensor(rows, dtype=torch.long).view(-1, 3)
    cut = draw(st.integers(0, t.size(0)))
    return KnowledgeGraph(
        {"train": t[:cut], "test": t[cut:]}, num_entities=num_e, num_relations=num_r
    )


def _key(t):
    return sorted(map(tuple, t.tolist()))


def _check_partition(kg, fed, k):
    owner = torch.tensor(fed.meta["relation_clients"])
    assert owner.numel() == kg.num_relations and int(owner.max()) < k
    rel_sets = [set(s.relation_ids.tolist()) for s in fed]
    # disjoint relation sets covering every relation that has a triple
    assert sum(map(len, rel_sets)) == len(set().union(*rel_sets))
    assert set().union(*rel_sets) == set(kg.all_triples()[:, 1].tolist())
    got = []
    for s in fed:
        splits = {x: s.global_triples(x) for x in ("train", "valid", "test")}
        n = sum(v.size(0) for v in splits.values())
        # coverage of evaluation ids by train
        te = set(splits["train"][:, [0, 2]].reshape(-1).tolist())
        tr = set(splits["train"][:, 1].tolist())
        for x in ("valid", "test"):
            assert set(splits[x][:, [0, 2]].reshape(-1).tolist()) <= te
            assert set(splits[x][:, 1].tolist()) <= tr
            # split ratios: exact 10% unless training must keep more triples
            target = round(0.1 * n)
            forced_max = s.num_entities + s.num_relations
            assert (
                min(target, max(0, n - forced_max - (target if x == "test" else 0)))
                <= splits[x].size(0)
                <= target
            )
        for v in splits.values():
            assert (owner[v[:, 1]] == s.client_id).all()
            got.append(v)
    # every triple in exactly one client
    assert _key(torch.cat(got)) == _key(kg.all_triples())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kg=kgs(), k=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_random_relation_properties(kg, k, seed):
    k = min(k, kg.num_relations)
    fed = RandomRelationPartitioner(k, seed=seed)(kg)
    assert fed.num_clients == k
    _check_partition(kg, fed, k)
    sizes = [
        (torch.tensor(fed.meta["relation_clients"]) == c).sum().item() for c in range(k)
    ]
    assert max(sizes) - min(sizes) <= 1


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kg=kgs(), k=st.integers(1, 3), seed=st.integers(0, 100))
def test_spectral_properties(kg, k, seed):
    k = min(k, kg.num_relations)
    fed = SpectralRelationPartitioner(k, seed=seed, n_init=2)(kg)
    _check_partition(kg, fed, k)


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(kg=kgs(), seed=st.integers(0, 1000))
def test_same_seed_byte_identical_save(tmp_path_factory, kg, seed):
    k = min(2, kg.num_relations)
    base = tmp_path_factory.mktemp("det")
    a = save_partition(RandomRelationPartitioner(k, seed=seed)(kg), base / "a")
    b = save_partition(RandomRelationPartitioner(k, seed=seed)(kg), base / "b")
    fa = {p.relative_to(a): p.read_bytes() for p in a.rglob("*") if p.is_file()}
    fb = {p.relative_to(b): p.read_bytes() for p in b.rglob("*") if p.is_file()}
    assert fa == fb
