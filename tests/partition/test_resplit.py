import pytest
import torch
from partition_kgs import random_kg

from fedgraph.partition.split import check_ratios, resplit, to_local


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_resplit_sizes_are_exact_8_1_1():
    kg = random_kg(num_entities=30, num_relations=4, num_triples=600)
    t = kg.all_triples()
    out = resplit(t, generator=_gen())
    n = t.size(0)
    assert out["valid"].size(0) == round(0.1 * n)
    assert out["test"].size(0) == round(0.1 * n)
    assert out["train"].size(0) == n - 2 * round(0.1 * n)
    # a partition of the pooled triples: same multiset
    back = torch.cat([out["train"], out["valid"], out["test"]])
    assert torch.equal(
        torch.sort(back[:, 0] * 10**6 + back[:, 1] * 10**3 + back[:, 2]).values,
        torch.sort(t[:, 0] * 10**6 + t[:, 1] * 10**3 + t[:, 2]).values,
    )


def test_resplit_eval_entities_and_relations_occur_in_train():
    kg = random_kg(num_entities=60, num_relations=12, num_triples=200, seed=3)
    out = resplit(kg.all_triples(), generator=_gen(1))
    train_e = set(out["train"][:, [0, 2]].reshape(-1).tolist())
    train_r = set(out["train"][:, 1].tolist())
    for s in ("valid", "test"):
        assert set(out[s][:, [0, 2]].reshape(-1).tolist()) <= train_e
        assert set(out[s][:, 1].tolist()) <= train_r


def test_resplit_keeps_singletons_in_train():
    # A chain: each entity's only triples; entity 0 and 5 occur once.
    t = torch.tensor([[0, 0, 1], [1, 0, 2], [2, 0, 3], [3, 0, 4], [4, 0, 5]])
    out = resplit(t, (0.6, 0.2, 0.2), generator=_gen())
    train = out["train"].tolist()
    assert [0, 0, 1] in train and [4, 0, 5] in train
    # every entity 0..5 still occurs in train
    assert set(out["train"][:, [0, 2]].reshape(-1).tolist()) == set(range(6))


def test_resplit_is_seeded():
    t = random_kg().all_triples()
    a = resplit(t, generator=_gen(7))
    b = resplit(t, generator=_gen(7))
    c = resplit(t, generator=_gen(8))
    assert all(torch.equal(a[s], b[s]) for s in a)
    assert not torch.equal(a["valid"], c["valid"])


@pytest.mark.parametrize(
    "ratios", [(0.8, 0.1), (0.5, 0.5, 0.5), (0.0, 0.5, 0.5), (1.2, -0.1, -0.1)]
)
def test_check_ratios_rejects(ratios):
    with pytest.raises(ValueError, match="`ratios`"):
        check_ratios(ratios)


def test_to_local_ids_are_sorted_global_ids():
    splits = {
        "train": torch.tensor([[7, 3, 2], [2, 5, 9]]),
        "valid": torch.tensor([[9, 3, 7]]),
    }
    shard = to_local(1, splits, num_entities=10)
    assert shard.entity_ids.tolist() == [2, 7, 9]
    assert shard.relation_ids.tolist() == [3, 5]
    assert shard.graph.triples("train").tolist() == [[1, 0, 0], [0, 1, 2]]
    assert shard.graph.triples("valid").tolist() == [[2, 0, 1]]
    assert torch.equal(shard.global_triples("train"), splits["train"])
