import math

import pytest
import torch

from fedgraph.federated.kge.sparsify import (
    cycle_param_ratio,
    downstream_select,
    embedding_change,
    is_sync_round,
    num_selected,
    personalised_aggregate,
    personalised_update,
    shared_entity_mask,
    topk_mask,
    upstream_select,
)


def test_num_selected_floor_with_tolerance():
    assert num_selected(5, 0.4) == 2
    assert num_selected(10, 0.7) == 7
    assert num_selected(3, 0.4) == 1
    with pytest.raises(ValueError, match="`p`"):
        num_selected(3, 1.5)


def test_embedding_change_and_upstream_topk_hand_case():
    cur = torch.tensor([[1.0, 0], [0, 1], [1, 1], [-1, 0], [2, 0]])
    hist = torch.tensor([[1.0, 0]] * 5)
    change = embedding_change(cur, hist)
    assert torch.allclose(
        change, torch.tensor([0, 1, 1 - 1 / math.sqrt(2), 2, 0]), atol=1e-6
    )
    sign = upstream_select(cur, hist, p=0.4)  # K = 2: entities 3 (2.0) and 1 (1.0)
    assert sign.tolist() == [False, True, False, True, False]


def test_topk_mask_ties_and_valid():
    assert topk_mask(torch.tensor([1.0, 1.0, 0.5]), 1).tolist() == [True, False, False]
    m = topk_mask(
        torch.tensor([3.0, 2.0, 1.0]), 2, valid=torch.tensor([False, True, False])
    )
    assert m.tolist() == [False, True, False]


def _toy_round():
    # 3 clients over 4 global entities (dim 1); entity 3 is held by client 1 only.
    ids = [torch.tensor([0, 1, 2]), torch.tensor([1, 2, 3]), torch.tensor([0, 2])]
    shared = shared_entity_mask(ids, 4)
    shared_ids = [i[shared[i]] for i in ids]
    signs = [
        torch.tensor([True, False, True]),
        torch.tensor([True, False]),
        torch.tensor([True, True]),
    ]
    values = [
        torch.tensor([[1.0], [2.0]]),
        torch.tensor([[10.0]]),
        torch.tensor([[100.0], [200.0]]),
    ]
    total = torch.zeros(4, 1)
    count = torch.zeros(4, dtype=torch.long)
    for sid, s, v in zip(shared_ids, signs, values, strict=True):
        total.index_add_(0, sid[s], v)
        count.index_add_(0, sid[s], torch.ones(int(s.sum()), dtype=torch.long))
    return shared, shared_ids, signs, values, total, count


def test_shared_entities_exclude_single_holder():
    shared, shared_ids, *_ = _toy_round()
    assert shared.tolist() == [True, True, True, False]
    assert shared_ids[1].tolist() == [1, 2]


def test_personalised_aggregate_excludes_own_upload():
    _, shared_ids, signs, values, total, count = _toy_round()
    a0, p0 = personalised_aggregate(total, count, shared_ids[0], values[0], signs[0])
    assert a0.flatten().tolist() == [100.0, 10.0, 200.0] and p0.tolist() == [1, 1, 1]
    a1, p1 = personalised_aggregate(total, count, shared_ids[1], values[1], signs[1])
    assert a1.flatten().tolist() == [0.0, 202.0] and p1.tolist() == [0, 2]
    a2, p2 = personalised_aggregate(total, count, shared_ids[2], values[2], signs[2])
    assert a2.flatten().tolist() == [1.0, 2.0] and p2.tolist() == [1, 1]


def test_downstream_priority_and_random_ties():
    # K = floor(0.5 * 2) = 1; entity with priority 0 is never sent
    assert downstream_select(torch.tensor([0, 2]), 0.5).tolist() == [False, True]
    assert downstream_select(torch.tensor([0, 0]), 1.0).tolist() == [False, False]
    # priority order beats the random jitter
    sel = downstream_select(torch.tensor([1, 3, 2, 1]), 0.5)
    assert sel.tolist() == [False, True, True, False]
    # equal priorities: seeded random choice of exactly K
    picks = {
        int(
            downstream_select(
                torch.tensor([1, 1, 1]), 0.4, torch.Generator().manual_seed(s)
            ).nonzero()
        )
        for s in range(20)
    }
    assert picks == {0, 1, 2}
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    assert torch.equal(
        downstream_select(torch.tensor([1, 1, 1]), 0.4, g1),
        downstream_select(torch.tensor([1, 1, 1]), 0.4, g2),
    )


def test_personalised_update_hand_value():
    local = torch.tensor([[5.0], [6.0]])
    out = personalised_update(
        local, torch.tensor([[202.0]]), torch.tensor([2]), torch.tensor([False, True])
    )
    assert out[0].item() == 5.0
    assert out[1].item() == pytest.approx((202.0 + 6.0) / 3)
    assert local[1].item() == 6.0  # not in place
    with pytest.raises(ValueError, match="sign"):
        personalised_update(
            local, torch.zeros(2, 1), torch.tensor([1, 1]), torch.tensor([False, True])
        )


def test_sync_schedule_and_cycle_ratio():
    assert [r for r in range(1, 13) if is_sync_round(r, 4)] == [1, 6, 11]
    assert all(is_sync_round(r, 0) for r in range(1, 5))
    # FedS Eq. (5) with p = 0.4, s = 4, D = 256: (1.6 + 1 + 9.6/512) / 5
    assert cycle_param_ratio(0.4, 4, 256) == pytest.approx(0.52375)
