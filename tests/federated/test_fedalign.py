r"""FedAlign's OT term and -L penalty against direct computations, and the
FedAlign / RGCN client protocol on a toy federation."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.optimize import linear_sum_assignment

from fedgraph.data.rdf_graph import RDFGraph
from fedgraph.federated.fedavg import FedAvg
from fedgraph.federated.payload import Payload
from fedgraph.federated.rgcn.client import RGCNClient
from fedgraph.federated.rgcn.fedalign import FedAlign, SyncOnEvaluate
from fedgraph.federated.rgcn.lipschitz import gradient_penalty
from fedgraph.federated.rgcn.ot import alignment_term, basis_ot
from fedgraph.federated.rgcn.terms import LipschitzTerm, split_peers
from fedgraph.federated.separated import Separated
from fedgraph.partition.rdf_shard import RDFShard
from fedgraph.partition.rdf_type import RDFTypePartitioner


def exact_ot(x: torch.Tensor, y: torch.Tensor) -> float:
    # Uniform, equal-size point clouds: OT is an assignment problem.
    cost = 0.5 * torch.cdist(x, y) ** 2
    r, c = linear_sum_assignment(cost.numpy())
    return float(cost[r, c].mean())


def test_ot_matches_exact_assignment():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(6, 2, 2, generator=g, dtype=torch.float64)
    y = torch.randn(6, 2, 2, generator=g, dtype=torch.float64) + 1.0
    got = float(basis_ot(x, y, blur=1e-3, scaling=0.95))
    want = exact_ot(x.view(6, -1), y.view(6, -1))
    assert got == pytest.approx(want, rel=1e-2)
    # Permuting the bases changes nothing; identical sets are at distance 0.
    perm = torch.randperm(6, generator=g)
    assert float(basis_ot(x[perm], y, blur=1e-3, scaling=0.95)) == pytest.approx(
        got, rel=1e-6
    )
    assert abs(float(basis_ot(x, x[perm], blur=1e-3))) < 1e-6


def test_alignment_term_is_mean_over_peers_of_layer_sums():
    g = torch.Generator().manual_seed(1)
    mine = {"a": torch.randn(4, 3, generator=g), "b": torch.randn(4, 2, generator=g)}
    peers = [{k: torch.randn_like(v) for k, v in mine.items()} for _ in range(3)]
    want = sum(basis_ot(mine[k], p[k]) for p in peers for k in mine) / 3
    # The batched call anneals epsilon from the diameter of the whole batch, so
    # it agrees with pair-by-pair calls up to Sinkhorn's tolerance.
    torch.testing.assert_close(alignment_term(mine, peers), want, rtol=1e-2, atol=1e-3)
    with pytest.raises(ValueError, match="peers"):
        alignment_term(mine, [])


def test_gradient_penalty_vs_autograd_on_toy_model():
    # F(x) = sum(w * x^2): grad_x F = 2 w x, so the penalty is (||2 w x|| - 1)^2
    # and its gradient wrt w follows by hand: 2 (n - 1) * (4 w x^2) / n.
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    w = torch.tensor([0.3, 0.2, -0.1], requires_grad=True)
    loss = (w * x**2).sum()
    gp = gradient_penalty(loss, x)
    n = torch.linalg.norm(2 * w.detach() * x.detach())
    assert gp.detach().item() == pytest.approx(float((n - 1) ** 2))
    (gw,) = torch.autograd.grad(gp, w)
    want = 2 * (n - 1) * (4 * w.detach() * x.detach() ** 2) / n
    torch.testing.assert_close(gw, want)
    with pytest.raises(ValueError, match="requires_grad"):
        gradient_penalty(loss, torch.ones(3))


def toy_graph() -> RDFGraph:
    n = 24
    src = torch.arange(n)
    dst = (src * 7 + 3) % n
    edge_index = torch.stack([src, dst])
    edge_type = src % 3
    node_type = torch.tensor([0] * 8 + [1] * 8 + [2] * 8)
    y = torch.full((n,), -1)
    y[:8] = torch.arange(8) % 2
    train = torch.zeros(n, dtype=torch.bool)
    train[:6] = True
    test = torch.zeros(n, dtype=torch.bool)
    test[6:8] = True
    return RDFGraph(
        edge_index,
        edge_type,
        node_type,
        y,
        {"train_mask": train, "test_mask": test},
        [f"<n{i:02d}>" for i in range(n)],
        ["r0", "r1", "r2"],
        ["p", "q", "s"],
        ["a", "b"],
        name="toy",
    )


def make_clients(num_bases=4):
    g = toy_graph()
    fed = RDFTypePartitioner(3, num_types=2, seed=0)(g)
    return g, {
        s.client_id: RGCNClient(
            s,
            num_relations=3,
            num_classes=2,
            hidden_channels=4,
            num_bases=num_bases,
            seed=0,
        )
        for s in fed
    }


def test_fedalign_sends_peers_and_client_uses_them():
    g, clients = make_clients()
    init = clients[0].initial_arrays()
    strat = FedAlign(init, mu=10.0, config={"local-epochs": 2})
    p1 = strat.configure_train(1, [0, 1, 2])
    # round 1: the global bases stand in for the peers
    own, peers = split_peers(p1[0].arrays)
    assert set(own) == {"conv1.weight", "conv2.weight"} and len(peers) == 1
    assert p1[0].config["fedalign-mu"] == 10.0
    replies = {c: clients[c].fit(p) for c, p in p1.items()}
    assert all(r.num_examples == clients[c].shard.num_nodes for c, r in replies.items())
    strat.aggregate_train(1, replies)
    # FedAvg weighted by node count
    w = torch.tensor([float(r.num_examples) for r in replies.values()])
    want = (
        sum(
            wi * r.arrays["conv2.weight"]
            for wi, r in zip(w, replies.values(), strict=True)
        )
        / w.sum()
    )
    torch.testing.assert_close(strat.arrays["conv2.weight"], want)
    p2 = strat.configure_train(2, [0, 2])
    _, peers = split_peers(p2[0].arrays)
    assert len(peers) == 1 and torch.equal(
        peers[0]["conv1.weight"], replies[2].arrays["conv1.weight"]
    )
    r = clients[0].fit(p2[0])
    assert r.metrics["ot_sum"] > 0 and "prox_sum" not in r.metrics
    state = strat.state_dict()
    other = FedAlign(init, mu=10.0)
    other.load_state_dict(state)
    assert torch.equal(other.last[2]["conv1.weight"], strat.last[2]["conv1.weight"])


def test_separated_and_sync_on_evaluate():
    g, clients = make_clients()
    sp = Separated(config={"local-epochs": 1})
    r = clients[0].fit(sp.configure_train(1, [0])[0])
    assert r.arrays == {}  # SP shares nothing
    avg = SyncOnEvaluate(FedAvg(clients[0].initial_arrays()))
    ev = avg.configure_evaluate(1, [0, 1], "test")
    assert set(ev[0].arrays) == {"conv1.weight", "conv2.weight"}
    res = clients[1].evaluate(ev[1])
    assert res.metrics["count"] == 2 and 0 <= res.metrics["accuracy_sum"] <= 2
    assert torch.equal(clients[1].model.conv1.weight, avg.arrays["conv1.weight"])


def test_client_proximal_and_penalty_terms():
    g, clients = make_clients()
    c = clients[0]
    init = c.initial_arrays()
    r = c.fit(
        Payload(
            arrays=init,
            config={"local-epochs": 3, "proximal-mu": 1.0, "lipschitz-lambda": 10.0},
        )
    )
    assert r.metrics["count"] == 3 and "gp_sum" in r.metrics and "prox_sum" in r.metrics
    assert r.metrics["prox_sum"] > 0  # moved away from the global bases
    state = c.state_dict()
    c.fit(Payload(arrays=init, config={"local-epochs": 1}))
    c.load_state_dict(state)
    torch.testing.assert_close(c.model.conv1.weight, r.arrays["conv1.weight"])
    with pytest.raises(ValueError, match="split"):
        c.evaluate(Payload(config={"split": "dev"}))
    assert isinstance(c.shard, RDFShard) and np.isfinite(r.metrics["task_sum"])


def _value(t):
    """A scalar tensor's value, without converting a graph node to a Python scalar."""
    return t.detach().item()


def test_one_sided_penalty_ignores_small_gradients():
    x = torch.tensor([0.1, 0.2], requires_grad=True)
    small = (0.5 * x**2).sum()  # grad = x, norm < 1
    assert _value(gradient_penalty(small, x, one_sided=True)) == 0.0
    assert _value(gradient_penalty(small, x)) > 0.5
    big = (3.0 * x).sum()  # grad = (3, 3), norm 3 sqrt(2)
    want = (3 * 2**0.5 - 1) ** 2
    assert _value(gradient_penalty(big, x, one_sided=True)) == pytest.approx(
        want, rel=1e-5
    )


@pytest.mark.parametrize("clip", [1e-3, 1e6])
def test_penalty_gradient_is_clipped_to_norm(clip):
    # grad = grad(task terms) + min(1, clip / ||grad(penalty)||) grad(penalty).
    g, clients = make_clients()
    c = clients[0]
    cfg = {"lipschitz-lambda": 10.0, "lipschitz-clip": clip}
    params = [p for p in c.model.parameters() if p.requires_grad]
    terms = c.loss_terms(cfg, {})
    assert [type(t) for t in terms] == [LipschitzTerm]
    loss, _, apart = c.local_loss(terms)
    penalty = apart[0][1]
    g_loss = torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)
    g_pen = torch.autograd.grad(penalty, params, allow_unused=True)
    zeros = [torch.zeros_like(p) for p in params]
    g_loss = [z if a is None else a for z, a in zip(zeros, g_loss, strict=True)]
    g_pen = [z if a is None else a for z, a in zip(zeros, g_pen, strict=True)]
    norm = float(torch.sqrt(sum((a**2).sum() for a in g_pen)))
    assert norm > 1e-3  # the toy penalty is active: the small clip binds
    scale = min(1.0, clip / norm)
    c.model.zero_grad()
    loss, _, apart = c.local_loss(terms)
    norms = c._backward(loss, apart)
    assert norms == {"gp_grad_norm": pytest.approx(norm, rel=1e-5)}
    for p, a, b in zip(params, g_loss, g_pen, strict=True):
        torch.testing.assert_close(p.grad, a + scale * b)
