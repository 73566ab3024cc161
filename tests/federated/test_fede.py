r"""FedE / FedProx / FedEC on a hand-made 2-client federation."""

import numpy as np
import pytest
import torch
from fedlu_toy import toy_federation

from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.data.shard import KGShard
from fedgraph.federated import FedE, FedEC, FedEProx, Payload
from fedgraph.federated.kge.client import KGEClient
from fedgraph.federated.kge.fedec import contrastive_direction, contrastive_term
from fedgraph.federated.kge.fedprox import proximal_term
from fedgraph.federated.kge.setup import KGESettings, build_kge_federation, check_extra
from fedgraph.models.kge import TransE
from fedgraph.models.losses import KGELoss
from fedgraph.runtime import run_simulation

NUM_GLOBAL = 5
DIM = 4
LR = 0.01


class PositiveOnly(KGELoss):
    r"""``-log σ(s⁺)``: negatives play no part, so one Adam step is
    hand-computable (step = −lr·sign(grad) on the rows of the triple)."""

    def __call__(self, pos, neg, weight=None):
        return -torch.nn.functional.logsigmoid(pos).mean()


def _shard(cid, global_ids, triples, num_rel=1):
    t = torch.tensor(triples)
    g = KnowledgeGraph(
        {"train": t, "valid": t, "test": t},
        num_entities=len(global_ids),
        num_relations=num_rel,
    )
    return KGShard(cid, g, torch.tensor(global_ids), torch.arange(num_rel) + cid)


def _toy(loss="sigmoid-ns", **kw):
    # client 0 holds global {0, 1, 2}, client 1 holds {1, 3, 4}; entity 1 is shared
    shards = [
        _shard(0, [0, 1, 2], [[0, 0, 1], [1, 0, 2]]),
        _shard(1, [1, 3, 4], [[0, 0, 1], [2, 0, 0]]),
    ]
    clients = {}
    for s in shards:
        torch.manual_seed(10 + s.client_id)
        model = TransE(s.num_entities, s.num_relations, DIM, gamma=2.0)
        clients[s.client_id] = KGEClient(
            s,
            model,
            loss=loss,
            lr=LR,
            batch_size=8,
            num_negatives=2,
            local_epochs=1,
            **kw,
        )
    return shards, clients


def test_fede_one_local_step_matches_hand_computation():
    shards = [_shard(0, [0, 1, 2], [[0, 0, 1]]), _shard(1, [1, 3, 4], [[0, 0, 2]])]
    clients, rels = {}, {}
    for s in shards:
        torch.manual_seed(10 + s.client_id)
        model = TransE(s.num_entities, 1, DIM, gamma=2.0)
        rels[s.client_id] = model.relation_embedding.weight.detach().numpy().copy()
        clients[s.client_id] = KGEClient(
            s,
            model,
            loss=PositiveOnly(),
            lr=LR,
            batch_size=8,
            num_negatives=1,
            local_epochs=1,
            modes=("tail-batch",),
            subsampling=False,
        )
    strategy = FedE(NUM_GLOBAL, DIM, init_range=1.0, seed=3)
    e0 = strategy.table.numpy().copy()
    run_simulation(
        strategy, clients, num_rounds=1, eval_every=1, progress=False, test=False
    )

    # by hand: each client moves head and tail by lr * sign(h + r - t)
    sums, counts = np.zeros_like(e0), np.zeros(NUM_GLOBAL)
    for s in shards:
        gid = s.entity_ids.numpy()
        local = e0[gid].copy()
        h, r, t = s.graph.triples("train")[0].tolist()
        d = np.sign(local[h] + rels[s.client_id][r] - local[t])
        local[h] -= LR * d
        local[t] += LR * d
        sums[gid] += local
        counts[gid] += 1
    expected = sums / counts[:, None]
    np.testing.assert_allclose(strategy.table.numpy(), expected, atol=1e-6)
    # entity 1 is held by both: the plain mean of the two client rows
    assert counts[1] == 2


def test_comm_ledger_equals_sizes_of_payloads_sent():
    shards, clients = _toy()
    sent = []

    class Spy(FedE):
        def configure_train(self, server_round, client_ids):
            out = super().configure_train(server_round, client_ids)
            sent.extend(("down", p) for p in out.values())
            return out

        def aggregate_train(self, server_round, replies):
            sent.extend(("up", p) for p in replies.values())
            return super().aggregate_train(server_round, replies)

    res = run_simulation(
        Spy(NUM_GLOBAL, DIM, init_range=1.0),
        clients,
        num_rounds=2,
        eval_every=10,
        progress=False,
        test=False,
    )
    per_round = res.comm_per_round
    for d in ("up", "down"):
        train_params = sum(p.num_params() for dd, p in sent if dd == d)
        train_bytes = sum(p.num_bytes() for dd, p in sent if dd == d)
        assert per_round[1][f"params_{d}"] + per_round[2][f"params_{d}"] == train_params
        train_eval = per_round[1][f"bytes_{d}"] + per_round[2][f"bytes_{d}"]
        if d == "down":
            assert train_eval >= train_bytes  # round 2 also has the eval config
    # each entity row crosses once per holder per direction per round: 3 + 3 rows
    assert per_round[1]["params_down"] == 6 * DIM == per_round[1]["params_up"]
    # registrations: ids only, no parameters
    assert per_round[0]["params_up"] == 0 and per_round[0]["ids_up"] == 6


def test_server_never_receives_triples_relations_or_names():
    shards, clients = _toy()
    received = []

    class Audit(FedE):
        def register(self, registrations):
            received.extend(registrations.values())
            super().register(registrations)

        def aggregate_train(self, server_round, replies):
            received.extend(replies.values())
            super().aggregate_train(server_round, replies)

        def aggregate_evaluate(self, server_round, replies):
            received.extend(replies.values())
            return super().aggregate_evaluate(server_round, replies)

    strategy = Audit(NUM_GLOBAL, DIM, init_range=1.0)
    run_simulation(strategy, clients, num_rounds=2, eval_every=1, progress=False)
    rel_tables = [c.model.relation_embedding.weight.detach() for c in clients.values()]
    for p in received:
        assert set(p.arrays) <= {"entity"} and set(p.row_ids) <= {"entity"}
        for a in p.arrays.values():
            assert a.size(-1) == DIM and a.dtype.is_floating_point
            for rt in rel_tables:  # no relation row is ever sent
                assert not any(torch.equal(row, rr) for row in a for rr in rt)
        assert all(isinstance(v, int | float) for v in p.metrics.values())
        assert all(not k.startswith("rel") for k in p.metrics)
    # what the server keeps: only the entity table and the registered id maps
    assert set(strategy.state_dict()) == {"table", "client_entities"}


def test_proximal_and_contrastive_terms_by_hand():
    e = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    g = torch.tensor([[1.0, 1.0], [0.0, 1.0]])
    assert proximal_term(e, g, 0.1).item() == pytest.approx(0.5 * 0.1 * (1 + 1))
    # FedLU's `--mu_single_entity` intent: the mean over the 2 rows
    mean = proximal_term(e, g, 0.1, "entity-mean").item()
    assert mean == pytest.approx(0.5 * 0.1 * (1 + 1) / 2)
    with pytest.raises(ValueError, match="`reduction` must be one of"):
        proximal_term(e, g, 0.1, "mean")
    prev = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    s_g = (1 / np.sqrt(2) + 1.0) / 2 / 0.2
    s_l = (0.0 + 0.0) / 2 / 0.2
    ref = -0.3 * np.log(np.exp(s_g) / (np.exp(s_g) + np.exp(s_l)))
    assert contrastive_term(e, g, prev, 0.3, 0.2).item() == pytest.approx(ref, rel=1e-6)
    with pytest.raises(ValueError, match="`direction`"):
        contrastive_term(e, g, None, 0.3, 0.2)


def _two_cosines(table, positive, negative, mu, tau):
    s_g = torch.nn.functional.cosine_similarity(table, positive, dim=-1).mean()
    s_l = torch.nn.functional.cosine_similarity(table, negative, dim=-1).mean()
    return mu * torch.nn.functional.softplus((s_l - s_g) / tau)


def test_contrastive_term_gradient_is_the_two_cosine_gradient():
    gen = torch.Generator().manual_seed(0)
    w = torch.randn(40, 8, generator=gen, dtype=torch.float64)
    w[3] = 0.0  # a zero row: cosine_similarity's clamp, no NaN
    pos = w + 0.1 * torch.randn(40, 8, generator=gen, dtype=torch.float64)
    neg = w + 0.1 * torch.randn(40, 8, generator=gen, dtype=torch.float64)
    d = contrastive_direction(pos, neg)
    # the hand-written backward against finite differences
    w_live = w.clone()
    w_live[3] = 1.0
    assert torch.autograd.gradcheck(
        lambda t: contrastive_term(t, None, None, 0.3, 0.2, direction=d),
        (w_live.requires_grad_(),),
    )
    # value and gradient equal the two-cosine definition, zero row included
    a = w.clone().requires_grad_()
    b = w.clone().requires_grad_()
    fast = contrastive_term(a, pos, neg, 0.3, 0.2)
    ref = _two_cosines(b, pos, neg, 0.3, 0.2)
    fast.backward()
    ref.backward()
    assert fast.item() == pytest.approx(ref.item(), rel=1e-12)
    torch.testing.assert_close(a.grad, b.grad, rtol=1e-9, atol=1e-15)
    assert torch.isfinite(a.grad).all()
    # float32, the tables a round apart: closer to float64 than two cosines
    w32 = (0.05 * torch.randn(500, 64, generator=gen)).requires_grad_()
    p32 = w32.detach() + 1e-4 * torch.randn(500, 64, generator=gen)
    n32 = w32.detach() + 1e-4 * torch.randn(500, 64, generator=gen)
    exact = _two_cosines(w32.detach().double(), p32.double(), n32.double(), 0.3, 0.2)
    err_fast = abs(contrastive_term(w32, p32, n32, 0.3, 0.2).item() - exact.item())
    err_ref = abs(_two_cosines(w32, p32, n32, 0.3, 0.2).item() - exact.item())
    assert err_fast < 1e-7 and err_fast <= err_ref


@pytest.mark.parametrize(
    "cls,key", [(FedEProx, "proximal-mu"), (FedEC, "contrastive-mu")]
)
def test_regularised_strategies_send_their_config(cls, key):
    p = cls(NUM_GLOBAL, DIM, init_range=1.0)
    p.register({0: Payload(row_ids={"entity": torch.tensor([0, 2])})})
    cfg = p.configure_train(1, [0])[0].config
    assert cfg[key] > 0
    if cls is FedEC:
        assert cfg["contrastive-tau"] == 0.2 and cfg["contrastive-mu"] == 0.3
    else:
        assert cfg["proximal-reduction"] == "sum"


def test_proximal_reduction_reaches_the_clients_and_is_checked():
    fed = toy_federation()
    s = KGESettings(dim=4, extra={"proximal_reduction": "entity-mean"})
    strategy, clients = build_kge_federation("fedprox", fed, s)
    strategy.register({c: cl.register() for c, cl in clients.items()})
    cfg = strategy.configure_train(1, [0])[0].config
    assert cfg["proximal-reduction"] == "entity-mean"
    with pytest.raises(ValueError, match="`proximal_reduction` must be one of"):
        FedEProx(NUM_GLOBAL, DIM, init_range=1.0, proximal_reduction="mean")
    with pytest.raises(ValueError, match="fede has no setting 'proximal_reduction'"):
        check_extra({"proximal_reduction": "sum"}, "fede")


def test_proximal_term_keeps_clients_near_the_global_table():
    drift = {}
    for mu in (0.0, 100.0):
        _, clients = _toy()
        if mu:
            strategy = FedEProx(NUM_GLOBAL, DIM, init_range=1.0, proximal_mu=mu)
        else:
            strategy = FedE(NUM_GLOBAL, DIM, init_range=1.0)
        strategy.register({c: cl.register() for c, cl in clients.items()})
        drift[mu] = 0.0
        for c, p in strategy.configure_train(1, [0, 1]).items():
            clients[c].lr, clients[c].local_epochs = 0.05, 6
            reply = clients[c].fit(p.detach())
            drift[mu] += float((reply.arrays["entity"] - p.arrays["entity"]).norm())
    assert drift[100.0] < 0.5 * drift[0.0]


def test_fede_resume_is_exact(tmp_path):
    def run(ckpt, stop_after=None, resume=False):
        _, clients = _toy()
        strategy = FedEC(NUM_GLOBAL, DIM, init_range=1.0)
        res = run_simulation(
            strategy,
            clients,
            num_rounds=4,
            eval_every=2,
            patience=5,
            checkpoint_dir=ckpt,
            resume=resume,
            stop_after=stop_after,
            progress=False,
        )
        return res, strategy

    ref, s_ref = run(tmp_path / "a")
    run(tmp_path / "b", stop_after=3)
    res, s = run(tmp_path / "b", resume=True)
    assert torch.equal(s.table, s_ref.table)
    assert res.test == ref.test and res.test_clients == ref.test_clients
    assert 0 < ref.test["mrr"] <= 1 and ref.test["n_queries"] == 8


def test_evaluate_with_global_scores_the_server_rows_and_restores_the_client():
    _, clients = _toy()
    strategy = FedE(NUM_GLOBAL, DIM, init_range=1.0, evaluate_with="global")
    strategy.register({c: cl.register() for c, cl in clients.items()})
    own = clients[0].table.detach().clone()
    payloads = strategy.configure_evaluate(1, [0, 1], "test")
    assert payloads[0].num_params() == 3 * DIM and payloads[0].config["split"] == "test"
    m_global = strategy.client_metrics(clients[0].evaluate(payloads[0]))
    assert torch.equal(clients[0].table.detach(), own)  # local table untouched
    # the same as scoring with the global rows copied in
    with torch.no_grad():
        clients[0].table.copy_(
            strategy.table[torch.tensor([0, 1, 2])]
        )  # client 0's ids
    local = FedE(NUM_GLOBAL, DIM, init_range=1.0).configure_evaluate(1, [0], "test")[0]
    assert local.num_params() == 0
    assert strategy.client_metrics(clients[0].evaluate(local)) == m_global
