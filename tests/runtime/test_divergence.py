r"""A diverged client stops the run with the round and the client named."""

import pytest
import torch
from test_simulation import ToyClient

from fedgraph.errors import DivergedError, RunFailed
from fedgraph.federated import FedAvg, Payload
from fedgraph.runtime import run_simulation
from fedgraph.runtime.divergence import check_replies


def test_check_replies_names_the_round_client_and_what():
    ok = Payload(arrays={"w": torch.ones(2)}, metrics={"loss_sum": 1.0})
    check_replies(3, {0: ok})
    nan_loss = Payload(arrays={"w": torch.ones(2)}, metrics={"loss_sum": float("nan")})
    with pytest.raises(DivergedError, match=r"round 3 on client 1: `loss_sum` is nan"):
        check_replies(3, {0: ok, 1: nan_loss})
    inf_rows = Payload(arrays={"w": torch.tensor([1.0, float("inf")])})
    with pytest.raises(DivergedError, match=r"round 4 on client 2: its `w` array"):
        check_replies(4, {2: inf_rows})
    # integer arrays (row ids, counts) and non-loss metrics are not scores
    check_replies(5, {0: Payload(arrays={"n": torch.tensor([1])}, metrics={"x": 1.0})})
    assert issubclass(DivergedError, RunFailed)


def test_a_run_with_a_diverging_client_stops_naming_it():
    clients = {0: ToyClient(0), 1: ToyClient(1, lr=50.0)}  # client 1 explodes
    with pytest.raises(DivergedError, match=r"round \d+ on client 1"):
        run_simulation(
            FedAvg({"w": torch.zeros(3)}),
            clients,
            num_rounds=30,
            eval_every=1,
            patience=0,
            monitor="score",
            progress=False,
        )
