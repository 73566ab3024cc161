r"""Where the training samples are drawn (:mod:`fedgraph.training.sample_on`):
``"host"`` (the CPU generator, the default) or ``"device"`` (a generator on
the model's device). Here the device is the CPU: the device path then draws
from its own CPU generator, so its code runs and is checked without a GPU
(the GPU's no-sync check is in ``tests/federated/test_sample_on_device.py``).
"""

from __future__ import annotations

import pytest
import torch

from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.models import SigmoidNSLoss, TransE
from fedgraph.models.samplers import UniformNegativeSampler, triple_keys
from fedgraph.training.kge_trainer import KGETrainer, train_epochs, train_steps
from fedgraph.training.sample_on import (
    DEVICE_SEED_OFFSET,
    SAMPLE_ON,
    DeviceCopy,
    SampleSource,
    check_sample_on,
    device_generator,
    epoch_batches,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def _graph(n_ent=20, n_rel=3, n=120, seed=0):
    g = torch.Generator().manual_seed(seed)

    def rt(k):
        cols = [torch.randint(0, m, (k,), generator=g) for m in (n_ent, n_rel, n_ent)]
        return torch.stack(cols, 1)

    return KnowledgeGraph(
        {"train": rt(n), "valid": rt(15), "test": rt(15)}, n_ent, n_rel
    )


def test_sample_on_values_and_bad_values():
    assert SAMPLE_ON == ("host", "device")
    assert check_sample_on("device") == "device"
    for bad in ("gpu", "Device", "", None):
        with pytest.raises(ValueError, match=r"`sample_on` must be one of"):
            check_sample_on(bad)
    with pytest.raises(ValueError, match=r"`sample_on` must be one of .*'cuda'"):
        KGETrainer(TransE(20, 3, 8), _graph(), sample_on="cuda")


def test_device_generator_seed_is_the_documented_derivation():
    gen = device_generator("cpu", 7)
    ref = torch.Generator().manual_seed(7 + 0x9E3779B9)
    host = torch.Generator().manual_seed(7)
    assert DEVICE_SEED_OFFSET == 0x9E3779B9
    assert gen.device.type == "cpu" and gen.initial_seed() == 7 + 0x9E3779B9
    assert torch.equal(
        torch.randint(100, (50,), generator=gen),
        torch.randint(100, (50,), generator=ref),
    )
    # a stream apart from the host generator's (whose seed is 7)
    assert not torch.equal(
        torch.randint(100, (50,), generator=device_generator("cpu", 7)),
        torch.randint(100, (50,), generator=host),
    )
    # the largest seeds wrap around 2**64 instead of failing
    assert device_generator("cpu", 2**64 - 1).initial_seed() == 0x9E3779B9 - 1


def test_device_copy_is_made_once_per_tensor():
    copy = DeviceCopy("cpu")
    a, b = torch.arange(4), torch.arange(4)
    assert copy(None) is None
    first = copy(a)
    assert copy(a) is first and torch.equal(first, a)
    assert copy(b) is not first  # replaced triples: copied again


def test_epoch_batches_host_is_the_cpu_permutation():
    triples = _graph().triples("train")
    w = torch.rand(triples.size(0))
    gen = torch.Generator().manual_seed(3)
    got = list(
        epoch_batches(
            triples, w, batch_size=50, generator=gen, device=torch.device("cpu")
        )
    )
    perm = torch.randperm(triples.size(0), generator=torch.Generator().manual_seed(3))
    assert [b.size(0) for _, b, _ in got] == [50, 50, 20]
    assert torch.equal(torch.cat([b for _, b, _ in got]), triples[perm])
    assert torch.equal(torch.cat([x for _, _, x in got]), w[perm])


@pytest.mark.parametrize("shuffle", [True, False])
def test_epoch_batches_device_draws_a_permutation_from_its_generator(shuffle):
    triples = _graph().triples("train")
    n = triples.size(0)
    gen = device_generator("cpu", 3)
    ref = device_generator("cpu", 3)
    got = list(
        epoch_batches(
            triples,
            None,
            batch_size=32,
            generator=gen,
            device=torch.device("cpu"),
            shuffle=shuffle,
            sample_on="device",
        )
    )
    order = torch.randperm(n, generator=ref) if shuffle else torch.arange(n)
    assert torch.equal(torch.cat([b for _, b, _ in got]), triples[order])
    assert all(drawn is batch and w is None for drawn, batch, w in got)


def test_filtered_sync_free_redraw_keeps_no_true_triple():
    # 4 entities; for (h=0, r=0) the tails 0, 1, 2 are true, only 3 is not
    known = torch.tensor([[0, 0, 0], [0, 0, 1], [0, 0, 2]])
    s = UniformNegativeSampler(
        4, 6, filtered=True, filter_triples=known, num_relations=1, max_redraws=60
    )
    pos = torch.tensor([[0, 0, 1]] * 5)
    gen = device_generator("cpu", 0)
    neg = s.sample(pos, "tail-batch", gen, sync_free=True)
    assert neg.shape == (5, 6)
    assert (neg == 3).all()  # (3/4)^60 per id of staying true
    # the same draws again from the same seed
    again = s.sample(pos, "tail-batch", device_generator("cpu", 0), sync_free=True)
    assert torch.equal(neg, again)


def test_filtered_sync_free_keeps_the_first_draw_when_nothing_is_true():
    known = torch.tensor([[5, 0, 5]])
    s = UniformNegativeSampler(
        10, 4, filtered=True, filter_triples=known, num_relations=2
    )
    pos = torch.tensor([[1, 1, 2], [3, 1, 4]])  # relation 1: nothing known
    neg = s.sample(pos, "head-batch", torch.Generator().manual_seed(9), sync_free=True)
    first = torch.randint(10, (2, 4), generator=torch.Generator().manual_seed(9))
    assert torch.equal(neg, first)


def test_filtered_sync_free_draws_in_range_with_few_true_left():
    kg = _graph(n_ent=12, n_rel=2, n=60)
    train = kg.triples("train")
    s = UniformNegativeSampler(
        12, 16, filtered=True, filter_triples=train, num_relations=2
    )
    pos = train[:20]
    for mode in ("head-batch", "tail-batch"):
        neg = s.sample(pos, mode, device_generator("cpu", 1), sync_free=True)
        assert neg.shape == (20, 16) and neg.dtype == torch.long
        assert int(neg.min()) >= 0 and int(neg.max()) < 12
        h, r, t = (pos[:, i : i + 1].expand_as(neg) for i in range(3))
        trip = torch.stack([neg, r, t] if mode == "head-batch" else [h, r, neg], -1)
        keys = triple_keys(trip.view(-1, 3), 12, 2)
        assert not torch.isin(keys, triple_keys(train, 12, 2)).any()


@pytest.mark.parametrize("shared", [True, False])
def test_device_draws_are_in_range_with_shared_and_per_positive_shapes(shared):
    triples = _graph().triples("train")
    s = UniformNegativeSampler(20, 5, shared=shared)
    gen = device_generator("cpu", 0)
    for _, batch, _ in epoch_batches(
        triples,
        None,
        batch_size=40,
        generator=gen,
        device=torch.device("cpu"),
        sample_on="device",
    ):
        neg = s.sample(batch, "tail-batch", gen, sync_free=True)
        assert neg.shape == ((5,) if shared else (batch.size(0), 5))
        assert neg.device == batch.device
        assert int(neg.min()) >= 0 and int(neg.max()) < 20


def _train(sample_on, generator, epochs=2, shared=True, seed=0):
    torch.manual_seed(seed)
    m = TransE(20, 3, 8, gamma=2.0)
    triples = _graph().triples("train")
    loss = train_epochs(
        m,
        triples,
        epochs=epochs,
        batch_size=50,
        loss=SigmoidNSLoss(),
        optimizer=torch.optim.Adam(m.parameters(), lr=0.05),
        sampler=UniformNegativeSampler(20, 8, shared=shared),
        generator=generator,
        weights=torch.rand(triples.size(0), generator=torch.Generator()),
        sample_on=sample_on,
    )
    return loss, m.state_dict()


@pytest.mark.parametrize("shared", [True, False])
def test_train_epochs_on_the_device_is_reproducible_and_another_stream(shared):
    a = _train("device", device_generator("cpu", 0), shared=shared)
    b = _train("device", device_generator("cpu", 0), shared=shared)
    host = _train("host", torch.Generator().manual_seed(0), shared=shared)
    assert a[0] == b[0]
    assert all(torch.equal(a[1][k], b[1][k]) for k in a[1])
    # the device generator is seeded apart from the host one: other samples
    assert a[0] != host[0]


def test_train_epochs_host_equals_the_default():
    torch.manual_seed(0)
    default = _train("host", torch.Generator().manual_seed(0))
    # sample_on's default is "host": the call without it
    torch.manual_seed(0)
    m = TransE(20, 3, 8, gamma=2.0)
    triples = _graph().triples("train")
    loss = train_epochs(
        m,
        triples,
        epochs=2,
        batch_size=50,
        loss=SigmoidNSLoss(),
        optimizer=torch.optim.Adam(m.parameters(), lr=0.05),
        sampler=UniformNegativeSampler(20, 8, shared=True),
        generator=torch.Generator().manual_seed(0),
        weights=torch.rand(triples.size(0), generator=torch.Generator()),
    )
    assert loss == default[0]


def test_epoch_batches_device_needs_the_triples_on_the_device():
    gen = device_generator("cpu", 0)
    with pytest.raises(ValueError, match="needs the triples and the generator on"):
        next(
            epoch_batches(
                torch.zeros(4, 3, dtype=torch.long),
                None,
                batch_size=2,
                generator=gen,
                device=torch.device("meta"),
                sample_on="device",
            )
        )


def test_train_steps_rejects_a_bad_sample_on():
    m = TransE(20, 3, 8)
    with pytest.raises(ValueError, match="`sample_on` must be one of"):
        train_steps(
            m,
            _graph().triples("train"),
            loss=SigmoidNSLoss(),
            optimizer=torch.optim.Adam(m.parameters()),
            sampler=UniformNegativeSampler(20, 4),
            generator=torch.Generator(),
            sample_on="gpu",
        )


def test_train_steps_keeps_the_sum_on_the_device():
    torch.manual_seed(0)
    m = TransE(20, 3, 8, gamma=2.0)
    total, steps = train_steps(
        m,
        _graph().triples("train"),
        epochs=1,
        batch_size=50,
        loss=SigmoidNSLoss(),
        optimizer=torch.optim.Adam(m.parameters(), lr=0.05),
        sampler=UniformNegativeSampler(20, 8, shared=True),
        generator=device_generator("cpu", 0),
        sample_on="device",
    )
    assert torch.is_tensor(total) and total.dtype == torch.float64
    assert steps == 3 * 2  # 3 batches of 120 triples, both corruption modes


def _trainer(tmp_path, sample_on, max_epochs, name="t.pt"):
    torch.manual_seed(0)
    return KGETrainer(
        TransE(20, 3, 8, gamma=2.0),
        _graph(),
        lr=0.05,
        batch_size=50,
        num_negatives=4,
        eval_every=2,
        patience=10,
        max_epochs=max_epochs,
        checkpoint=tmp_path / name,
        sample_on=sample_on,
    )


def test_trainer_on_the_device_resumes_bit_for_bit(tmp_path):
    full = _trainer(tmp_path, "device", 6, "full.pt")
    full.fit()
    assert full.samples.generator is not None and full.sample_on == "device"
    _trainer(tmp_path, "device", 2, "cut.pt").fit()  # stopped after 2 epochs
    resumed = _trainer(tmp_path, "device", 6, "cut.pt")
    resumed.fit()
    assert [h["loss"] for h in resumed.history] == [h["loss"] for h in full.history]
    assert [h["valid"] for h in resumed.history] == [h["valid"] for h in full.history]
    a, b = full.state_dict(), resumed.state_dict()
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])
    assert torch.equal(a["sample_generator"]["state"], b["sample_generator"]["state"])
    assert a["sample_generator"]["device"] == "cpu"


def test_trainer_refuses_a_checkpoint_drawn_elsewhere(tmp_path):
    host = _trainer(tmp_path, "host", 2, "host.pt")
    host.fit()
    assert "sample_generator" not in host.state_dict()  # format unchanged
    # the error names the setting as a user spells it (CLI flag, run-config key)
    where = r"\(`fedgraph train --sample-on`, Flower run-config key `sample-on`\)$"
    with pytest.raises(ValueError, match="drew its samples on the host.*" + where):
        _trainer(tmp_path, "device", 4, "host.pt").fit()
    device = _trainer(tmp_path, "device", 2, "device.pt")
    device.fit()
    with pytest.raises(ValueError, match="drew its samples on the device.*" + where):
        _trainer(tmp_path, "host", 4, "device.pt").fit()
    state = device.state_dict()
    state["sample_generator"] = {**state["sample_generator"], "device": "cuda"}
    with pytest.raises(ValueError, match="on a cuda generator, which a cpu one"):
        _trainer(tmp_path, "device", 4, "other.pt").load_state_dict(state)


def test_sample_source_host_hands_back_what_it_is_given():
    src = SampleSource("host", "cpu", 0)
    triples, gen = torch.zeros(3, 3, dtype=torch.long), torch.Generator()
    assert src(triples, None, gen) == (triples, None, gen)
    assert src.state_dict() == {}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("mode", ["head-batch", "tail-batch"])
def test_cuda_filtered_sync_free_redraw_makes_no_host_sync(mode):
    train = _graph(n_ent=12, n_rel=2, n=60).triples("train")
    s = UniformNegativeSampler(
        12, 16, filtered=True, filter_triples=train, num_relations=2
    )
    pos = train[:20].cuda()
    gen = device_generator("cuda", 1)
    s.sample(pos, mode, gen, sync_free=True)  # the keys copied to the GPU once
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        neg = s.sample(pos, mode, gen, sync_free=True)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert neg.is_cuda and neg.shape == (20, 16)
    h, r, t = (pos[:, i : i + 1].expand_as(neg) for i in range(3))
    trip = torch.stack([neg, r, t] if mode == "head-batch" else [h, r, neg], -1)
    keys = triple_keys(trip.view(-1, 3).cpu(), 12, 2)
    assert not torch.isin(keys, triple_keys(train, 12, 2)).any()
