r"""FedAlign's type-sampling partitioner on a hand-made RDF graph and on AIFB."""

from __future__ import annotations

import pytest
import torch

from fedgraph.data.rdf_entities import load_rdf
from fedgraph.data.rdf_graph import RDFGraph
from fedgraph.partition.rdf_shard import FederatedRDF
from fedgraph.partition.rdf_type import RDFTypePartitioner


def toy_graph() -> RDFGraph:
    # 20 nodes: 0-5 people (0-3 train, 4 test, 5 unlabelled), 6-11 papers,
    # 12-17 literals, 18-19 schema. A ring of edges plus person → paper.
    n = 20
    src = torch.arange(n)
    dst = (src + 1) % n
    extra = torch.tensor([[0, 1, 2, 3, 4], [6, 7, 8, 9, 10]])
    edge_index = torch.cat([torch.stack([src, dst]), extra], dim=1)
    edge_type = torch.cat(
        [torch.zeros(n, dtype=torch.long), torch.ones(5, dtype=torch.long)]
    )
    node_type = torch.tensor([0] * 6 + [1] * 6 + [2] * 6 + [3] * 2)
    y = torch.full((n,), -1)
    y[:5] = torch.tensor([0, 1, 0, 1, 1])
    train = torch.zeros(n, dtype=torch.bool)
    train[:4] = True
    test = torch.zeros(n, dtype=torch.bool)
    test[4] = True
    return RDFGraph(
        edge_index,
        edge_type,
        node_type,
        y,
        {"train_mask": train, "test_mask": test},
        [f"<n{i:02d}>" for i in range(n)],
        ["r0", "r1"],
        ["person", "paper", "_Literal", "SCHEMA"],
        ["a", "b"],
        core_types=["person", "paper", "_Literal"],
        name="toy",
    )


def test_partition_invariants():
    g = toy_graph()
    fed = RDFTypePartitioner(2, num_types=2, seed=0)(g)
    assert isinstance(fed, FederatedRDF) and len(fed) == 2
    train_seen = []
    for shard in fed:
        sub, ids = shard.graph, shard.node_ids
        assert torch.equal(ids, torch.unique(ids))
        # all test nodes, never SCHEMA nodes (not a core type)
        assert bool(sub.test_mask.any()) and int(ids.eq(4).sum()) == 1
        assert not bool(torch.isin(ids, torch.tensor([18, 19])).any())
        # edges are exactly the global edges with both ends inside
        inside = torch.zeros(g.num_nodes, dtype=torch.bool)
        inside[ids] = True
        keep = inside[g.edge_index[0]] & inside[g.edge_index[1]]
        assert torch.equal(ids[sub.edge_index], g.edge_index[:, keep])
        assert torch.equal(sub.y, g.y[ids])
        train_seen.append(ids[sub.train_mask])
        # sampled unlabelled nodes come from at most `num_types` categories
        unl = ~g.labelled_mask[ids]
        assert torch.unique(g.node_type[ids][unl]).numel() <= 2
    both = torch.cat(train_seen)
    assert torch.equal(both.sort().values, torch.arange(4))  # dealt, disjoint
    assert [int(s.graph.train_mask.sum()) for s in fed] == [2, 2]


def test_deterministic_under_seed():
    g = toy_graph()
    a = RDFTypePartitioner(3, num_types=2, seed=7)(g)
    b = RDFTypePartitioner(3, num_types=2, seed=7)(g)
    for x, y in zip(a, b, strict=True):
        assert torch.equal(x.node_ids, y.node_ids)
        assert x.graph.checksum() == y.graph.checksum()
    c = RDFTypePartitioner(3, num_types=2, seed=8)(g)
    assert any(
        not torch.equal(x.node_ids, y.node_ids) for x, y in zip(a, c, strict=True)
    )


def test_errors_and_roundtrip(tmp_path):
    g = toy_graph()
    with pytest.raises(ValueError, match="num_types"):
        RDFTypePartitioner(2, num_types=4)(g)
    with pytest.raises(ValueError, match="unknown categories"):
        RDFTypePartitioner(2, types=["nope"])(g)
    fed = RDFTypePartitioner(2, num_types=2, seed=1)(g)
    fed.save(tmp_path / "p")
    back = FederatedRDF.load(tmp_path / "p")
    assert back.stats() == fed.stats()
    (tmp_path / "p" / "client1" / "graph.pt").write_bytes(b"junk")
    with pytest.raises(ValueError, match="client1"):
        FederatedRDF.load(tmp_path / "p")
    (tmp_path / "p" / "META.json").unlink()
    with pytest.raises(ValueError, match="not a complete RDF partition"):
        FederatedRDF.load(tmp_path / "p")


@pytest.mark.dataset
def test_aifb_fed10(data_root):
    g = load_rdf("aifb", root=data_root)
    fed = RDFTypePartitioner(10, num_types=6, seed=0)(g)
    s = fed.stats()
    assert sum(c["labelled"]["train"] for c in s["clients"]) == 140
    assert all(c["labelled"]["test"] == 36 for c in s["clients"])
    # FedAlign Table 3: 2,993 ± 1,738 entities per client.
    assert 1000 < s["nodes"]["mean"] < 5000


def test_shared_partition_format_and_registry(tmp_path):
    from fedgraph.partition import (
        describe,
        load_partition,
        resolve_partitioner,
        save_partition,
    )

    part = resolve_partitioner("rdf-type", 2, seed=3)
    assert isinstance(part, RDFTypePartitioner)
    fed = RDFTypePartitioner(2, num_types=2, seed=3)(toy_graph())
    save_partition(fed, tmp_path / "p")
    back = load_partition(tmp_path / "p")
    assert isinstance(back, FederatedRDF) and back.stats() == fed.stats()
    assert describe(back)["clients"][0]["nodes"] == fed[0].num_nodes
