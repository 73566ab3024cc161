r"""A KGE model's own hyperparameters (``model_kwargs``, ``--model-kwargs``,
the Flower run-config key ``model-kwargs``) reach every client's model and
are checked against its constructor before anything runs."""

from __future__ import annotations

import json
import random

import pytest
from fedlu_toy import toy_federation

from fedgraph.cli.main import main
from fedgraph.federated.kge.setup import KGESettings, build_kge_federation


def test_model_kwargs_reach_every_client_model():
    fed = toy_federation()
    s = KGESettings(dim=4, model_kwargs={"p_norm": 2})
    assert s.model_kwargs == {"p_norm": 2.0}
    _, clients = build_kge_federation("fede", fed, s)
    assert [c.model.p_norm for c in clients.values()] == [2.0, 2.0]
    _, clients = build_kge_federation("fede", fed, KGESettings(dim=4))
    assert [c.model.p_norm for c in clients.values()] == [1.0, 1.0]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"model": "nope"}, "`model`: Could not resolve 'nope' among choices ["),
        ({"model_kwargs": {"q": 1}}, "`model_kwargs` key 'q' is not an argument "
         "of TransE (its arguments: epsilon, p_norm)"),
        ({"model": "rotate", "model_kwargs": {"p_norm": 1}}, "`model_kwargs` key "
         "'p_norm' is not an argument of RotatE (its arguments: epsilon)"),
        ({"model_kwargs": {"gamma": 1}}, "`model_kwargs` key 'gamma' is set by "
         "the run's `gamma` (--gamma)"),
    ],
)  # fmt: skip
def test_bad_model_kwargs_are_refused_when_the_settings_are_made(kwargs, message):
    with pytest.raises(ValueError) as exc:
        KGESettings(**kwargs)
    assert str(exc.value).startswith(message)


def test_the_model_constructor_checks_the_value():
    fed = toy_federation()
    with pytest.raises(ValueError, match=r"^`p_norm` must be 1 or 2 \(got 3.0\)$"):
        build_kge_federation(
            "fede", fed, KGESettings(dim=4, model_kwargs={"p_norm": 3})
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
def test_train_model_kwargs_are_recorded_and_checked(tmp_path, capsys, algorithm):
    data = tmp_path / "fed"
    _write_federation(data)
    argv = ["train", str(data), "--algorithm", algorithm, "--rounds", "1",
            "--local-epochs", "1", "--dim", "4", "--batch-size", "32",
            "--num-negatives", "4", "--eval-every", "1", "--quiet"]  # fmt: skip
    out = tmp_path / "run"
    assert main([*argv, "--out", str(out), "--model-kwargs", "p_norm=2"]) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["settings"]["model_kwargs"] == {"p_norm": 2.0}
    bad = tmp_path / "bad"
    assert main([*argv, "--out", str(bad), "--model-kwargs", "p=2"]) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .splitlines()[-1]
        .endswith(
            "`model_kwargs` key 'p' is not an argument of TransE (its arguments: "
            "epsilon, p_norm)"
        )
    )
    assert not bad.exists()


def test_rgcn_refuses_model_kwargs(tmp_path, capsys):
    argv = ["train", "aifb", "--model", "rgcn", "--algorithm", "fedavg",
            "--out", str(tmp_path / "o"), "--model-kwargs", "p_norm=2"]  # fmt: skip
    assert main(argv) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .splitlines()[-1]
        .endswith(
            "`--model-kwargs p_norm=2` applies to the KGE models only; --model rgcn "
            "does not read it (leave it out)"
        )
    )


def test_flower_run_config_key_model_kwargs():
    pytest.importorskip("flwr")
    from fedgraph.runtime.flower import FlowerRunSettings

    base = {"data": "x", "algorithm": "fede"}
    parsed = FlowerRunSettings.from_run_config({**base, "model-kwargs": "p_norm=2"})
    assert parsed.settings.model_kwargs == {"p_norm": 2.0}
    assert FlowerRunSettings.from_run_config(base).settings.model_kwargs == {}
    for value, message in [
        ("q=1", "Run-config key `model-kwargs` key 'q' is not an argument of "
         "TransE (its arguments: epsilon, p_norm)"),
        (2, "Run-config key `model-kwargs` must be a string of KEY=VALUE items "
         "(got 2)"),
        ("p_norm", "Run-config key `model-kwargs` expects KEY=VALUE (got 'p_norm')"),
    ]:  # fmt: skip
        with pytest.raises(ValueError) as exc:
            FlowerRunSettings.from_run_config({**base, "model-kwargs": value})
        assert str(exc.value) == message
    with pytest.raises(ValueError) as exc:
        FlowerRunSettings.from_run_config({**base, "model": "nope"})
    assert str(exc.value).startswith(
        "Run-config key `model`: Could not resolve 'nope' among choices ["
    )
