"""Batched local training equals each model training alone (same batches,
negatives and Adam steps), up to float rounding."""

import copy

import pytest
import torch

from fedgraph.models.kge import resolve_model
from fedgraph.models.losses import resolve_loss
from fedgraph.models.samplers import UniformNegativeSampler, subsampling_weights
from fedgraph.training.batched import train_epochs_batched
from fedgraph.training.kge_trainer import train_epochs

pytestmark = pytest.mark.usefixtures("one_thread")


def _setup(sizes=(37, 16, 5), model="transe", seed=0):
    """One model per size: its triples, Adam, shared sampler and generator
    (float64, so that the comparison is tight)."""
    out = []
    for i, n in enumerate(sizes):
        gen = torch.Generator().manual_seed(100 + i)
        ents, rels = 6 + 2 * i, 2 + i
        t = torch.stack(
            [
                torch.randint(ents, (n,), generator=gen),
                torch.randint(rels, (n,), generator=gen),
                torch.randint(ents, (n,), generator=gen),
            ],
            1,
        )
        torch.manual_seed(seed + i)
        m = resolve_model(model, ents, rels, 4, gamma=3.0).double()
        out.append(
            {
                "model": m,
                "triples": t,
                "weights": subsampling_weights(t).double(),
                "opt": torch.optim.Adam(m.parameters(), lr=0.05),
                "sampler": UniformNegativeSampler(ents, 3, shared=True),
                "gen": torch.Generator().manual_seed(7 + i),
            }
        )
    return out


def _sequential(clients, loss, epochs, batch_size):
    return [
        train_epochs(
            c["model"],
            c["triples"],
            epochs=epochs,
            batch_size=batch_size,
            loss=loss,
            optimizer=c["opt"],
            sampler=c["sampler"],
            generator=c["gen"],
            weights=c["weights"],
        )
        for c in clients
    ]


def _batched(clients, loss, epochs, batch_size, chunk_size=None):
    return train_epochs_batched(
        [c["model"] for c in clients],
        [c["triples"] for c in clients],
        epochs=epochs,
        batch_size=batch_size,
        loss=loss,
        optimizers=[c["opt"] for c in clients],
        samplers=[c["sampler"] for c in clients],
        generators=[c["gen"] for c in clients],
        weights=[c["weights"] for c in clients],
        chunk_size=chunk_size,
    )


def _assert_same(seq, bat):
    for a, b in zip(seq, bat, strict=True):
        for p, q in zip(a["model"].parameters(), b["model"].parameters(), strict=True):
            torch.testing.assert_close(p, q, rtol=1e-10, atol=1e-10)
            sa, sb = a["opt"].state[p], b["opt"].state[q]
            assert float(sa["step"]) == float(sb["step"])
            for key in ("exp_avg", "exp_avg_sq"):
                torch.testing.assert_close(sa[key], sb[key], rtol=1e-10, atol=1e-12)
        # the generators drew the same numbers
        assert torch.equal(a["gen"].get_state(), b["gen"].get_state())


@pytest.mark.parametrize("chunk_size", [None, 2])
@pytest.mark.parametrize("model", ["transe", "distmult", "rotate"])
@pytest.mark.parametrize("loss_name", ["sigmoid-ns", "nssa", "margin-ranking"])
def test_batched_equals_sequential(model, loss_name, chunk_size, monkeypatch):
    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")
    loss = resolve_loss(loss_name)
    seq = _setup(model=model)
    bat = copy.deepcopy(seq)
    # 5, 2 and 1 batches of 8: the smaller models sit out the later steps
    mean_seq = _sequential(seq, loss, epochs=2, batch_size=8)
    mean_bat = _batched(bat, loss, epochs=2, batch_size=8, chunk_size=chunk_size)
    torch.testing.assert_close(mean_bat, mean_seq, rtol=1e-10, atol=1e-12)
    _assert_same(seq, bat)
    # each model took epochs * its batches * 2 modes Adam steps, alone
    steps = [
        float(c["opt"].state[c["model"].entity_embedding.weight]["step"]) for c in bat
    ]
    assert steps == [2 * 5 * 2, 2 * 2 * 2, 2 * 1 * 2]


def test_batched_continues_from_existing_adam_state(monkeypatch):
    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")
    loss = resolve_loss("sigmoid-ns")
    seq = _setup(sizes=(20, 9))
    _sequential(seq, loss, epochs=1, batch_size=4)  # moments, steps 10 and 6
    bat = copy.deepcopy(seq)
    _sequential(seq, loss, epochs=1, batch_size=4)
    _batched(bat, loss, epochs=1, batch_size=4)
    _assert_same(seq, bat)


def test_batched_refuses_what_it_cannot_batch(monkeypatch):
    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")
    loss = resolve_loss("sigmoid-ns")
    clients = _setup(sizes=(8, 8))
    clients[1]["sampler"] = UniformNegativeSampler(10, 3, shared=False)
    with pytest.raises(ValueError, match="shared negatives"):
        _batched(clients, loss, 1, 4)
    clients = _setup(sizes=(8, 8))
    clients[1]["opt"] = torch.optim.Adam(clients[1]["model"].parameters(), lr=0.1)
    with pytest.raises(ValueError, match="one Adam setting"):
        _batched(clients, loss, 1, 4)
    clients = _setup(sizes=(8, 8))
    clients[1]["model"].gamma = 5.0
    with pytest.raises(ValueError, match="one class, hyperparameters"):
        _batched(clients, loss, 1, 4)
    with pytest.raises(ValueError, match="`chunk_size` must be positive"):
        _batched(_setup(sizes=(8, 8)), loss, 1, 4, chunk_size=0)


def test_buckets_pad_at_most_the_slack():
    from fedgraph.training.batched import buckets

    # 8*4 = 32 <= 1.2 * 29; adding 4 would pad 40 > 1.2 * 33
    assert buckets([8, 8, 8, 5, 4, 1]) == [[0, 1, 2, 3], [4], [5]]
    assert buckets([8, 8, 8, 5, 4, 1], slack=0.0) == [[0, 1, 2], [3], [4], [5]]
    widths = sorted(torch.randint(1, 1025, (100,)).tolist(), reverse=True)
    runs = buckets(widths)
    assert sum(runs, []) == list(range(100))
    for run in runs:
        real = sum(widths[i] for i in run)
        assert widths[run[0]] * len(run) <= 1.2 * real


def test_a_model_without_triples_takes_no_step(monkeypatch):
    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")
    loss = resolve_loss("sigmoid-ns")
    seq = _setup(sizes=(11, 0))
    bat = copy.deepcopy(seq)
    mean_seq, mean_bat = _sequential(seq, loss, 1, 4), _batched(bat, loss, 1, 4)
    assert mean_bat[1] == mean_seq[1] == 0.0
    assert mean_bat[0] == pytest.approx(mean_seq[0], rel=1e-12)
    idle = bat[1]
    assert not idle["opt"].state  # a fresh optimizer stays fresh
    torch.testing.assert_close(
        idle["model"].entity_embedding.weight, seq[1]["model"].entity_embedding.weight
    )
