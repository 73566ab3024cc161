import pytest
import torch

from fedgraph.data.knowledge_graph import ENTITY, KnowledgeGraph


def _toy() -> KnowledgeGraph:
    train = torch.tensor([[0, 0, 1], [1, 1, 2], [2, 0, 3], [3, 2, 0]])
    valid = torch.tensor([[0, 1, 3]])
    test = torch.tensor([[1, 2, 3], [2, 2, 1]])
    return KnowledgeGraph(
        {"test": test, "train": train, "valid": valid},
        num_entities=4,
        num_relations=3,
        entity_names=["a", "b", "c", "d"],
        relation_names=["r0", "r1", "r2"],
        name="toy",
    )


def test_splits_are_ordered_and_counted():
    kg = _toy()
    assert kg.split_names == ["train", "valid", "test"]
    assert kg.num_triples() == 7 and kg.num_triples("test") == 2
    assert kg.edge_index("train").tolist() == [[0, 1, 2, 3], [1, 2, 3, 0]]
    assert kg.edge_type("train").tolist() == [0, 1, 0, 2]
    assert repr(kg) == (
        "KnowledgeGraph('toy', entities=4, relations=3, train=4, valid=1, test=2)"
    )


def test_hetero_data_view_groups_by_relation():
    kg = _toy()
    data = kg.data
    assert data[ENTITY].num_nodes == 4
    store = data[ENTITY, "r2", ENTITY]
    # r2: train (3,0), test (1,3), test (2,1) -> split codes 0, 2, 2
    assert store.edge_index.tolist() == [[3, 1, 2], [0, 3, 1]]
    assert store.split.tolist() == [0, 2, 2]
    assert data.edge_index.size(1) == 7
    assert int((data.split == 1).sum()) == 1


def test_id_out_of_range_is_rejected():
    with pytest.raises(ValueError, match="entity id outside"):
        KnowledgeGraph({"train": torch.tensor([[0, 0, 4]])}, 4, 1)
    with pytest.raises(ValueError, match="relation id outside"):
        KnowledgeGraph({"train": torch.tensor([[0, 1, 2]])}, 4, 1)
    with pytest.raises(ValueError, match=r"\[n, 3\]"):
        KnowledgeGraph({"train": torch.zeros(2, 2, dtype=torch.long)}, 4, 1)


def test_save_load_roundtrip(tmp_path):
    kg = _toy()
    kg.save(tmp_path / "kg.pt")
    back = KnowledgeGraph.load(tmp_path / "kg.pt")
    assert back.entity_names == kg.entity_names
    for s in kg.split_names:
        assert torch.equal(back.triples(s), kg.triples(s))
    assert not list(tmp_path.glob(".*tmp*"))
