r"""The shipped recipes (:mod:`fedgraph.recipes`): each cites its source,
sets only options of ``fedgraph train`` and runs from Python."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "federated"))
from fedlu_toy import toy_federation  # noqa: E402

from fedgraph.cli.main import build_parser  # noqa: E402
from fedgraph.cli.regime_options import apply_recipe  # noqa: E402
from fedgraph.federated.algorithms import parse_assignments  # noqa: E402
from fedgraph.recipes import baseline_kwargs, load_recipe, recipe_names  # noqa: E402
from fedgraph.runtime.baselines import run_baseline  # noqa: E402


def test_the_shipped_recipes():
    assert recipe_names() == [
        "complex-libkge-fb15k-237",
        "complex-n3-fb15k-237",
        "complex-n3-kinship",
        "complex-n3-nations",
        "distmult-libkge-fb15k-237",
        "rotate-fb15k-237",
        "transe-libkge-fb15k-237",
    ]


@pytest.mark.parametrize("name", recipe_names())
def test_each_recipe_cites_its_source_and_sets_train_options(name):
    recipe = load_recipe(name)
    assert recipe["name"] == name and name.endswith(recipe["dataset"])
    source = recipe["source"]
    assert source["citation"] and source["code"].startswith("https://github.com/")
    assert 0 < source["reported"]["mrr"] < 1
    args = build_parser().parse_args(
        ["train", "d", "--algorithm", "centralized", "--out", "o", "--recipe", name]
    )
    apply_recipe(args, args.recipe_option_defaults)
    for key, value in recipe["train"].items():
        if key == "model_kwargs":  # a table in the recipe, KEY=VALUE items here
            value = [f"{k}={json.dumps(v)}" for k, v in value.items()]
        assert getattr(args, key) == value, key


def test_a_recipes_model_kwargs_go_before_the_commands_own():
    args = build_parser().parse_args(
        ["train", "d", "--algorithm", "centralized", "--out", "o",
         "--recipe", "transe-libkge-fb15k-237", "--model-kwargs", "p_norm=1"]
    )  # fmt: skip
    apply_recipe(args, args.recipe_option_defaults)
    assert parse_assignments(args.model_kwargs) == {"p_norm": 1, "epsilon": 0.00128}


@pytest.mark.parametrize("name", recipe_names())
def test_each_recipe_sets_the_same_options_from_python(name):
    r"""Every option of a recipe's ``train`` table reaches ``run_baseline``
    and ``pipeline``: the optimiser and the model's own hyperparameters too."""
    from fedgraph.recipes import pipeline_kwargs

    train = load_recipe(name)["train"]
    base, pipe = baseline_kwargs(name), pipeline_kwargs(name)
    for key in ("optimizer", "model_kwargs", "gamma", "lr", "batch_size"):
        if key in train:
            assert base[key] == pipe["training"][key] == train[key], key
    assert base["hidden_channels"] == pipe["training"]["dim"] == train["dim"]


@pytest.mark.parametrize("name", recipe_names())
def test_each_recipe_runs_from_python(name, tmp_path, monkeypatch):
    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")
    kwargs = {
        **baseline_kwargs(name),
        "hidden_channels": 4,  # the recipe's settings, on a toy scale
        "max_epochs": 2,
        "eval_every": 1,
        "batch_size": 16,
        "num_negatives": 4,
    }
    res = run_baseline(
        toy_federation(), setting="centralized", out=tmp_path, log=False, **kwargs
    )
    assert 0 < res["weighted"]["mrr"] <= 1
    train = load_recipe(name)["train"]
    settings = json.loads((tmp_path / "results.json").read_text())["settings"]
    assert settings["optimizer"] == train.get("optimizer", "adam")
    assert settings["model_kwargs"] == {
        **settings["model_kwargs"],
        **train.get("model_kwargs", {}),
    }


@pytest.mark.parametrize("name", recipe_names())
def test_each_recipe_runs_through_the_pipeline(name, monkeypatch):
    from fedgraph.recipes import pipeline_kwargs
    from fedgraph.runtime.pipeline import pipeline

    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")
    kwargs = pipeline_kwargs(name)
    recipe = load_recipe(name)["train"]
    assert kwargs["model"] == recipe["model"]
    assert kwargs["training"]["regime"] == recipe["regime"]
    assert kwargs["loop"]["num_rounds"] == recipe["rounds"]
    # on a toy scale: the recipe's regime and loss, tiny tables, two epochs
    kwargs["training"].update(dim=4, batch_size=16, num_negatives=4)
    kwargs["loop"].update(num_rounds=2, eval_every=1)
    res = pipeline(toy_federation(), algorithm="centralized", **kwargs)
    assert 0 < res.metrics["mrr"] <= 1
