r"""DP on uploads, keyed-hash alignment and secure aggregation on a toy
federation (and SecAgg on UMLS)."""

import hashlib

import pytest
import torch
from privacy_toy import build, toy_federation

from fedgraph.federated.kge.fede import ENTITY
from fedgraph.privacy.alignment import KeyedHashClient, KeyedHashStrategy, entity_tokens
from fedgraph.privacy.dp import DPUploadClient, clip_and_noise
from fedgraph.privacy.secagg import (
    SecAggClient,
    SecAggStrategy,
    neighbours,
    quantise,
)
from fedgraph.privacy.secagg_masks import MASKED, MODULUS
from fedgraph.privacy.setup import PrivacySettings, apply_privacy
from fedgraph.privacy.wrap import innermost
from fedgraph.runtime import run_simulation


def _run(strategy, clients, rounds=2):
    return run_simulation(
        strategy, clients, num_rounds=rounds, eval_every=1, patience=0, progress=False
    )


class Spy:
    r"""Wraps a strategy and keeps every payload the server receives."""

    def __init__(self, inner):
        from fedgraph.privacy.wrap import StrategyWrapper

        class _Spy(StrategyWrapper):
            received: list = []

            def register(self, regs):
                _Spy.received.extend(regs.values())
                super().register(regs)

            def aggregate_train(self, rnd, replies):
                _Spy.received.extend(replies.values())
                super().aggregate_train(rnd, replies)

            def aggregate_evaluate(self, rnd, replies):
                _Spy.received.extend(replies.values())
                return super().aggregate_evaluate(rnd, replies)

        _Spy.received = []
        self.strategy = _Spy(inner)
        self.received = _Spy.received


# ---------------------------------------------------------------- DP
def test_clip_and_noise_clips_to_c_and_is_seeded():
    update = {"entity": torch.full((4, 5), 1.0)}  # norm sqrt(20)
    out, norm = clip_and_noise(update, 0.5, 1e-12, torch.Generator().manual_seed(0))
    assert norm == pytest.approx(20**0.5)
    assert out["entity"].norm().item() == pytest.approx(0.5, rel=1e-6)
    a, _ = clip_and_noise(update, 0.5, 2.0, torch.Generator().manual_seed(3))
    b, _ = clip_and_noise(update, 0.5, 2.0, torch.Generator().manual_seed(3))
    assert torch.equal(a["entity"], b["entity"])
    # the noise has std sigma * C = 1
    big = {"entity": torch.zeros(200, 100)}
    n, _ = clip_and_noise(big, 0.5, 2.0, torch.Generator().manual_seed(0))
    assert n["entity"].std().item() == pytest.approx(1.0, rel=0.02)


# noise 1e-9 gives no privacy: Opacus' RDP bound is then at its smallest order
@pytest.mark.filterwarnings("ignore:Optimal order is the smallest alpha")
def test_dp_client_uploads_received_rows_plus_clipped_update_plus_noise():
    fed = toy_federation()
    strategy, clients = build(fed)
    inner = clients[0]
    strategy.register({c: cl.register() for c, cl in clients.items()})
    payload = strategy.configure_train(1, [0])[0]
    dp = DPUploadClient(inner, clip=0.1, noise_multiplier=1e-9, seed=0)
    reply = dp.fit(payload)
    delta = reply.arrays[ENTITY] - payload.arrays[ENTITY]
    assert delta.norm().item() <= 0.1 + 1e-5
    assert dp.uploads == 1
    spent = dp.privacy_spent(1e-5)
    assert spent["epsilon"] > 0 and spent["uploads"] == 1


def test_dp_run_reports_epsilon_per_client(tmp_path):
    fed = toy_federation()
    strategy, clients = build(fed)
    s = PrivacySettings(dp_epsilon=4.0, dp_delta=1e-5, dp_clip=1.0)
    strategy, clients = apply_privacy(strategy, clients, s, rounds=3, run_dir=tmp_path)
    _run(strategy, clients, rounds=3)
    from fedgraph.privacy.setup import privacy_report

    rep = privacy_report(clients, s)
    for c in ("0", "1", "2"):  # calibrated for 3 uploads, all done
        assert rep["dp"][c]["uploads"] == 3
        assert rep["dp"][c]["epsilon"] == pytest.approx(4.0, rel=1e-6)


# ---------------------------------------------------------- alignment
def test_private_alignment_server_sees_no_name_and_no_global_id():
    fed = toy_federation()
    secret = b"federation secret"
    strategy, clients = build(fed)
    names = fed.entity_names
    spy = Spy(KeyedHashStrategy(strategy))
    wrapped = {c: KeyedHashClient(cl, secret, names) for c, cl in clients.items()}
    res = _run(spy.strategy, wrapped)
    ids = [p.row_ids[ENTITY] for p in spy.received if ENTITY in p.row_ids]
    assert len(ids) == 3 + 3 * 2  # registrations + 2 rounds of uploads
    received = torch.cat(ids)
    # no raw global id (they are 0..14) and only 63-bit keyed tokens
    assert int(received.min()) > 2**40
    # nothing textual: payload configs and metrics carry no entity name
    for p in spy.received:
        for v in list(p.config.values()) + list(p.metrics.values()):
            assert not any(n in str(v) for n in names)
    # without the secret the tokens cannot be recomputed from the names ...
    unkeyed = torch.tensor(
        [
            int.from_bytes(hashlib.sha256(n.encode()).digest()[:8], "big") >> 1
            for n in names
        ]
    )
    assert not torch.isin(received, unkeyed).any()
    assert not torch.isin(received, entity_tokens(names, b"another secret")).any()
    # ... and with it they are exactly the names' HMACs
    assert torch.isin(received, entity_tokens(names, secret)).all()
    # the server's rows are ranks of the tokens, not a copy of the global order
    assert spy.strategy.tokens.numel() == 15
    # alignment is lossless: plain FedE whose initial row of entity e is the
    # aligned server's row of e's token (the rank of the token) runs the same
    s2, c2 = build(toy_federation())
    rank = torch.argsort(torch.argsort(entity_tokens(names, secret)))
    s2.table = s2.table[rank].clone()
    plain = _run(s2, c2)
    assert res.test["mrr"] == pytest.approx(plain.test["mrr"], abs=1e-6)


# ------------------------------------------------------------- SecAgg
def test_neighbours_ring_graph():
    assert neighbours([4, 1, 2]) == {1: [2, 4], 2: [1, 4], 4: [1, 2]}
    g = neighbours(range(8), 2)
    assert g[0] == [1, 7] and all(len(v) == 2 for v in g.values())
    assert all(c in g[d] for c in g for d in g[c])  # symmetric


def test_quantise_rounds_to_the_nearest_step():
    x = torch.tensor([-9.0, -8.0, 0.0, 8.0, 1e-7])
    q = quantise(x, 8.0, 16)  # step 1
    assert q.tolist() == [0, 0, 8, 16, 8]


def test_secagg_equals_fede_within_the_quantisation_step():
    fed = toy_federation()
    s1, c1 = build(fed)
    spy = Spy(SecAggStrategy(s1, clip_range=8.0, levels=2**24))
    sc = {c: SecAggClient(cl, fed.num_entities, 8.0, 2**24) for c, cl in c1.items()}
    s2, c2 = build(toy_federation())
    # one round by hand: the same uploads, plain mean vs unmasked sum
    spy.strategy.register({c: cl.register() for c, cl in sc.items()})
    s2.register({c: cl.register() for c, cl in c2.items()})
    r1 = {
        c: sc[c].fit(p) for c, p in spy.strategy.configure_train(1, [0, 1, 2]).items()
    }
    r2 = {c: c2[c].fit(p) for c, p in s2.configure_train(1, [0, 1, 2]).items()}
    spy.strategy.aggregate_train(1, r1)
    s2.aggregate_train(1, r2)
    step = 16.0 / 2**24
    assert (s1.table - s2.table).abs().max().item() <= step / 2 + 1e-7
    assert torch.equal(spy.strategy.last_counts[:3], torch.tensor([1, 1, 1]))
    assert int(spy.strategy.last_counts[7]) == 3
    # what the server received: no ids, and masked vectors that look uniform
    for p in r1.values():
        assert not p.row_ids and set(p.arrays) == {MASKED}
        # a plain quantised entry is at most 2**24; a masked one is uniform
        # in [0, 2**32), below 2**26 with probability 1/64
        assert (p.arrays[MASKED] >= 2**26).double().mean() > 0.8
        assert int(p.arrays[MASKED].max()) < MODULUS


def test_secagg_run_matches_fede_validation_curve():
    fed = toy_federation()
    s, c = build(fed)
    s = SecAggStrategy(s)
    c = {k: SecAggClient(v, fed.num_entities) for k, v in c.items()}
    a = _run(s, c, rounds=3)
    s2, c2 = build(toy_federation())
    b = _run(s2, c2, rounds=3)
    for ha, hb in zip(a.history, b.history, strict=True):
        assert ha["valid"]["mrr"] == pytest.approx(hb["valid"]["mrr"], abs=1e-3)
    assert isinstance(innermost(s), type(innermost(s2)))


def test_secagg_refuses_weighted_aggregation():
    fed = toy_federation()
    s, _ = build(fed, "fede")

    class Weighted(type(s)):
        def aggregation_weights(self, replies):
            return [1.0] * len(replies)

    s.__class__ = Weighted
    with pytest.raises(ValueError, match="plain"):
        SecAggStrategy(s)


@pytest.mark.dataset
def test_secagg_fede_equals_fede_validation_curve_on_umls():
    from fedgraph.data import load_dataset
    from fedgraph.federated.kge.setup import KGESettings, build_kge_federation
    from fedgraph.partition import resolve_partitioner

    def umls_r3():
        return resolve_partitioner("relation", 3, seed=0)(load_dataset("umls"))

    settings = KGESettings(
        dim=32, lr=0.001, batch_size=512, num_negatives=32, local_epochs=1
    )
    curves = []
    for secure in (False, True):
        fed = umls_r3()
        s, c = build_kge_federation("fede", fed, settings)
        if secure:
            s = SecAggStrategy(s)
            c = {k: SecAggClient(v, fed.num_entities) for k, v in c.items()}
        res = run_simulation(
            s, c, num_rounds=3, eval_every=1, patience=0, progress=False, test=False
        )
        curves.append([h["valid"]["mrr"] for h in res.history])
    # 2^24 levels on [-8, 8]: each aggregated coordinate within 4.8e-7 of FedE's
    assert curves[1] == pytest.approx(curves[0], abs=1e-4)


def test_secagg_keeps_a_server_optimisers_step():
    # FedAdam's server step runs on the unmasked mean (its server_update hook)
    tables = {}
    for secure in (False, True):
        fed = toy_federation()
        s, c = build(fed, "fedadam")
        if secure:
            s = SecAggStrategy(s)
            c = {k: SecAggClient(v, fed.num_entities) for k, v in c.items()}
        run_simulation(
            s, c, num_rounds=2, eval_every=2, patience=0, progress=False, test=False
        )
        tables[secure] = s.table.clone()
    assert (tables[True] - tables[False]).abs().max() < 1e-5
