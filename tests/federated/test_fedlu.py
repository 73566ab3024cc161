import torch
from fedlu_toy import toy_federation, toy_model

from fedgraph.federated.fedlu import GLOBAL, MU_DISTILL, FedLU, FedLUClient
from fedgraph.federated.payload import Payload
from fedgraph.runtime.simulation import run_simulation


def _clients(fed, **kw):
    return {
        s.client_id: FedLUClient(
            s,
            toy_model(s),
            batch_size=16,
            num_negatives=4,
            local_epochs=1,
            lr=0.01,
            seed=0,
            **kw,
        )
        for s in fed
    }


def test_global_model_shares_relations_but_not_entities():
    fed = toy_federation()
    c = _clients(fed)[0]
    assert c.global_model.relation_embedding is c.model.relation_embedding
    assert c.global_table.data_ptr() != c.table.data_ptr()


def test_fit_receives_global_rows_trains_both_and_sends_only_global():
    fed = toy_federation()
    strat = FedLU(12, 8, init_range=1.0, mu_distill=2.0)
    clients = _clients(fed)
    strat.register({c: cl.register() for c, cl in clients.items()})
    pay = strat.configure_train(1, [0])[0]
    assert pay.config[MU_DISTILL] == 2.0
    cl = clients[0]
    local_before = cl.table.detach().clone()
    reply = cl.fit(pay)
    assert set(reply.arrays) == {"entity"}
    assert torch.equal(reply.row_ids["entity"], fed[0].entity_ids)
    assert torch.allclose(reply.arrays["entity"], cl.global_table.detach())
    assert not torch.allclose(cl.table.detach(), local_before)  # local trained
    assert not torch.allclose(
        reply.arrays["entity"], pay.arrays["entity"]
    )  # global trained


def test_no_distillation_decouples_local_from_global():
    # with mu = 0, the local update must not depend on the global table
    fed = toy_federation()
    outs = []
    for scale in (1.0, 5.0):
        strat = FedLU(12, 8, init_range=scale, mu_distill=0.0)
        cl = _clients(fed)[0]
        strat.register({0: cl.register()})
        cl.fit(strat.configure_train(1, [0])[0])
        outs.append(cl.table.detach().clone())
    assert torch.allclose(outs[0], outs[1])


def test_federation_reports_local_and_global_and_counts_comm():
    fed = toy_federation()
    strat = FedLU(12, 8, init_range=1.0)
    res = run_simulation(
        strat, _clients(fed), num_rounds=2, eval_every=1, patience=0, progress=False
    )
    assert "global_mrr" in res.test and "mrr" in res.test
    assert 0 < res.test["mrr"] <= 1 and 0 < res.test["global_mrr"] <= 1
    rows = sum(s.num_entities for s in fed)
    # params up = the global rows each round (2 rounds); down = same rows
    assert res.comm["params_up"] == 2 * rows * 8
    assert res.comm["params_down"] == 2 * rows * 8


def test_evaluate_reply_has_both_states():
    fed = toy_federation()
    cl = _clients(fed)[1]
    m = cl.evaluate(Payload(config={"split": "test"})).metrics
    assert m["head/count"] == 5 and m[GLOBAL + "tail/count"] == 5
