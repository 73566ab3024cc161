r"""FedAvgM on the R-GCN bases: its server update against a reference, its
state, and that the registry, ``fedgraph train --model rgcn``, the Flower
run config and the docs tables find it with no other edit."""

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from fedgraph.federated.algorithms import algorithms, get
from fedgraph.federated.payload import Payload
from fedgraph.federated.rgcn.fedavgm import BasesFedAvgM
from fedgraph.federated.rgcn.setup import RGCNBuilder, RGCNSettings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_fedalign import toy_graph  # noqa: E402


def _reply(value, n):
    return Payload(
        arrays={"b": torch.tensor(value, dtype=torch.float64)}, num_examples=n
    )


def test_server_momentum_against_numpy():
    s = BasesFedAvgM(
        {"b": torch.zeros(2, dtype=torch.float64)}, server_lr=0.5, momentum=0.8
    )
    rounds = [
        {0: _reply([1.0, 2.0], 1), 1: _reply([3.0, 0.0], 3)},
        {0: _reply([0.0, 1.0], 2), 1: _reply([2.0, 2.0], 2)},
    ]
    x, m = np.zeros(2), np.zeros(2)
    for t, replies in enumerate(rounds, start=1):
        s.aggregate_train(t, replies)
        values = np.array([r.arrays["b"].numpy() for r in replies.values()])
        weights = np.array([r.num_examples for r in replies.values()], dtype=float)
        m = 0.8 * m + (np.average(values, axis=0, weights=weights) - x)
        x = x + 0.5 * m
        assert np.allclose(s.arrays["b"].numpy(), x, rtol=0, atol=1e-12)
    assert np.allclose(s.velocity["b"].numpy(), m, rtol=0, atol=1e-12)
    # state round trip; eta = 1, beta = 0 is FedAvg
    other = BasesFedAvgM({"b": torch.ones(2, dtype=torch.float64)})
    other.load_state_dict(s.state_dict())
    assert torch.equal(other.arrays["b"], s.arrays["b"])
    assert torch.equal(other.velocity["b"], s.velocity["b"])
    plain = BasesFedAvgM({"b": torch.zeros(2, dtype=torch.float64)}, momentum=0.0)
    plain.aggregate_train(1, rounds[0])
    assert plain.arrays["b"].tolist() == [2.5, 0.5]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"server_lr": 0.0}, "`server_lr` must be positive (got 0.0)"),
        ({"momentum": 1.0}, "`momentum` must lie in [0, 1) (got 1.0)"),
    ],
)
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError) as exc:
        BasesFedAvgM(**kwargs)
    assert str(exc.value) == message


def test_fedavgm_is_an_rgcn_method_of_the_registry():
    from fedgraph.cli.reference import rgcn_algorithms_table
    from fedgraph.declared import declared

    alg = get("fedavgm", "rgcn")
    assert "fedavgm" in algorithms("rgcn") and isinstance(alg.build, RGCNBuilder)
    assert alg.defaults() == {"server_lr": 1.0, "momentum": 0.9}
    assert [a["name"] for a in declared("rgcn")] == list(algorithms("rgcn"))
    assert (
        "| `fedavgm` | `server_lr=1.0`, `momentum=0.9` | FedAvg of the R-GCN bases "
        "with server momentum |"
    ) in rgcn_algorithms_table()
    strategy = alg.build.strategy(RGCNSettings(), alg.parse({"momentum": 0.5}))
    assert repr(strategy).startswith("SyncOnEvaluate(BasesFedAvgM(")
    assert (strategy.server_lr, strategy.momentum) == (1.0, 0.5)


def test_train_help_and_flower_run_config(capsys):
    from fedgraph.cli.main import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["train", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "rgcn/fedavgm: server_lr (1.0; a number > 0), momentum (0.9; a number in [0, 1))"
        in out
    )
    pytest.importorskip("flwr")
    from fedgraph.runtime.flower.rgcn import RGCNRunSettings

    cfg = {"data": "x", "algorithm": "FedAvgM", "set": "momentum=0.5"}
    parsed = RGCNRunSettings.from_run_config(cfg)
    assert parsed.algorithm == "fedavgm"
    assert parsed.algorithm_settings().momentum == 0.5
    with pytest.raises(ValueError) as exc:
        RGCNRunSettings.from_run_config({**cfg, "set": "mu=1"})
    assert str(exc.value) == (
        "fedavgm has no setting 'mu' (a setting of fedalign, fedalignl, fedprox, "
        "fedproxl); fedavgm's settings: momentum, server_lr"
    )
    with pytest.raises(ValueError) as exc:
        RGCNRunSettings.from_run_config({**cfg, "set": "momentum=1"})
    assert str(exc.value) == (
        "fedavgm setting 'momentum' must be a number in [0, 1) (got 1.0)"
    )


def test_fedavgm_trains_the_bases_with_momentum():
    from fedgraph.runtime.rgcn_runner import run_fed_rgcn

    res = run_fed_rgcn(toy_graph(), "fedavgm", num_clients=3, num_types=2, rounds=2,
                       local_epochs=1, num_bases=4, hidden_channels=4)  # fmt: skip
    assert res["method"] == "fedavgm" and len(res["curve"]) == 2
    assert all(0.0 <= c["test_accuracy"] <= 1.0 for c in res["curve"])
    assert res["comm"]["params_up"] > 0
