r"""FedAdam on the entity table: numpy reference (Reddi et al. 2021,
Algorithm 2), state round-trip, and its registry entry."""

import numpy as np
import pytest
import torch
from fedlu_toy import toy_federation

from fedgraph.cli.main import main
from fedgraph.federated import Payload
from fedgraph.federated import algorithms as registry
from fedgraph.federated.kge.fedadam import FedAdam
from fedgraph.federated.kge.setup import KGESettings, build_kge_federation
from fedgraph.runtime.flower.config import FlowerRunSettings

IDS = {0: torch.tensor([0, 2]), 1: torch.tensor([2, 3])}  # row 1 and 4: nobody


def _replies(r):
    gen = torch.Generator().manual_seed(r)
    return {
        c: Payload(arrays={"entity": torch.randn(2, 3, generator=gen)},
                   row_ids={"entity": ids})
        for c, ids in IDS.items()
    }  # fmt: skip


def _strategy(**kw):
    s = FedAdam(5, 3, init_range=0.5, seed=1, **kw)
    s.register({c: Payload(row_ids={"entity": ids}) for c, ids in IDS.items()})
    return s


def test_update_equals_a_numpy_reference_over_three_rounds():
    lr, b1, b2, tau = 0.1, 0.8, 0.95, 0.01
    s = _strategy(server_lr=lr, beta1=b1, beta2=b2, tau=tau)
    x = s.table.numpy().astype(np.float64)
    m, v = np.zeros_like(x), np.full_like(x, tau**2)
    for r in (1, 2, 3):
        replies = _replies(r)
        s.aggregate_train(r, replies)
        agg, cnt = np.zeros_like(x), np.zeros(5)
        for p in replies.values():
            np.add.at(agg, p.row_ids["entity"].numpy(), p.arrays["entity"].numpy())
            np.add.at(cnt, p.row_ids["entity"].numpy(), 1)
        got = cnt > 0
        delta = agg[got] / cnt[got, None] - x[got]
        m[got] = b1 * m[got] + (1 - b1) * delta
        v[got] = b2 * v[got] + (1 - b2) * delta**2
        x[got] += lr * m[got] / (np.sqrt(v[got]) + tau)
        np.testing.assert_allclose(s.table.numpy(), x, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(s.m.numpy(), m, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(s.v.numpy(), v, rtol=1e-5, atol=1e-9)
    # rows nobody sent: value and moments untouched
    assert not s.m[[1, 4]].any() and torch.all(s.v[[1, 4]] == np.float32(tau**2))


def test_state_round_trip_resumes_exactly():
    full = _strategy()
    for r in (1, 2, 3):
        full.aggregate_train(r, _replies(r))
    part = _strategy()
    part.aggregate_train(1, _replies(1))
    resumed = _strategy()
    resumed.load_state_dict(part.state_dict())
    for r in (2, 3):
        resumed.aggregate_train(r, _replies(r))
    for name in ("table", "m", "v"):
        assert torch.equal(getattr(resumed, name), getattr(full, name)), name


def test_registered_with_checked_settings(capsys):
    alg = registry.get("fed-adam")
    assert alg.defaults() == {
        "server_lr": 0.01,
        "beta1": 0.9,
        "beta2": 0.99,
        "tau": 1e-3,
    }
    with pytest.raises(ValueError, match="fedadam setting 'tau' must be a number > 0"):
        alg.parse({"tau": 0})
    s = KGESettings(dim=4, extra={"beta2": 0.9})
    strategy, _ = build_kge_federation("fedadam", toy_federation(), s)
    assert isinstance(strategy, FedAdam) and strategy.beta2 == 0.9
    cfg = FlowerRunSettings.from_run_config(
        {"data": "x", "algorithm": "fedadam", "set": "server_lr=0.05"}
    )
    assert cfg.settings.extra == {"server_lr": 0.05}
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    assert "fedadam: server_lr (0.01" in " ".join(capsys.readouterr().out.split())
