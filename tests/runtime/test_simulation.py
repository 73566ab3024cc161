r"""The round loop on a toy federation: linear regression clients under
FedAvg / FedProx (hand-checkable, fast), sampling, early stopping, comm
ledger and resume determinism."""

import json
import random
import shutil
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest
import torch

from fedgraph.federated import Client, FedAvg, FedProx, Payload
from fedgraph.federated.payload import PayloadError
from fedgraph.runtime import (
    InProcessTransport,
    LoopState,
    run_federation,
    run_simulation,
    sample_clients,
)

#: ``last.pt``/``best.pt`` written after round 3 of :func:`_resumable_run` by
#: ``run_simulation`` as it was before it ran on the shared round loop
#: (commit f091737), with the global RNGs seeded by :func:`_seed_globals`.
LEGACY_CHECKPOINT = Path(__file__).parent / "checkpoint_f091737"


class ToyClient(Client):
    r"""Least squares on private data; SGD minibatches drawn from its own
    generator; "score" = −MSE (so higher is better), as a mergeable sum."""

    def __init__(self, cid: int, n: int = 32, d: int = 3, lr: float = 0.1):
        g = torch.Generator().manual_seed(100 + cid)
        self.x = {s: torch.randn(n, d, generator=g) for s in ("train", "valid", "test")}
        w_true = torch.ones(d) + 0.3 * cid
        self.y = {s: x @ w_true for s, x in self.x.items()}
        self.w = torch.zeros(d)
        self.gen = torch.Generator().manual_seed(cid)
        self.lr = lr
        self.fits = 0

    def fit(self, payload: Payload) -> Payload:
        self.fits += 1
        w0 = payload.arrays["w"]
        mu = float(payload.config.get("proximal-mu", 0.0))
        w = w0.clone().requires_grad_(True)
        opt = torch.optim.SGD([w], lr=self.lr)
        for idx in torch.randperm(32, generator=self.gen).split(8):
            loss = ((self.x["train"][idx] @ w - self.y["train"][idx]) ** 2).mean()
            loss = loss + mu / 2 * (w - w0).pow(2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        self.w = w.detach()
        return Payload(
            arrays={"w": self.w},
            num_examples=32,
            metrics={"count": 1, "loss_sum": float(loss.detach())},
        )

    def evaluate(self, payload: Payload) -> Payload:
        s = payload.config["split"]
        err = (self.x[s] @ self.w - self.y[s]) ** 2
        return Payload(metrics={"count": err.numel(), "score_sum": -float(err.sum())})

    def state_dict(self):
        return {"w": self.w.clone(), "gen": self.gen.get_state()}

    def load_state_dict(self, state: Mapping):
        self.w = state["w"].clone()
        self.gen.set_state(state["gen"])


def _fed(k=4):
    return {c: ToyClient(c) for c in range(k)}


def test_fedavg_round_is_the_weighted_mean_of_client_updates():
    clients = _fed(2)
    strategy = FedAvg({"w": torch.zeros(3)})
    run_simulation(
        strategy,
        clients,
        num_rounds=1,
        eval_every=1,
        monitor="score",
        progress=False,
        test=False,
    )
    expected = (clients[0].w + clients[1].w) / 2  # equal num_examples
    torch.testing.assert_close(strategy.arrays["w"], expected)


def test_sample_clients_is_seeded_and_sized():
    ids = list(range(10))
    a = sample_clients(ids, 0.3, server_round=4, seed=1)
    assert len(a) == 3 and a == sample_clients(ids, 0.3, 4, 1)
    assert a != sample_clients(ids, 0.3, 5, 1) or a != sample_clients(ids, 0.3, 6, 1)
    assert sample_clients(ids, 1.0, 1, 0) == ids
    with pytest.raises(ValueError, match="`fraction`"):
        sample_clients(ids, 0.0, 1, 0)


def test_fraction_limits_participants_and_comm_equals_payloads():
    clients = _fed(4)
    sent = []

    class Spy(FedAvg):
        def configure_train(self, server_round, client_ids):
            out = super().configure_train(server_round, client_ids)
            sent.extend(out.values())
            return out

    res = run_simulation(
        Spy({"w": torch.zeros(3)}),
        clients,
        num_rounds=3,
        fraction=0.5,
        eval_every=10,
        monitor="score",
        progress=False,
        test=False,
    )
    assert all(len(h["clients"]) == 2 for h in res.history)
    assert sum(c.fits for c in clients.values()) == 6
    assert res.comm["params_down"] == sum(p.num_params() for p in sent) == 6 * 3
    # uplink: 6 fit replies of 3 params; eval replies carry metrics only
    assert res.comm["params_up"] == 6 * 3
    assert res.comm["messages_up"] == 4 + 6 + 4  # registrations, fits, 1 eval pass


def test_fedprox_sends_mu_and_pulls_towards_global():
    far = {c: ToyClient(c, lr=0.3) for c in range(2)}
    near = {c: ToyClient(c, lr=0.3) for c in range(2)}
    run_simulation(
        FedAvg({"w": torch.zeros(3)}),
        far,
        num_rounds=1,
        monitor="score",
        progress=False,
        test=False,
    )
    with pytest.warns(UserWarning, match="proximal_mu=0.0"):
        FedProx({"w": torch.zeros(3)}, proximal_mu=0.0)
    prox = FedProx({"w": torch.zeros(3)}, proximal_mu=5.0)
    assert prox.configure_train(1, [0])[0].config["proximal-mu"] == 5.0
    run_simulation(
        prox, near, num_rounds=1, monitor="score", progress=False, test=False
    )
    for c in range(2):
        assert near[c].w.norm() < far[c].w.norm()


@pytest.mark.parametrize(
    "progress_rounds, last_round",
    [
        ((), 5),  # bad evaluations: rounds 3, 4, 5
        # the strategy reports progress of its own (FedLU's global model) at
        # rounds 3 and 4: those do not count; bad: rounds 5, 6, 7
        ((3, 4), 7),
    ],
)
def test_early_stopping_and_best_round(progress_rounds, last_round):
    class Bad(FedAvg):  # valid score gets worse after round 2
        def aggregate_evaluate(self, server_round, replies):
            return {"count": 1.0, "score": -abs(server_round - 2)}

        def on_validation(self, server_round, metrics):
            return server_round in progress_rounds

    res = run_simulation(
        Bad({"w": torch.zeros(3)}),
        _fed(2),
        num_rounds=50,
        eval_every=1,
        patience=3,
        monitor="score",
        progress=False,
    )
    assert res.best_round == 2 and res.rounds == last_round and res.stopped_early
    assert sorted(res.test_clients) == [0, 1]


def test_fedavg_takes_its_initial_arrays_from_the_lowest_registering_client():
    strat = FedAvg()
    regs = {
        2: Payload(arrays={"w": torch.full((3,), 2.0)}),
        0: Payload(),
        1: Payload(arrays={"w": torch.ones(3)}),
    }
    strat.register(regs)
    assert torch.equal(strat.arrays["w"], torch.ones(3))
    given = FedAvg({"w": torch.zeros(3)})
    given.register(regs)  # arrays given to the constructor win
    assert torch.equal(given.arrays["w"], torch.zeros(3))
    with pytest.raises(PayloadError, match="no initial arrays"):
        FedAvg().register({0: Payload(), 1: Payload()})


def _resumable_run(ckpt, stop_after=None, resume=False):
    strat = FedProx({"w": torch.zeros(3)}, proximal_mu=0.01)
    return run_simulation(
        strat,
        _fed(3),
        num_rounds=7,
        fraction=0.67,
        eval_every=2,
        patience=10,
        monitor="score",
        seed=3,
        checkpoint_dir=ckpt,
        resume=resume,
        progress=False,
        stop_after=stop_after,
    ), strat


def _assert_same_run(resumed, strat, ref, ref_strat, rtol=0.0):
    r"""The same final arrays, test metrics, best round, communication and
    history (wall-clock seconds aside); ``rtol``: see
    :func:`_assert_same_checkpoint`."""

    def strip(history):
        return [{k: v for k, v in h.items() if "seconds" not in k} for h in history]

    torch.testing.assert_close(
        strat.arrays["w"], ref_strat.arrays["w"], rtol=rtol, atol=0
    )
    assert resumed.best_round == ref.best_round and resumed.comm == ref.comm
    _assert_same_checkpoint(
        [resumed.test, resumed.test_clients, strip(resumed.history)],
        [ref.test, ref.test_clients, strip(ref.history)],
        rtol=rtol,
    )


@pytest.mark.parametrize("kill_after", [1, 3, 4])
def test_resume_gives_identical_numbers(tmp_path, kill_after):
    ref, ref_strat = _resumable_run(tmp_path / "ref")
    partial, _ = _resumable_run(tmp_path / "cut", stop_after=kill_after)
    assert partial.rounds == kill_after
    # a fresh process: new objects, state only from disk
    resumed, strat = _resumable_run(tmp_path / "cut", resume=True)
    _assert_same_run(resumed, strat, ref, ref_strat)


def test_resuming_the_loop_needs_load_best():
    with pytest.raises(ValueError, match="`start` needs `load_best`"):
        run_federation(
            FedAvg({"w": torch.zeros(3)}),
            InProcessTransport(_fed(2)),
            num_rounds=2,
            start=LoopState(round=1),
        )


@pytest.fixture
def _restore_global_rngs():
    state = torch.get_rng_state(), random.getstate(), np.random.get_state()
    yield
    torch.set_rng_state(state[0])
    random.setstate(state[1])
    np.random.set_state(state[2])


def _seed_globals(seed=1234):
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)


def _assert_same_checkpoint(a, b, where="", rtol=0.0):
    r"""Equal keys in the same order, types, dtypes and values; wall-clock
    ``*seconds*`` entries aside. ``rtol`` > 0: floating-point values (floats
    and float tensors) equal up to that relative tolerance (files written on
    another CPU: its matrix kernels round differently)."""
    assert type(a) is type(b), where
    if isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            if "seconds" not in str(k):
                _assert_same_checkpoint(a[k], b[k], f"{where}/{k}", rtol)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _assert_same_checkpoint(x, y, f"{where}[{i}]", rtol)
    elif isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        if rtol and a.is_floating_point():
            torch.testing.assert_close(a, b, rtol=rtol, atol=0, msg=where)
        else:
            assert torch.equal(a, b), where
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and np.array_equal(a, b), where
    elif rtol and isinstance(a, float):
        assert a == pytest.approx(b, rel=rtol), where
    else:
        assert a == b, where


#: relative tolerance between the legacy files (written on an Intel CPU) and
#: this machine's run: the same arithmetic, rounded by other matrix kernels
#: (an AMD EPYC differs by ~1e-8 relative).
LEGACY_RTOL = 1e-6


@pytest.mark.usefixtures("_restore_global_rngs")
def test_checkpoints_of_the_previous_runtime_resume_and_keep_their_format(tmp_path):
    # Written now after round 3: the very files the old code wrote.
    _seed_globals()
    _resumable_run(tmp_path / "now", stop_after=3)
    for name in ("last.pt", "best.pt"):
        _assert_same_checkpoint(
            torch.load(LEGACY_CHECKPOINT / name, weights_only=False),
            torch.load(tmp_path / "now" / name, weights_only=False),
            rtol=LEGACY_RTOL,
        )
    # A run killed under the old code resumes with the numbers of an
    # uninterrupted run, and the global RNGs come back from last.pt (the toy
    # federation draws nothing from them).
    ref, ref_strat = _resumable_run(tmp_path / "ref")
    shutil.copytree(LEGACY_CHECKPOINT, tmp_path / "old")
    _seed_globals(0)
    resumed, strat = _resumable_run(tmp_path / "old", resume=True)
    _assert_same_run(resumed, strat, ref, ref_strat, rtol=LEGACY_RTOL)
    rng = torch.load(LEGACY_CHECKPOINT / "last.pt", weights_only=False)["rng"]
    now = {
        "torch": torch.get_rng_state(),
        "python": random.getstate(),
        "numpy": np.random.get_state(),
    }
    _assert_same_checkpoint(rng, now)


# ------------------------------------------------------- per-client selection
#: validation score of each client after its t-th fit (index t - 1). The
#: weighted mean (1, 3, 3.5, 4, 1.5, 3.5) improves at rounds 1-4: best round 4.
SCRIPT = {0: [1, 5, 3, 2, 1, 0], 1: [1, 1, 4, 6, 2, 7]}


class ScriptedClient(ToyClient):
    r"""Validation follows :data:`SCRIPT`; a test reply's score is the number
    of fits of the state it was given (the round whose state was restored)."""

    def __init__(self, cid: int):
        super().__init__(cid)
        self.cid = cid

    def evaluate(self, payload: Payload) -> Payload:
        if payload.config["split"] == "valid":
            score = SCRIPT[self.cid][self.fits - 1]
        else:
            score = self.fits
        return Payload(metrics={"count": 1, "score_sum": float(score)})

    def state_dict(self):
        return {**super().state_dict(), "fits": self.fits}

    def load_state_dict(self, state: Mapping):
        super().load_state_dict(state)
        self.fits = state["fits"]


class ProgressAt(FedAvg):
    r"""Reports progress of its own (as FedLU's global model) at ``rounds``."""

    def __init__(self, rounds=()):
        super().__init__({"w": torch.zeros(3)})
        self.rounds = tuple(rounds)

    def on_validation(self, server_round, metrics):
        return server_round in self.rounds


def _scripted_run(
    selection, progress_rounds=(), ckpt=None, stop_after=None, resume=False
):
    return run_simulation(
        ProgressAt(progress_rounds),
        {c: ScriptedClient(c) for c in SCRIPT},
        num_rounds=6,
        eval_every=1,
        patience=0,
        monitor="score",
        progress=False,
        selection=selection,
        checkpoint_dir=ckpt,
        resume=resume,
        stop_after=stop_after,
    )


@pytest.mark.parametrize(
    "selection,progress_rounds,expected",
    [
        # every client at the best weighted round
        ("weighted", (), {0: 4, 1: 4}),
        # FedLU's splitsave: client 0 peaks at round 2; client 1's 7 at round 6
        # is not kept (neither the weighted score improved nor the strategy
        # progressed there) ...
        ("per-client", (), {0: 2, 1: 4}),
        # ... unless the strategy progressed at round 6 (FedLU: the global
        # model improved)
        ("per-client", (6,), {0: 2, 1: 6}),
    ],
)
def test_selection_picks_each_clients_best_round(selection, progress_rounds, expected):
    res = _scripted_run(selection, progress_rounds)
    assert res.best_round == 4 and res.rounds == 6
    assert {c: m["score"] for c, m in res.test_clients.items()} == expected
    assert res.client_best_rounds == ({} if selection == "weighted" else expected)


@pytest.mark.parametrize("kill_after", [2, 5])
def test_per_client_selection_resumes_with_identical_numbers(tmp_path, kill_after):
    ref = _scripted_run("per-client", (6,), ckpt=tmp_path / "ref")
    cut = _scripted_run(
        "per-client", (6,), ckpt=tmp_path / "cut", stop_after=kill_after
    )
    assert cut.rounds == kill_after and not cut.test
    resumed = _scripted_run("per-client", (6,), ckpt=tmp_path / "cut", resume=True)
    assert resumed.test_clients == ref.test_clients
    assert resumed.client_best_rounds == ref.client_best_rounds == {0: 2, 1: 6}
    # best.pt holds each client's own best round's state
    best = torch.load(tmp_path / "cut" / "best.pt", weights_only=False)
    assert {c: s["fits"] for c, s in best["clients"].items()} == {0: 2, 1: 6}


def test_per_client_selection_writes_each_clients_round(tmp_path):
    res = _scripted_run("per-client", (6,))
    doc = res.write_results(tmp_path / "results.json", settings={})
    rows = json.loads(doc.read_text())["clients"]
    assert [(r["client"], r["best_round"]) for r in rows] == [(0, 2), (1, 6)]
    plain = _scripted_run("weighted").write_results(tmp_path / "w.json", settings={})
    assert all("best_round" not in r for r in json.loads(plain.read_text())["clients"])


def test_selection_errors_name_the_argument():
    with pytest.raises(ValueError, match="`selection` must be one of"):
        _scripted_run("best")


def test_per_client_selection_needs_clients_that_evaluate_their_own_tables():
    from fedgraph.federated import FedE

    strat = FedE(10, 4, init_range=0.1, evaluate_with="global")
    with pytest.raises(ValueError, match="evaluate_with='global'"):
        run_federation(
            strat, InProcessTransport({}), num_rounds=1, selection="per-client"
        )
