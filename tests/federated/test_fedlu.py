import pytest
import torch
from fedlu_toy import toy_federation, toy_model

from fedgraph.federated.kge.client import KGEClient
from fedgraph.federated.kge.fede import FedE
from fedgraph.federated.kge.fedlu import (
    GLOBAL,
    GLOBAL_RELATION,
    LOCAL_INIT,
    MU_DISTILL,
    MU_GLOBAL,
    MU_LOCAL,
    FedLU,
    FedLUClient,
)
from fedgraph.federated.payload import Payload
from fedgraph.runtime.simulation import run_simulation


def _clients(fed, **kw):
    opts = dict(batch_size=16, num_negatives=4, local_epochs=1, lr=0.01, seed=0)
    opts.update(kw)
    return {s.client_id: FedLUClient(s, toy_model(s), **opts) for s in fed}


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


def _fit_once(fed, *, init_range=1.0, mu_distill=2.0, **config):
    r"""Client 0 after one ``fit`` on a fresh strategy's round-1 payload
    (``config`` overrides its entries); returns the client and its reply."""
    strat = FedLU(12, 8, init_range=init_range, mu_distill=mu_distill)
    cl = _clients(fed)[0]
    strat.register({0: cl.register()})
    pay = strat.configure_train(1, [0])[0]
    pay.config.update(config)
    return cl, cl.fit(pay)


def test_no_distillation_decouples_local_from_global():
    # with mu = 0 and the local table's own start, the local update must not
    # depend on the global table
    fed = toy_federation()
    outs = [
        _fit_once(fed, init_range=r, mu_distill=0.0, **{LOCAL_INIT: "own"})[0]
        .table.detach()
        .clone()
        for r in (1.0, 5.0)
    ]
    assert torch.allclose(outs[0], outs[1])


@pytest.mark.parametrize("how", ["global", "own"])
def test_local_table_starts_from_the_first_global_rows_only(how):
    # FedLU's code starts every client's local table from the server's initial
    # rows; afterwards the local table is never overwritten
    fed = toy_federation()
    strat = FedLU(12, 8, init_range=1.0, local_init=how)
    cl = _clients(fed, lr=0.0)[0]  # steps of size 0: the tables as written
    own = cl.table.detach().clone()
    strat.register({0: cl.register()})
    first = strat.configure_train(1, [0])[0]
    assert first.config[LOCAL_INIT] == how
    cl.fit(first)
    want = first.arrays["entity"] if how == "global" else own
    assert torch.equal(cl.table.detach(), want)
    assert torch.equal(cl.global_table.detach(), first.arrays["entity"])
    assert cl.local_started
    second = first.detach()
    second.arrays["entity"] = first.arrays["entity"] + 1.0
    cl.fit(second)
    assert torch.equal(cl.table.detach(), want)  # not overwritten again
    assert torch.equal(cl.global_table.detach(), second.arrays["entity"])


def test_local_init_with_distillation_off_equals_training_from_the_rows():
    # "global" = the "own" client whose local table was set to the received rows
    fed = toy_federation()
    a, _ = _fit_once(fed, mu_distill=0.0)
    strat = FedLU(12, 8, init_range=1.0, mu_distill=0.0, local_init="own")
    b = _clients(fed)[0]
    strat.register({0: b.register()})
    pay = strat.configure_train(1, [0])[0]
    with torch.no_grad():
        b.table.copy_(pay.arrays["entity"])
    b.fit(pay)
    torch.testing.assert_close(a.table.detach(), b.table.detach())
    torch.testing.assert_close(a.global_table.detach(), b.global_table.detach())


def test_local_init_is_checkpointed_and_validated():
    fed = toy_federation()
    cl, _ = _fit_once(fed)
    state = cl.state_dict()
    assert state["local_started"] is True
    fresh = _clients(fed)[0]
    fresh.load_state_dict(state)
    assert fresh.local_started and torch.equal(fresh.table, cl.table)
    del state["local_started"]  # a checkpoint written before the flag existed
    fresh = _clients(fed)[0]
    fresh.load_state_dict(state)
    assert fresh.local_started
    with pytest.raises(ValueError, match="local_init"):
        FedLU(12, 8, init_range=1.0, local_init="random")
    with pytest.raises(ValueError, match="local_init"):
        _clients(fed, local_init="random")
    with pytest.raises(ValueError, match="local_init"):
        _fit_once(fed, **{LOCAL_INIT: "zeros"})
    assert FedLU(12, 8, init_range=1.0).get_params()["local_init"] == "global"


def _rounds(strat, clients, n):
    r"""``n`` rounds of every client by hand; the server table after each."""
    strat.register({c: cl.register() for c, cl in clients.items()})
    tables = []
    for r in range(1, n + 1):
        pays = strat.configure_train(r, sorted(clients))
        strat.aggregate_train(r, {c: clients[c].fit(p) for c, p in pays.items()})
        tables.append(strat.table.clone())
    return tables


@pytest.mark.parametrize("relations", ["own", "shared"])
def test_own_global_relations_without_distillation_train_as_fede(relations):
    # with its own relation table and no distillation, the global model is a
    # FedE client (same rows, samples and fresh Adam each round): the server
    # tables and the relations equal FedE's; FedLU's shared table does not
    fed = toy_federation()
    opts = dict(batch_size=16, num_negatives=4, local_epochs=1, lr=0.01, seed=0)
    fede = {s.client_id: KGEClient(s, toy_model(s), **opts) for s in fed}
    want = _rounds(FedE(12, 8, init_range=1.0), fede, 3)
    strat = FedLU(12, 8, init_range=1.0, mu_distill=0.0, global_relations=relations)
    assert strat.train_config(1)[GLOBAL_RELATION] == relations
    fedlu = _clients(fed)
    got = _rounds(strat, fedlu, 3)
    same = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(got, want, strict=True))
    assert same == (relations == "own")
    rel = [fedlu[c].global_model.relation_embedding.weight for c in (0, 1)]
    want_rel = [fede[c].model.relation_embedding.weight for c in (0, 1)]
    for a, b in zip(rel, want_rel, strict=True):
        assert torch.allclose(a, b, atol=1e-6) == (relations == "own")


def test_own_global_relations_are_untied_checkpointed_and_validated():
    fed = toy_federation()
    cl = _clients(fed, global_relations="own")[0]
    assert not cl.own_relations  # tied until the first round
    init = cl.model.relation_embedding.weight.detach().clone()
    # the server's setting wins over the client's
    shared, _ = _fit_once(fed, **{GLOBAL_RELATION: "shared"})
    assert not shared.own_relations
    # (from the same rows, the same relations and no distillation, the two
    # models would train identically: start the local table from its own rows)
    cl, _ = _fit_once(fed, **{GLOBAL_RELATION: "own", LOCAL_INIT: "own"})
    assert cl.own_relations
    g = cl.global_model.relation_embedding.weight.detach()
    assert not torch.equal(g, init) and not torch.equal(
        g, cl.model.relation_embedding.weight
    )
    assert len(cl.global_optimizer.param_groups[0]["params"]) == 2
    state = cl.state_dict()
    assert torch.equal(state["global_relation"], g)
    fresh = _clients(fed)[0]
    fresh.load_state_dict(state)
    assert fresh.own_relations
    assert torch.equal(fresh.global_model.relation_embedding.weight, g)
    assert torch.equal(
        fresh.model.relation_embedding.weight, cl.model.relation_embedding.weight
    )
    fresh.load_state_dict(shared.state_dict())  # a shared-table state ties again
    assert not fresh.own_relations
    with pytest.raises(ValueError, match="global_relations"):
        FedLU(12, 8, init_range=1.0, global_relations="none")
    with pytest.raises(ValueError, match="global_relations"):
        _clients(fed, global_relations="none")
    with pytest.raises(ValueError, match="global_relations"):
        _fit_once(fed, **{GLOBAL_RELATION: "none"})
    params = FedLU(12, 8, init_range=1.0, global_relations="own").get_params()
    assert params["global_relations"] == "own"
    assert "global_relations" not in FedLU(12, 8, init_range=1.0).get_params()


def test_own_global_relations_resume_identically(tmp_path):
    fed = toy_federation()

    def run(**kw):
        strat = _gated(mu_distill=2.0, distill_wait=1, global_relations="own")
        clients = _clients(fed)
        return clients, run_simulation(
            strat, clients, num_rounds=4, eval_every=1, patience=0, progress=False, **kw
        )

    clients, full = run()
    assert all(cl.own_relations for cl in clients.values())
    run(checkpoint_dir=tmp_path, stop_after=2)
    resumed, rest = run(checkpoint_dir=tmp_path, resume=True)
    assert rest.test == full.test

    def after_resume(res):  # the rounds run after the stop, without timings
        return [(h["round"], h["train"], h["valid"]) for h in res.history[2:]]

    assert len(after_resume(full)) == 2
    assert after_resume(rest) == after_resume(full)
    for c, cl in clients.items():
        assert torch.equal(
            resumed[c].global_model.relation_embedding.weight,
            cl.global_model.relation_embedding.weight,
        )


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


def _gated(**kw):
    return FedLU(12, 8, init_range=1.0, distill_schedule="gated", **kw)


def _switches(strat):
    cfg = strat.train_config(1)
    return cfg[MU_LOCAL], cfg[MU_GLOBAL]


def test_always_schedule_distils_both_ways_from_round_one():
    strat = FedLU(12, 8, init_range=1.0, mu_distill=1.5)
    assert _switches(strat) == (1.5, 1.5)
    strat.on_validation(5, {"mrr": 0.1, "global_mrr": 0.1})
    assert _switches(strat) == (1.5, 1.5)


def test_gated_schedule_follows_fedlu_code_rules():
    # FedLU's pipeline(): no distillation until a direction is switched on
    s = _gated(mu_distill=2.0, distill_wait=20)
    assert _switches(s) == (0.0, 0.0)
    s.on_validation(5, {"mrr": 0.20, "global_mrr": 0.15})  # both improve
    assert _switches(s) == (0.0, 0.0)
    # a small gain is no plateau before the wait is over
    s.on_validation(10, {"mrr": 0.2005, "global_mrr": 0.1505})
    assert _switches(s) == (0.0, 0.0)
    assert (s.best_local, s.best_global) == (0.2005, 0.1505)
    # local improves, global does not: the local model distils from the global
    s.on_validation(15, {"mrr": 0.25, "global_mrr": 0.15})
    assert _switches(s) == (2.0, 0.0) and s.best_local == 0.25
    # after the wait, a plateau (gain <= tol) turns on local -> global only
    s2 = _gated(mu_distill=2.0, distill_wait=20)
    s2.on_validation(25, {"mrr": 0.20, "global_mrr": 0.15})
    s2.on_validation(30, {"mrr": 0.2005, "global_mrr": 0.1600})
    assert _switches(s2) == (0.0, 2.0)
    # global improves, local does not: local -> global
    s3 = _gated()
    s3.on_validation(5, {"mrr": 0.2, "global_mrr": 0.1})
    s3.on_validation(10, {"mrr": 0.19, "global_mrr": 0.12})
    assert _switches(s3) == (0.0, 2.0) and s3.best_global == 0.12
    # neither improves: both, for good
    s4 = _gated()
    s4.on_validation(5, {"mrr": 0.2, "global_mrr": 0.1})
    s4.on_validation(10, {"mrr": 0.2, "global_mrr": 0.1})
    assert _switches(s4) == (2.0, 2.0)
    s4.on_validation(15, {"mrr": 0.3, "global_mrr": 0.3})
    assert _switches(s4) == (2.0, 2.0)


def test_gated_schedule_tells_the_runtime_when_only_the_global_model_improved():
    # FedLU's code counts a validation as bad only when neither model improved
    s = _gated()
    assert s.on_validation(5, {"mrr": 0.2, "global_mrr": 0.1}) is False  # both
    assert s.on_validation(10, {"mrr": 0.19, "global_mrr": 0.12}) is True  # global
    assert s.on_validation(15, {"mrr": 0.21, "global_mrr": 0.11}) is False  # local
    assert s.on_validation(20, {"mrr": 0.21, "global_mrr": 0.12}) is False  # neither
    # the paper's schedule leaves early stopping to the runtime's monitor
    always = FedLU(12, 8, init_range=1.0)
    assert always.on_validation(5, {"mrr": 0.1, "global_mrr": 0.2}) is False


def test_gated_schedule_state_round_trips():
    s = _gated(mu_distill=2.0)
    s.on_validation(5, {"mrr": 0.2, "global_mrr": 0.1})
    s.on_validation(10, {"mrr": 0.25, "global_mrr": 0.1})
    t = _gated(mu_distill=2.0)
    t.load_state_dict(s.state_dict())
    assert _switches(t) == _switches(s) == (2.0, 0.0)
    assert (t.best_local, t.best_global) == (0.25, 0.1)


def test_schedule_arguments_are_checked():
    with pytest.raises(ValueError, match="distill_schedule"):
        FedLU(12, 8, init_range=1.0, distill_schedule="sometimes")
    with pytest.raises(ValueError, match="distill_wait"):
        FedLU(12, 8, init_range=1.0, distill_schedule="gated", distill_wait=-1)


def test_client_distils_only_the_directions_it_is_sent():
    # mu_local = 0: the local update ignores the global table (as mu = 0);
    # the global update still depends on the local model through mu_global
    fed = toy_federation()
    outs = [
        _fit_once(fed, init_range=r, **{MU_LOCAL: 0.0, LOCAL_INIT: "own"})[0]
        .table.detach()
        .clone()
        for r in (1.0, 5.0)
    ]
    assert torch.allclose(outs[0], outs[1])
    glob = [
        _fit_once(fed, **{MU_LOCAL: 0.0, MU_GLOBAL: m})[1].arrays["entity"]
        for m in (0.0, 2.0)
    ]
    assert not torch.allclose(glob[0], glob[1])


@pytest.mark.parametrize("how", ["own", "global"])
def test_gated_federation_switches_and_resumes_identically(tmp_path, how):
    # a federation that stalls on a tiny graph: the gated schedule switches
    # distillation on mid-run, and a run resumed from round 2 ends identical
    # (with local_init="global", only if the resumed clients know that their
    # local tables were started: else round 3 would overwrite them)
    fed = toy_federation()

    def run(**kw):
        strat = _gated(mu_distill=2.0, distill_wait=1, local_init=how)
        return strat, run_simulation(
            strat,
            _clients(fed),
            num_rounds=4,
            eval_every=1,
            patience=0,
            progress=False,
            **kw,
        )

    strat, full = run()
    # each round's training metrics say which directions it distilled
    used = [(h["train"]["mu_local"], h["train"]["mu_global"]) for h in full.history]
    assert used[0] == (0.0, 0.0)
    if how == "own":
        assert strat.local_to_global  # switched on by the plateau rule (wait 1)
        assert any(u[1] == 2.0 for u in used[1:])  # local -> global switched on
    _, part = run(checkpoint_dir=tmp_path, stop_after=2)
    _, rest = run(checkpoint_dir=tmp_path, resume=True)
    assert rest.test == full.test

    def after_resume(res):  # the validations of the rounds run after the stop
        return [(h["round"], h["valid"]) for h in res.history if h["round"] > 2]

    assert len(after_resume(full)) == 2
    assert after_resume(rest) == after_resume(full)
