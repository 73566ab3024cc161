import networkx as nx
import pytest
import torch
from partition_kgs import random_kg

from fedgraph.partition import FederatedKG, describe, format_table
from fedgraph.partition.split import to_local
from fedgraph.partition.stats import clustering_coefficient


@pytest.fixture
def fed():
    c0 = to_local(
        0,
        {
            "train": torch.tensor([[0, 0, 1], [1, 0, 2], [2, 0, 0]]),
            "valid": torch.tensor([[0, 0, 2]]),
            "test": torch.zeros(0, 3, dtype=torch.long),
        },
        num_entities=5,
    )
    c1 = to_local(
        1,
        {
            "train": torch.tensor([[2, 1, 3], [3, 1, 4]]),
            "valid": torch.zeros(0, 3, dtype=torch.long),
            "test": torch.zeros(0, 3, dtype=torch.long),
        },
        num_entities=5,
    )
    return FederatedKG([c0, c1], num_entities=5, num_relations=2)


def test_hand_computed(fed):
    st = describe(fed)
    a, b = st["clients"]
    assert a["entities"] == 3 and a["relations"] == 1
    assert a["triples"] == {"train": 3, "valid": 1, "test": 0}
    assert a["shared_entities"] == 1 and b["shared_entities"] == 1
    assert a["mean_degree"] == pytest.approx(4 / 3)
    assert b["mean_degree"] == pytest.approx(2 / 3)
    # c0: 0->1, 1->2, 2->0, 0->2 (reciprocated 0<->2): networkx gives 1/2, 1, 1/2
    assert a["clustering"] == pytest.approx((0.5 + 1.0 + 0.5) / 3)
    assert b["clustering"] == 0.0
    o = st["overall"]
    assert o["entities"] == 5 and o["relations"] == 2 and o["shared_entities"] == 1
    assert o["triples"] == {"train": 5, "valid": 1, "test": 0}
    assert o["overlap"] == [[3, 1], [1, 3]]
    assert o["mean_entities"] == 3.0


def test_hand_example_matches_networkx(fed):
    ei = fed[0].graph.all_triples()[:, [0, 2]]
    ref = nx.average_clustering(nx.DiGraph(ei.tolist()))
    assert clustering_coefficient(ei.t(), 3) == pytest.approx(ref)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clustering_matches_networkx_with_loops_and_duplicates(seed):
    gen = torch.Generator().manual_seed(seed)
    n = 30
    ei = torch.randint(n, (2, 150), generator=gen)
    ei = torch.cat(
        [ei, ei[:, :20], torch.tensor([[3, 4], [3, 4]])], dim=1
    )  # dups + loops
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(ei.t().tolist())
    assert clustering_coefficient(ei, n) == pytest.approx(nx.average_clustering(g))


def test_table_and_no_clustering(fed):
    st = describe(fed, clustering=False)
    assert "clustering" not in st["clients"][0]
    text = format_table(st)
    lines = text.splitlines()
    assert lines[0].split() == [
        "client",
        "entities",
        "relations",
        "triples.train",
        "triples.valid",
        "triples.test",
        "shared_entities",
        "mean_degree",
    ]
    assert lines[2].split()[:4] == ["0", "3", "1", "3"]
    assert lines[5].split()[:3] == ["all", "5", "2"]
    assert "overlap" in text


def test_describe_rejects_unknown_type():
    with pytest.raises(TypeError, match="No statistics for list"):
        describe([1, 2])


def test_shared_entities_vectorised_matches_sets():
    from fedgraph.partition import RandomRelationPartitioner

    fed = RandomRelationPartitioner(4, seed=3)(random_kg(num_relations=8))
    st = describe(fed, clustering=False)
    sets = [set(s.entity_ids.tolist()) for s in fed]
    for i, c in enumerate(st["clients"]):
        others = set().union(*(s for j, s in enumerate(sets) if j != i))
        assert c["shared_entities"] == len(sets[i] & others)
        for j in range(4):
            assert st["overall"]["overlap"][i][j] == len(sets[i] & sets[j])


def test_register_describer_for_another_kind():
    from fedgraph.partition.stats import DESCRIBERS, register_describer

    class Toy:
        pass

    register_describer(Toy, lambda fed: {"clients": [{"nodes": 3, "edges": 2}]})
    try:
        st = describe(Toy(), clustering=False)  # option ignored for this kind
        assert st == {"clients": [{"nodes": 3, "edges": 2}]}
        assert format_table(st).splitlines()[2].split() == ["3", "2"]
    finally:
        del DESCRIBERS[Toy]
