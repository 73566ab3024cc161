import pytest
import torch

from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.data.shard import FederatedKG, KGShard
from fedgraph.federated.unlearning.forget import (
    ForgetRequestError,
    check_forget_triples,
    load_forget_requests,
    read_forget_file,
    retained_triples,
)


def _fed():
    # client 0: local entities a, b, c (global 0, 1, 2), relation r0
    g0 = KnowledgeGraph(
        {
            "train": torch.tensor([[0, 0, 1], [1, 0, 2], [2, 0, 0]]),
            "valid": torch.tensor([[0, 0, 2]]),
            "test": torch.tensor([[1, 0, 0]]),
        },
        3,
        1,
    )
    # client 1: local entities c, d (global 2, 3), relation r1
    g1 = KnowledgeGraph(
        {
            "train": torch.tensor([[0, 0, 1]]),
            "valid": torch.zeros(0, 3),
            "test": torch.zeros(0, 3),
        },
        2,
        1,
    )
    shards = [
        KGShard(0, g0, torch.tensor([0, 1, 2]), torch.tensor([0])),
        KGShard(1, g1, torch.tensor([2, 3]), torch.tensor([1])),
    ]
    return FederatedKG(
        shards, 4, 2, entity_names=["a", "b", "c", "d"], relation_names=["r0", "r1"]
    )


def test_api_request_checked_and_deduplicated():
    fed = _fed()
    out = check_forget_triples(torch.tensor([[1, 0, 2], [0, 0, 1], [1, 0, 2]]), fed[0])
    assert out.tolist() == [[1, 0, 2], [0, 0, 1]]


def test_api_request_rejects_non_training_triple():
    fed = _fed()
    with pytest.raises(
        ForgetRequestError, match=r"row 2: triple \(0, 0, 2\).*training"
    ):
        check_forget_triples(
            torch.tensor([[1, 0, 2], [0, 0, 2]]), fed[0]
        )  # a valid triple
    with pytest.raises(ForgetRequestError, match="row 1"):
        check_forget_triples(torch.tensor([[7, 0, 1]]), fed[0])  # out of range
    with pytest.raises(ForgetRequestError, match="empty"):
        check_forget_triples(torch.zeros(0, 3), fed[0])


def test_file_request_maps_names_and_names_bad_line(tmp_path):
    fed = _fed()
    f = tmp_path / "unlearn.txt"
    f.write_text("b\tr0\tc\nc\tr0\ta\n")
    assert read_forget_file(f, fed[0], fed).tolist() == [[1, 0, 2], [2, 0, 0]]
    f.write_text("b\tr0\tc\na\tr0\tc\n")  # (a, r0, c) is a valid triple
    with pytest.raises(ForgetRequestError, match=r"unlearn.txt, line 2:.*training"):
        read_forget_file(f, fed[0], fed)
    f.write_text("b\tr0\tc\nd\tr0\ta\n")  # d is not client 0's entity
    with pytest.raises(ForgetRequestError, match=r"line 2: entity 'd'"):
        read_forget_file(f, fed[0], fed)


def test_folder_request_and_retained(tmp_path):
    fed = _fed()
    (tmp_path / "client1").mkdir()
    (tmp_path / "client1" / "unlearn.txt").write_text("c\tr1\td\n")
    req = load_forget_requests(tmp_path, fed)
    assert list(req) == [1] and req[1].tolist() == [[0, 0, 1]]
    kept = retained_triples(
        fed[0].graph.triples("train"), torch.tensor([[1, 0, 2]]), 3, 1
    )
    assert kept.tolist() == [[0, 0, 1], [2, 0, 0]]
    with pytest.raises(FileNotFoundError, match="unlearn.txt"):
        load_forget_requests(tmp_path / "client1", fed)
    with pytest.raises(ForgetRequestError, match="client 5"):
        load_forget_requests({5: torch.tensor([[0, 0, 1]])}, fed)


@pytest.mark.dataset
def test_published_c3_forgetting_sets_are_training_triples(data_root):
    from fedgraph.data import load_dataset

    fed = load_dataset("fedlu-c3")
    req = load_forget_requests(data_root / "fedlu-fb15k-237" / "C3", fed)
    assert {c: int(t.size(0)) for c, t in req.items()} == {0: 443, 1: 121, 2: 1919}
    for c, t in req.items():  # the same triples as the loader's `unlearn` split
        u = fed[c].graph.triples("unlearn")
        assert torch.equal(torch.unique(t, dim=0), torch.unique(u, dim=0))
