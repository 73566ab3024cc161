r"""FedAvgM on the entity table: hand computation, FedE as a special case,
state round-trip, and its registry entry."""

import numpy as np
import pytest
import torch
from fedlu_toy import toy_federation

from fedgraph.cli.main import main
from fedgraph.federated import FedE, Payload
from fedgraph.federated import algorithms as registry
from fedgraph.federated.kge.fedavgm import FedAvgM
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


def _strategy(cls=FedAvgM, **kw):
    s = cls(5, 3, init_range=0.5, seed=1, **kw)
    s.register({c: Payload(row_ids={"entity": ids}) for c, ids in IDS.items()})
    return s


def test_update_equals_a_numpy_reference_over_two_rounds():
    s = _strategy(server_lr=0.5, momentum=0.8)
    x = s.table.numpy().astype(np.float64)
    m = np.zeros_like(x)
    for r in (1, 2):
        replies = _replies(r)
        s.aggregate_train(r, replies)
        agg, cnt = np.zeros_like(x), np.zeros(5)
        for p in replies.values():
            np.add.at(agg, p.row_ids["entity"].numpy(), p.arrays["entity"].numpy())
            np.add.at(cnt, p.row_ids["entity"].numpy(), 1)
        got = cnt > 0
        delta = agg[got] / cnt[got, None] - x[got]
        m[got] = 0.8 * m[got] + delta
        x[got] += 0.5 * m[got]
        np.testing.assert_allclose(s.table.numpy(), x, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(s.velocity.numpy(), m, rtol=1e-6, atol=1e-6)
    assert not s.velocity[[1, 4]].any()  # never received: untouched


def test_unit_rate_without_momentum_is_fede():
    a, b = _strategy(server_lr=1.0, momentum=0.0), _strategy(FedE)
    for r in (1, 2):
        a.aggregate_train(r, _replies(r))
        b.aggregate_train(r, _replies(r))
    assert torch.allclose(a.table, b.table, atol=1e-7)


def test_state_round_trip_resumes_exactly():
    full = _strategy()
    for r in (1, 2, 3):
        full.aggregate_train(r, _replies(r))
    part = _strategy()
    part.aggregate_train(1, _replies(1))
    state = part.state_dict()
    resumed = _strategy()
    resumed.load_state_dict(state)
    for r in (2, 3):
        resumed.aggregate_train(r, _replies(r))
    assert torch.equal(resumed.table, full.table)
    assert torch.equal(resumed.velocity, full.velocity)


def test_registered_with_checked_settings(capsys):
    alg = registry.get("FedAvgM", family="kge")
    assert alg.defaults() == {"server_lr": 1.0, "momentum": 0.9}
    with pytest.raises(
        ValueError, match=r"fedavgm setting 'momentum' must be a number in \[0, 1\)"
    ):
        alg.parse({"momentum": 1.0})  # fmt: skip
    s = KGESettings(dim=4, extra={"server_lr": 0.5})
    strategy, _ = build_kge_federation("fedavgm", toy_federation(), s)
    assert isinstance(strategy, FedAvgM) and strategy.server_lr == 0.5
    cfg = FlowerRunSettings.from_run_config(
        {"data": "x", "algorithm": "fedavgm", "set": "momentum=0.5"}
    )
    assert cfg.settings.extra == {"momentum": 0.5}
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    assert "fedavgm: server_lr (1.0" in " ".join(capsys.readouterr().out.split())
