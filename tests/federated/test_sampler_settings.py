r"""The negative sampler of a federated KGE run (``KGESettings.sampler``,
``fedgraph train --sampler``, the Flower run-config keys ``sampler`` and
``sampler-kwargs``): each client builds it on its own training triples; the
default stays the uniform sampler."""

from __future__ import annotations

import json
import random

import pytest
import torch
from fedlu_toy import toy_federation

from fedgraph.cli.main import main
from fedgraph.federated.kge.setup import KGESettings, build_kge_federation
from fedgraph.models.samplers import BernoulliNegativeSampler, UniformNegativeSampler
from fedgraph.models.samplers.bernoulli import head_probabilities

pytestmark = pytest.mark.usefixtures("one_thread")

SMALL = dict(dim=4, lr=0.01, batch_size=16, num_negatives=4, local_epochs=1)


def test_each_client_builds_the_sampler_on_its_own_training_triples():
    fed = toy_federation()
    _, clients = build_kge_federation("fede", fed, KGESettings(**SMALL))
    assert KGESettings().sampler == "uniform" and KGESettings().sampler_kwargs == {}
    assert all(type(c.sampler) is UniformNegativeSampler for c in clients.values())
    settings = KGESettings(
        **SMALL, shared_negatives=False, sampler="bernoulli",
        sampler_kwargs={"filtered": True, "max_redraws": 3.0},
    )  # fmt: skip
    assert settings.sampler_kwargs == {"filtered": True, "max_redraws": 3}
    _, clients = build_kge_federation("fede", fed, settings)
    for shard in fed.shards:
        s = clients[shard.client_id].sampler
        assert isinstance(s, BernoulliNegativeSampler)
        assert (s.filtered, s.max_redraws, s.shared) == (True, 3, False)
        train = shard.graph.triples("train")
        assert torch.equal(
            s.head_probability, head_probabilities(train, shard.num_relations)
        )
        loss = clients[shard.client_id]._train_local()
        assert loss > 0


@pytest.mark.parametrize(
    "kwargs, message",
    [({"sampler": "gaussian"}, "`sampler`: Could not resolve 'gaussian' among "
      "choices ['BernoulliNegativeSampler', 'UniformNegativeSampler']"),
     ({"sampler_kwargs": {"shared": False}}, "`sampler_kwargs` key 'shared' is "
      "set by the run's `shared_negatives` (--per-positive-negatives)"),
     ({"sampler_kwargs": {"max_redraws": 1.5}}, "`sampler_kwargs` key "
      "'max_redraws' must be an integer (got 1.5)")],
)  # fmt: skip
def test_bad_sampler_settings_are_refused_when_the_settings_are_made(kwargs, message):
    with pytest.raises(ValueError) as exc:
        KGESettings(**kwargs)
    assert str(exc.value) == message


def test_batched_local_training_refuses_the_bernoulli_sampler():
    from fedgraph.runtime.batched import check_batchable

    settings = KGESettings(**SMALL, sampler="bernoulli")
    _, clients = build_kge_federation("fede", toy_federation(), settings)
    with pytest.raises(ValueError) as exc:
        check_batchable(clients)
    assert str(exc.value) == (
        "`local_training='batched'` corrupts one side per step with the uniform "
        "sampler; client 0 uses BernoulliNegativeSampler (use 'sequential')"
    )


def test_batched_local_training_refuses_clients_with_different_lrs():
    from fedgraph.runtime.batched import check_batchable

    _, clients = build_kge_federation("fede", toy_federation(), KGESettings(**SMALL))
    check_batchable(clients)
    clients[1].lr = 2 * clients[0].lr  # refused before any step, not at the first
    with pytest.raises(ValueError, match=r"needs one local_epochs, .* and lr for all"):
        check_batchable(clients)


def test_flower_run_config_keys_sampler_and_sampler_kwargs():
    pytest.importorskip("flwr")
    from fedgraph.runtime.flower import FlowerRunSettings

    base = {"data": "x", "algorithm": "fede"}
    parsed = FlowerRunSettings.from_run_config(
        {**base, "sampler": "bernoulli", "sampler-kwargs": "max_redraws=4"}
    )
    assert parsed.settings.sampler == "bernoulli"
    assert parsed.settings.sampler_kwargs == {"max_redraws": 4}
    assert FlowerRunSettings.from_run_config(base).settings.sampler == "uniform"
    with pytest.raises(ValueError) as exc:
        FlowerRunSettings.from_run_config({**base, "sampler-kwargs": "k=1"})
    assert str(exc.value) == (
        "Run-config key `sampler-kwargs` key 'k' is not an argument of "
        "UniformNegativeSampler (its arguments: filtered, max_redraws)"
    )


def _write_federation(root):
    rng = random.Random(0)
    for c in range(2):
        d = root / f"client{c}"
        d.mkdir(parents=True)
        ents = [f"e{i}" for i in range(c * 4, c * 4 + 12)]
        for split, n in (("train", 60), ("valid", 8), ("test", 8)):
            lines = {
                f"{rng.choice(ents)}\tr{c}_{rng.randrange(3)}\t{rng.choice(ents)}"
                for _ in range(n)
            }
            (d / f"{split}.txt").write_text("\n".join(sorted(lines)) + "\n")


@pytest.mark.parametrize("algorithm", ["fede", "independent"])
def test_train_sampler_is_recorded_and_its_kwargs_checked(tmp_path, capsys, algorithm):
    data = tmp_path / "fed"
    _write_federation(data)
    argv = ["train", str(data), "--algorithm", algorithm, "--rounds", "1",
            "--local-epochs", "1", "--dim", "4", "--batch-size", "32",
            "--num-negatives", "4", "--eval-every", "1", "--quiet"]  # fmt: skip
    out = tmp_path / "run"
    assert main([*argv, "--out", str(out), "--sampler", "bernoulli"]) == 0
    settings = json.loads((out / "results.json").read_text())["settings"]
    if algorithm == "fede":
        assert (settings["sampler"], settings["sampler_kwargs"]) == ("bernoulli", {})
    else:  # a baseline records its first trainer's sampler
        assert settings["sampler"].startswith("BernoulliNegativeSampler(num_entities=")
    bad = tmp_path / "bad"
    assert main([*argv, "--out", str(bad), "--sampler-kwargs", "k=1"]) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .splitlines()[-1]
        .endswith(
            "`sampler_kwargs` key 'k' is not an argument of UniformNegativeSampler "
            "(its arguments: filtered, max_redraws)"
        )
    )
    assert not bad.exists()


def test_rgcn_refuses_the_sampler(tmp_path, capsys):
    argv = ["train", "aifb", "--model", "rgcn", "--algorithm", "fedavg",
            "--out", str(tmp_path / "o"), "--sampler", "bernoulli"]  # fmt: skip
    assert main(argv) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .splitlines()[-1]
        .endswith(
            "`--sampler bernoulli` applies to the KGE models only; --model rgcn "
            "does not read it (leave it out)"
        )
    )
    assert not (tmp_path / "o").exists()
