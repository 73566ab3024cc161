r"""``fedgraph train``'s training-regime options, ``--recipe`` and
``--patience 0`` for the baselines."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "federated"))
from fedlu_toy import write_toy_folders  # noqa: E402

from fedgraph.cli.main import build_parser, main  # noqa: E402
from fedgraph.cli.regime_options import (  # noqa: E402
    apply_recipe,
    regime_settings,
)
from fedgraph.recipes import baseline_kwargs, load_recipe, recipe_names  # noqa: E402
from fedgraph.training.regimes import DEFAULT_REGIME, regimes  # noqa: E402


def _args(*extra):
    return build_parser().parse_args(
        ["train", "d", "--algorithm", "centralized", "--out", "o", *extra]
    )


def test_the_regime_choices_are_the_registry_names(capsys):
    # `--regime` takes the registry's names, read from the regimes' source
    # (no hand list): each parses, the default is the library's
    assert _args().regime == DEFAULT_REGIME
    for name in regimes.names():
        assert _args("--regime", name).regime == name
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = "".join(capsys.readouterr().out.split())
    assert "--regime{" + ",".join(regimes.names()) + "}" in out
    assert {"negative-sampling", "1vsall", "kvsall"} <= set(regimes.names())


def test_options_become_the_regime_and_its_settings():
    assert regime_settings(_args()) == ("negative-sampling", {})
    args = _args(
        "--regime", "1vsall", "--reciprocal", "--regularizer", "n3",
        "--regularizer-weight", "0.05", "--label-smoothing", "0.1",
        "--entity-dropout", "0.2",
    )  # fmt: skip
    assert regime_settings(args) == (
        "1vsall",
        {
            "label_smoothing": 0.1,
            "reciprocal": True,
            "regularizer": "n3",
            "regularizer_weight": 0.05,
            "entity_dropout": 0.2,
        },
    )


def test_a_recipe_fills_the_options_left_at_their_defaults():
    args = _args("--recipe", "complex-n3-fb15k-237", "--lr", "0.01")
    apply_recipe(args, args.recipe_option_defaults)
    assert (args.model, args.dim, args.regime, args.reciprocal) == (
        "complex", 1000, "1vsall", True,
    )  # fmt: skip
    assert args.regularizer == "n3" and args.regularizer_weight == 0.05
    assert args.lr == 0.01  # given on the command line: kept
    recipe = load_recipe("complex-n3-fb15k-237")
    assert recipe["source"]["reported"]["mrr"] == 0.37
    assert "complex-n3-fb15k-237" in recipe_names()
    assert baseline_kwargs("complex-n3-fb15k-237")["regime_kwargs"] == {
        "loss": "ce",
        "reciprocal": True,
        "regularizer": "n3",
        "regularizer_weight": 0.05,
    }
    with pytest.raises(ValueError, match="`recipe` 'nope' is not a shipped recipe"):
        load_recipe("nope")


@pytest.mark.parametrize("algorithm", ["centralized", "independent"])
def test_baselines_train_under_a_regime_with_patience_0(algorithm, tmp_path, capsys):
    write_toy_folders(tmp_path / "data")
    out = tmp_path / "out"
    code = main([
        "train", str(tmp_path / "data"), "--algorithm", algorithm, "--dim", "4",
        "--rounds", "3", "--eval-every", "1", "--patience", "0", "--lr", "0.01",
        "--model", "complex", "--regime", "1vsall", "--reciprocal",
        "--regularizer", "n3", "--regularizer-weight", "0.01", "--out", str(out),
        "--quiet",
    ])  # fmt: skip
    assert code == 0
    res = json.loads((out / "results.json").read_text())
    assert res["rounds"] == 3  # never stopped early
    assert res["settings"]["regime"] == {
        "name": "1vsall",
        "loss": "ce",
        "label_smoothing": 0.0,
        "reciprocal": True,
        "regularizer": "n3",
        "regularizer_weight": 0.01,
        "entity_dropout": 0.0,
        "relation_dropout": 0.0,
    }


def test_bad_regime_values_exit_2(tmp_path, capsys):
    write_toy_folders(tmp_path / "data")
    code = main([
        "train", str(tmp_path / "data"), "--algorithm", "centralized",
        "--regime", "negative-sampling", "--regularizer-weight", "0.5",
        "--out", str(tmp_path / "out"),
    ])  # fmt: skip
    assert code == 2
    assert "`regularizer_weight` needs a `regularizer`" in capsys.readouterr().err


@pytest.mark.parametrize("algorithm", ["fede", "fedlu"])
def test_federated_runs_take_the_regime(algorithm, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")
    write_toy_folders(tmp_path / "data")
    out = tmp_path / "out"
    code = main([
        "train", str(tmp_path / "data"), "--algorithm", algorithm, "--dim", "4",
        "--rounds", "2", "--eval-every", "1", "--lr", "0.01", "--model", "complex",
        "--regime", "kvsall", "--label-smoothing", "0.1", "--out", str(out),
        "--quiet",
    ])  # fmt: skip
    assert code == 0
    res = json.loads((out / "results.json").read_text())
    assert res["settings"]["regime"] == "kvsall"
    assert res["settings"]["regime_kwargs"] == {"label_smoothing": 0.1}
