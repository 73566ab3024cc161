r"""FedR: relation rows travel, entity rows stay home."""

import pytest
import torch
from privacy_toy import build, toy_federation

from fedgraph.federated.kge.fede import ENTITY
from fedgraph.federated.kge.fedr import RELATION, FedR
from fedgraph.runtime import run_simulation


def test_fedr_averages_relation_rows_and_never_uploads_entities():
    fed = toy_federation()
    # client 1 shares relation 2..3 with nobody; make clients 0 and 1 share relation 1
    fed.shards[1].relation_ids = torch.tensor([1, 3])
    strategy, clients = build(fed, "fedr")
    assert isinstance(strategy, FedR)
    strategy.register({c: cl.register() for c, cl in clients.items()})
    payloads = strategy.configure_train(1, [0, 1, 2])
    replies = {c: clients[c].fit(p) for c, p in payloads.items()}
    for r in replies.values():
        assert ENTITY not in r.arrays and set(r.row_ids) == {RELATION}
    strategy.aggregate_train(1, replies)
    rows = {
        c: dict(zip(r.row_ids[RELATION].tolist(), r.arrays[RELATION], strict=True))
        for c, r in replies.items()
    }
    # relation 1 held by clients 0 and 1: their mean; relation 3 by client 1 alone
    assert torch.allclose(strategy.table[1], (rows[0][1] + rows[1][1]) / 2, atol=1e-6)
    assert torch.allclose(strategy.table[3], rows[1][3], atol=1e-6)


def test_fedr_trains():
    fed = toy_federation()
    strategy, clients = build(fed, "fedr")
    res = run_simulation(
        strategy, clients, num_rounds=2, eval_every=1, patience=0, progress=False
    )
    assert res.test["mrr"] > 0


def test_fedr_with_secagg_equals_fedr():
    from fedgraph.privacy.secagg import SecAggClient, SecAggStrategy

    fed = toy_federation()
    s1, c1 = build(fed, "fedr")
    s1 = SecAggStrategy(s1)
    c1 = {k: SecAggClient(v, fed.num_relations, key=RELATION) for k, v in c1.items()}
    a = run_simulation(s1, c1, num_rounds=2, eval_every=1, patience=0, progress=False)
    s2, c2 = build(toy_federation(), "fedr")
    b = run_simulation(s2, c2, num_rounds=2, eval_every=1, patience=0, progress=False)
    assert (s1.base.table - s2.table).abs().max() < 1e-4
    assert a.test["mrr"] == pytest.approx(b.test["mrr"], abs=1e-3)
