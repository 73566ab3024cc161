r"""The shipped recipes (:mod:`fedgraph.recipes`): each cites its source,
sets only options of ``fedgraph train`` and runs from Python."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "federated"))
from fedlu_toy import toy_federation  # noqa: E402

from fedgraph.cli.main import build_parser  # noqa: E402
from fedgraph.cli.regime_options import apply_recipe  # noqa: E402
from fedgraph.recipes import baseline_kwargs, load_recipe, recipe_names  # noqa: E402
from fedgraph.runtime.baselines import run_baseline  # noqa: E402


def test_the_shipped_recipes():
    assert recipe_names() == [
        "complex-n3-fb15k-237",
        "complex-n3-kinship",
        "complex-n3-nations",
        "rotate-fb15k-237",
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
        assert getattr(args, key) == value, key


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
