"""A federation whose clients train batched equals the sequential one."""

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "federated"))
from fedlu_toy import toy_federation  # noqa: E402

from fedgraph.federated.kge.setup import KGESettings, build_kge_federation  # noqa: E402
from fedgraph.runtime import run_simulation  # noqa: E402
from fedgraph.runtime.batched import BatchedKGETransport  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")


def _run(local_training, algorithm="fede", rounds=3, fraction=1.0, **kw):
    settings = KGESettings(
        dim=8, lr=0.01, batch_size=8, num_negatives=4, local_epochs=2, gamma=4.0, **kw
    )
    strategy, clients = build_kge_federation(algorithm, toy_federation(), settings)
    res = run_simulation(
        strategy,
        clients,
        num_rounds=rounds,
        fraction=fraction,
        eval_every=1,
        patience=0,
        progress=False,
        local_training=local_training,
    )
    return res, clients


@pytest.mark.parametrize("fraction", [1.0, 0.5])
def test_batched_rounds_equal_sequential_rounds(fraction, monkeypatch):
    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")
    # fraction 0.5: one of the two clients per round (a group of one)
    seq, seq_clients = _run("sequential", fraction=fraction)
    bat, bat_clients = _run("batched", fraction=fraction)
    assert [h["clients"] for h in seq.history] == [h["clients"] for h in bat.history]
    assert bat.rounds == seq.rounds == 3 and bat.best_round == seq.best_round
    for a, b in zip(seq.history, bat.history, strict=True):
        assert a["train"]["loss"] == pytest.approx(b["train"]["loss"], rel=1e-5)
        assert a["valid"]["mrr"] == pytest.approx(b["valid"]["mrr"], abs=1e-6)
    assert seq.test["mrr"] == pytest.approx(bat.test["mrr"], abs=1e-6)
    for c in seq_clients:
        torch.testing.assert_close(
            seq_clients[c].table, bat_clients[c].table, rtol=1e-5, atol=1e-6
        )


def test_batched_refuses_loss_terms_other_clients_and_unknown_modes(monkeypatch):
    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")
    with pytest.raises(ValueError, match=r"loss terms \(ProximalTerm, asked for by"):
        _run("batched", algorithm="fedprox", rounds=1)
    with pytest.raises(ValueError, match="needs KGE clients with the plain"):
        _run("batched", algorithm="fedlu", rounds=1)
    with pytest.raises(ValueError, match="`local_training` must be one of"):
        _run("parallel", rounds=1)
    _, clients = build_kge_federation("fede", toy_federation(), KGESettings(dim=4))
    clients[1].batch_size = 7
    with pytest.raises(ValueError, match="one local_epochs, batch_size"):
        BatchedKGETransport(clients)
