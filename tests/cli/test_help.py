r"""The command line answers fast (no torch import), documents every option,
and offers the names its registries hold."""

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fedgraph.cli import choices
from fedgraph.cli.main import build_parser

REPO = Path(__file__).resolve().parents[2]


def _subparsers(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def test_every_option_of_every_subcommand_has_help():
    missing = []
    for name, sub in _subparsers(build_parser()):
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if not (action.help or "").strip():
                missing.append(
                    f"{name} {'/'.join(action.option_strings) or action.dest}"
                )
    assert not missing, f"options without help: {missing}"


def test_model_and_loss_show_their_choices(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["train", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    # the registries' names (rgcn, text: families), read from source
    assert "{" + ",".join([*choices.KGE_MODELS, "rgcn", "text"]) + "}" in out
    assert {"transe", "distmult", "complex", "rotate"} <= set(choices.KGE_MODELS)
    assert "{" + ",".join(choices.KGE_LOSSES) + "}" in out
    assert {"nssa", "sigmoid-ns", "margin-ranking"} <= set(choices.KGE_LOSSES)
    assert "--sampler {bernoulli,uniform}" in out
    assert "bernoulli: filtered (False), max_redraws (10);" in out
    # each model's own keyword arguments (--model-kwargs), read from source
    assert "transe: epsilon (2.0), p_norm (1.0)" in out
    assert "rotate: epsilon (2.0);" in out


def test_cli_choices_are_the_registries():
    from fedgraph.eval.protocol import MODELS_SCORED, protocols
    from fedgraph.federated.kge.setup import kge_algorithms
    from fedgraph.models.kge import models
    from fedgraph.models.losses import losses
    from fedgraph.models.samplers import samplers
    from fedgraph.partition import partitioners
    from fedgraph.runtime.batched import LOCAL_TRAINING
    from fedgraph.runtime.loop import SELECTIONS
    from fedgraph.runtime.trained import CHECKPOINTS
    from fedgraph.training.optimizers import DEFAULT_OPTIMIZER, OPTIMIZERS
    from fedgraph.training.sample_on import SAMPLE_ON

    assert choices.KGE_ALGORITHMS == tuple(sorted(kge_algorithms()))
    assert choices.KGE_MODELS == tuple(models.names())
    assert choices.KGE_LOSSES == tuple(losses.names())
    assert choices.SAMPLERS == tuple(samplers.names())
    assert choices.PARTITIONERS == tuple(partitioners.names())
    assert choices.SELECTIONS == SELECTIONS
    assert choices.LOCAL_TRAINING == LOCAL_TRAINING
    assert choices.SAMPLE_ON == SAMPLE_ON
    assert choices.EVAL_PROTOCOLS == tuple(sorted(protocols))
    assert choices.MODELS_SCORED == MODELS_SCORED
    assert choices.CHECKPOINTS == CHECKPOINTS
    assert choices.OPTIMIZERS == OPTIMIZERS and OPTIMIZERS[0] == DEFAULT_OPTIMIZER


def test_evaluate_with_and_checkpoint_offer_the_librarys_values(capsys):
    # the command line offers what the library accepts, and the library
    # refuses anything else with the same list
    from fedgraph.cli.main import main
    from fedgraph.federated.kge.fede import FedE
    from fedgraph.runtime.trained import load_trained_run

    for argv, listed in (
        (["train", "--help"], "--evaluate-with {local,global}"),
        (["fuse", "--help"], "--checkpoint {best,last}"),
        (["unlearn", "--help"], "--checkpoint {best,last}"),
    ):
        with pytest.raises(SystemExit):
            main(argv)
        assert listed in capsys.readouterr().out
    with pytest.raises(ValueError, match=r"one of \('local', 'global'\)"):
        FedE(num_entities=3, entity_dim=2, init_range=0.1, evaluate_with="both")
    with pytest.raises(ValueError, match=r"one of \('best', 'last'\)"):
        load_trained_run(Path("nowhere"), "first")


def test_the_regime_options_offer_the_libraries_names(capsys):
    # `--regime-loss` and `--regularizer` are read from the regimes' source:
    # the all-entity losses, and "none" plus every regulariser class
    from fedgraph.runtime.pipeline_kge import KGE_BASELINES
    from fedgraph.training.regimes import ALL_ENTITY_LOSSES
    from fedgraph.training.regimes.regularizers import (
        regularizers,
        resolve_regularizer,
    )

    assert choices.REGIME_LOSSES == ALL_ENTITY_LOSSES == ("ce", "bce")
    names = tuple(regularizers.names())
    assert choices.REGULARIZERS == ("none", *names) == ("none", "n3", "l2")
    for name in names:  # each name resolves to its class
        assert type(resolve_regularizer(name, 0.5)).__name__.lower().startswith(name)
    assert choices.BASELINES == KGE_BASELINES
    with pytest.raises(SystemExit):
        build_parser().parse_args(["train", "--help"])
    out = "".join(capsys.readouterr().out.split())
    assert "--regime-loss{" + ",".join(choices.REGIME_LOSSES) + "}" in out
    assert "--regularizer{" + ",".join(choices.REGULARIZERS) + "}" in out


def test_a_constant_is_read_from_its_modules_source():
    from fedgraph.declared import source_constant

    assert source_constant("fedgraph.privacy.record", "KEEP") == (
        "last",
        "all",
    )
    keys = source_constant("fedgraph.eval.protocol", "protocols")
    assert keys == ("fedlu", "fede")  # a dict: its keys, in source order
    with pytest.raises(ValueError, match=r"protocol\.py: no module-level `nope`$"):
        source_constant("fedgraph.eval.protocol", "nope")


@pytest.mark.parametrize("kind", ["model", "loss", "partitioner"])
def test_the_source_view_of_each_registry_is_the_imported_one(kind):
    # `--help` reads the classes from source (no torch); the registry
    # imports them: same names, classes, modules, keyword arguments, help
    from fedgraph.declared import declared_components
    from fedgraph.models.kge import models
    from fedgraph.models.losses import losses
    from fedgraph.partition import partitioners

    registry = {"model": models, "loss": losses, "partitioner": partitioners}[kind]
    assert declared_components(kind) == registry.describe()
    assert len(registry.describe()) == len(registry) >= 3


def test_model_names_ignore_case_and_dashes():
    args = build_parser().parse_args(
        ["train", "d", "--algorithm", "fede", "--out", "o", "--model", "TransE"]
    )
    assert args.model == "transe"


def _python(*args):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, check=False
    )


@pytest.mark.parametrize(
    "argv", [["--version"], ["--help"], ["train", "--help"], ["partition", "--help"]]
)
def test_help_and_version_import_no_torch(argv):
    res = _python("-X", "importtime", "-m", "fedgraph", *argv)
    assert res.returncode == 0, res.stderr
    imported = [line.split("|")[-1].strip() for line in res.stderr.splitlines()]
    assert not [m for m in imported if m.split(".")[0] in ("torch", "numpy")]


def test_python_dash_m_fedgraph_runs_the_cli():
    res = _python("-m", "fedgraph", "--version")
    assert res.returncode == 0 and res.stdout.strip() == "0.1.0"
    res = _python("-m", "fedgraph", "train", "--batch-size", "0")
    assert res.returncode == 2 and "Traceback" not in res.stderr
