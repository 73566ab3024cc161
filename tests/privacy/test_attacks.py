r"""The server's attacks on hand-checkable toys."""

import math

import pytest
import torch

from fedgraph.privacy.attacks import (
    ServerView,
    auc,
    binary_metrics,
    membership_inference,
    triple_inference,
)


def test_binary_metrics_and_auc_by_hand():
    pred = torch.tensor([1, 1, 0, 0, 1]).bool()
    truth = torch.tensor([1, 0, 1, 0, 1]).bool()
    m = binary_metrics(pred, truth)
    # tp 2, fp 1, fn 1, tn 1
    assert m["precision"] == pytest.approx(2 / 3)
    assert m["recall"] == pytest.approx(2 / 3)
    assert m["f1"] == pytest.approx(2 / 3)
    assert m["accuracy"] == pytest.approx(3 / 5)
    # positives scored 0.9, 0.4; negatives 0.5, 0.1: 3 of 4 pairs ordered
    s = torch.tensor([0.9, 0.5, 0.4, 0.1])
    y = torch.tensor([1, 0, 1, 0]).bool()
    assert auc(s, y) == pytest.approx(0.75)
    assert math.isnan(auc(s, torch.ones(4).bool()))


def _chain(n=12, dim=8, seed=0):
    # a TransE-perfect chain: e_{i+1} = e_i + r, true triples (i, 0, i+1)
    g = torch.Generator().manual_seed(seed)
    r = torch.full((dim,), 0.5)
    start = torch.randn(dim, generator=g) * 0.1
    rows = torch.stack([start + i * r for i in range(n)])
    triples = torch.tensor([[i, 0, i + 1] for i in range(n - 1)])
    return rows, triples


def test_triple_inference_recovers_a_perfect_transe_chain():
    rows, triples = _chain()
    view = ServerView(torch.arange(12), rows, "upload", None)
    res = triple_inference(
        view,
        triples,
        triples,
        num_entities=12,
        num_relations=1,
        model="transe",
        gamma=2.0,
        known_fraction=0.3,
        seed=0,
    )
    # every unknown chain link is found, no corruption passes the threshold
    assert res["target_triples"] == 11 - 3
    assert res["auc"] == pytest.approx(1.0)
    assert res["f1"] == pytest.approx(1.0)
    assert res["baseline"]["f1"] == 0.5
    # without the rows (same knowledge, Gaussian rows) the attack is blind
    assert res["knowledge_only"]["auc"] < 0.9


def test_triple_inference_without_rows_is_a_guess():
    _, triples = _chain()
    res = triple_inference(
        ServerView(None, None, "none", None),
        triples,
        triples,
        num_entities=12,
        num_relations=1,
        known_fraction=0.3,
    )
    assert "note" in res and res["negatives"] == res["target_triples"]


def test_membership_from_ids_counts_and_nothing():
    truth = torch.tensor([0, 1, 2, 3])
    ids = torch.zeros(10, dtype=torch.float64)
    ids[truth] = 1
    m = membership_inference(ServerView(None, None, "upload", ids), truth, 10)
    assert (m["precision"], m["recall"], m["auc"]) == (1.0, 1.0, 1.0)
    assert m["baseline"]["precision"] == pytest.approx(0.4)
    # presence counts / 3 clients: entities 0-3 held by 2 or 3, 4-9 by 0 or 1
    counts = torch.tensor([3, 2, 2, 3, 1, 1, 0, 0, 1, 0], dtype=torch.float64) / 3
    m = membership_inference(ServerView(None, None, "aggregate", counts), truth, 10)
    assert m["auc"] == pytest.approx(1.0) and m["f1"] == pytest.approx(1.0)
    # no mapping: the prior (0.4 < 0.5: predicts nobody)
    m = membership_inference(ServerView(None, None, "upload", None), truth, 10)
    assert m["auc"] == pytest.approx(0.5) and m["recall"] == 0.0


def test_best_threshold_by_hand():
    from fedgraph.privacy.attacks import best_threshold

    s = torch.tensor([0.9, 0.8, 0.3, 0.7, 0.1])
    y = torch.tensor([1, 1, 0, 1, 0]).bool()
    assert best_threshold(s, y) == pytest.approx(0.5)  # between 0.7 and 0.3
    # ties cannot be split: the two 0.5 go to the same side
    s = torch.tensor([0.5, 0.5, 0.2, 0.1])
    y = torch.tensor([1, 0, 1, 0]).bool()
    assert best_threshold(s, y) == pytest.approx(0.15)  # 3 of 4 right
