r"""Federated KGE clients drawing their samples on the device
(``KGESettings.sample_on="device"``, ``fedgraph train --sample-on device``).

On this CPU the device is the CPU: each client draws from its own device
generator (seeded apart from its host generator), so these tests run the
device path; the GPU test (skipped without CUDA) checks that a training
epoch on a GPU never waits on the device.
"""

from __future__ import annotations

import pytest
import torch
from fedlu_toy import toy_federation

from fedgraph.federated.kge.setup import KGESettings, build_kge_federation
from fedgraph.runtime import run_simulation
from fedgraph.runtime.batched import check_batchable
from fedgraph.training.kge_trainer import train_steps

pytestmark = pytest.mark.usefixtures("one_thread")

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def _settings(sample_on: str, algorithm: str = "fede", **kw) -> KGESettings:
    extra = {"p": 0.5, "sync_interval": 2} if algorithm == "feds" else {}
    return KGESettings(
        dim=8,
        gamma=4.0,
        lr=1e-2,
        batch_size=16,
        num_negatives=4,
        local_epochs=2,
        sample_on=sample_on,
        extra=extra,
        **kw,
    )


def _run(algorithm: str, sample_on: str, rounds: int = 3, shared=True, **kw):
    torch.manual_seed(0)
    strategy, clients = build_kge_federation(
        algorithm,
        toy_federation(),
        _settings(sample_on, algorithm, shared_negatives=shared),
    )
    res = run_simulation(
        strategy,
        clients,
        num_rounds=rounds,
        eval_every=1,
        patience=0,
        progress=False,
        **kw,
    )
    return res, clients


def _losses(res) -> list[float]:
    return [h["train"]["loss"] for h in res.history]


def _curve(res) -> list[float]:
    return [h["valid"]["mrr"] for h in res.history if "valid" in h]


def _same_tables(a, b) -> bool:
    return all(torch.equal(a[c].table, b[c].table) for c in a)


def test_settings_refuse_a_bad_sample_on():
    with pytest.raises(ValueError, match=r"`sample_on` must be one of \['host'"):
        KGESettings(sample_on="gpu")


@pytest.mark.parametrize("shared", [True, False])
def test_device_run_is_reproducible_and_draws_another_stream(shared):
    a, ca = _run("fede", "device", shared=shared)
    b, cb = _run("fede", "device", shared=shared)
    host, ch = _run("fede", "host", shared=shared)
    assert _losses(a) == _losses(b) and _curve(a) == _curve(b)
    assert _same_tables(ca, cb)
    assert ca[0].sample_on == "device" and ch[0].sample_on == "host"
    assert "sample_on='device'" in repr(ca[0]) and "sample_on" not in repr(ch[0])
    # seeded apart from the host generator: other samples, other numbers
    assert _losses(a) != _losses(host)


def test_host_run_is_the_default_run():
    default, cd = _run("fede", "host")
    # a KGESettings without the option is the host run
    settings = _settings("host").to_dict()
    del settings["sample_on"]
    torch.manual_seed(0)
    s2, c2 = build_kge_federation("fede", toy_federation(), KGESettings(**settings))
    res = run_simulation(s2, c2, num_rounds=3, eval_every=1, patience=0, progress=False)
    assert _losses(res) == _losses(default) and _same_tables(c2, cd)
    # the checkpoint of a host client keeps its format
    assert set(cd[0].state_dict()) == {
        "model",
        "optimizer",
        "generator",
        "previous_table",
    }


@pytest.mark.parametrize("algorithm", ["fede", "fedprox", "fedlu", "feds"])
def test_device_run_resumes_bit_for_bit(tmp_path, algorithm):
    full, cf = _run(algorithm, "device", rounds=4)
    _run(algorithm, "device", rounds=4, checkpoint_dir=tmp_path, stop_after=2)
    resumed, cr = _run(
        algorithm, "device", rounds=4, checkpoint_dir=tmp_path, resume=True
    )
    assert _losses(resumed)[-2:] == _losses(full)[-2:]
    assert _curve(resumed)[-2:] == _curve(full)[-2:]
    assert resumed.test == full.test
    assert _same_tables(cf, cr)
    for c in cf:
        a, b = (
            cf[c].state_dict()["sample_generator"],
            cr[c].state_dict()["sample_generator"],
        )
        assert a["device"] == b["device"] == "cpu"
        assert torch.equal(a["state"], b["state"])
        # the device stream is the client's own, apart from its host stream
        assert not torch.equal(a["state"], cf[c].generator.get_state())


def test_client_refuses_a_checkpoint_drawn_elsewhere():
    _, device = _run("fede", "device", rounds=1)
    _, host = _run("fede", "host", rounds=1)
    with pytest.raises(ValueError, match="Client 0: the checkpoint drew its samples"):
        host[0].load_state_dict(device[0].state_dict())
    with pytest.raises(ValueError, match="drew its samples on the host"):
        device[0].load_state_dict(host[0].state_dict())
    state = device[0].state_dict()
    state["sample_generator"]["device"] = "cuda"
    with pytest.raises(ValueError, match="resume on cuda, or train with sample_on"):
        device[1].load_state_dict(state)


def test_device_copies_follow_replaced_triples():
    _, clients = _run("fede", "device", rounds=1)
    cl = clients[0]
    triples, weights, gen = cl.draws()
    assert gen is cl.samples.generator and gen is not cl.generator
    assert cl.draws()[0] is triples  # copied once
    cl.train_triples = cl.train_triples[:10]  # e.g. unlearning's retained set
    cl.weights = None
    again, w, _ = cl.draws()
    assert torch.equal(again, cl.train_triples) and w is None


def test_batched_local_training_refuses_device_sampling():
    _, clients = _run("fede", "device", rounds=1)
    with pytest.raises(ValueError, match="client 0 draws on the device"):
        check_batchable(clients)
    with pytest.raises(ValueError, match="draws on the device"):
        _run("fede", "device", rounds=1, local_training="batched")


@cuda
@pytest.mark.parametrize("algorithm", ["fede", "fedlu"])
@pytest.mark.parametrize("shared", [True, False])
def test_cuda_device_epoch_makes_no_host_sync(algorithm, shared):
    torch.manual_seed(0)
    settings = _settings("device", algorithm, shared_negatives=shared, device="cuda")
    strategy, clients = build_kge_federation(algorithm, toy_federation(), settings)
    run_simulation(  # one round first: the tables and optimisers exist
        strategy, clients, num_rounds=1, eval_every=1, patience=0, progress=False
    )
    cl = clients[0]
    triples, weights, gen = cl.draws()
    assert triples.is_cuda and gen.device.type == "cuda"
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        total, steps = train_steps(
            cl.model,
            triples,
            epochs=2,
            batch_size=cl.batch_size,
            loss=cl.loss,
            optimizer=cl.optimizer,
            sampler=cl.sampler,
            generator=gen,
            modes=cl.modes,
            weights=weights,
            sample_on="device",
        )
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert steps > 2 and torch.isfinite(total)


@cuda
def test_cuda_device_run_is_reproducible_and_resumes(tmp_path):
    def run(**kw):
        torch.manual_seed(0)
        strategy, clients = build_kge_federation(
            "fede", toy_federation(), _settings("device", device="cuda")
        )
        res = run_simulation(
            strategy, clients, num_rounds=4, eval_every=1, patience=0,
            progress=False, **kw,
        )  # fmt: skip
        return res, clients

    a, ca = run()
    b, cb = run()
    assert _losses(a) == _losses(b) and _same_tables(ca, cb)
    assert ca[0].state_dict()["sample_generator"]["device"] == "cuda"
    run(checkpoint_dir=tmp_path, stop_after=2)
    r, cr = run(checkpoint_dir=tmp_path, resume=True)
    assert _losses(r)[-2:] == _losses(a)[-2:] and _same_tables(ca, cr)
