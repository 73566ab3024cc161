r"""Training recipes as data: one JSON file per model and dataset, each with
its source cited (like PyKEEN's reproducibility configurations).

A recipe holds ``"name"``, ``"dataset"``, ``"source"`` (citation, link, the
source's own settings and reported numbers), ``"train"`` (options of
``fedgraph train``, by their ``argparse`` destination: ``model``, ``dim``,
``regime``, ``reciprocal``…; ``model_kwargs`` as a table of the model's own
hyperparameters) and ``"deviations"`` (where fedgraph cannot
follow the source, and why). ``fedgraph train DATASET --algorithm
centralized --recipe NAME --out …`` runs one; :func:`pipeline_kwargs` and
:func:`baseline_kwargs` give the same settings as keyword arguments of
:func:`fedgraph.runtime.pipeline.pipeline` and
:func:`fedgraph.runtime.baselines.run_baseline`.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

#: the corruption modes of ``--corrupt both``
MODES = ("head-batch", "tail-batch")

#: the keys every recipe file holds
RECIPE_KEYS = ("name", "dataset", "source", "train", "deviations")


def recipe_names() -> list[str]:
    r"""The shipped recipes' names, sorted."""
    files = resources.files(__name__).iterdir()
    return sorted(f.name[: -len(".json")] for f in files if f.name.endswith(".json"))


def load_recipe(name: str) -> dict[str, Any]:
    r"""The recipe ``name`` as a dict.

    Raises:
        ValueError: an unknown name (the message lists the recipes) or a
            file without the keys of :data:`RECIPE_KEYS`.
    """
    known = recipe_names()
    if name not in known:
        raise ValueError(f"`recipe` {name!r} is not a shipped recipe (known: {known})")
    text = resources.files(__name__).joinpath(f"{name}.json").read_text()
    recipe = json.loads(text)
    missing = [k for k in RECIPE_KEYS if k not in recipe]
    if missing:
        raise ValueError(f"recipe {name!r} lacks the keys {missing}")
    return recipe


#: ``fedgraph train`` option -> keyword of ``run_baseline`` / ``KGETrainer``
_BASELINE_KEYS = {
    "model": "model",
    "dim": "hidden_channels",
    "gamma": "gamma",
    "lr": "lr",
    "batch_size": "batch_size",
    "num_negatives": "num_negatives",
    "rounds": "max_epochs",
    "eval_every": "eval_every",
    "patience": "patience",
    "regime": "regime",
    "loss": "loss",
    "optimizer": "optimizer",
    "model_kwargs": "model_kwargs",
}

#: ``fedgraph train`` option -> the regime setting it sets
_REGIME_KEYS = {
    "regime_loss": "loss",
    "label_smoothing": "label_smoothing",
    "reciprocal": "reciprocal",
    "regularizer": "regularizer",
    "regularizer_weight": "regularizer_weight",
    "entity_dropout": "entity_dropout",
    "relation_dropout": "relation_dropout",
}


def baseline_kwargs(name: str) -> dict[str, Any]:
    r"""The recipe ``name`` as keyword arguments of
    :func:`fedgraph.runtime.baselines.run_baseline` (``model``,
    ``hidden_channels``, ``lr``, ``loss``, ``regime``, ``regime_kwargs``,
    ``subsampling``, ``shared_negatives``, ``modes``…)."""
    train = load_recipe(name)["train"]
    out: dict[str, Any] = {
        _BASELINE_KEYS[k]: v for k, v in train.items() if k in _BASELINE_KEYS
    }
    regime_kwargs = {_REGIME_KEYS[k]: v for k, v in train.items() if k in _REGIME_KEYS}
    if regime_kwargs:
        out["regime_kwargs"] = regime_kwargs
    if "no_subsampling" in train:
        out["subsampling"] = not train["no_subsampling"]
    if "per_positive_negatives" in train:
        out["shared_negatives"] = not train["per_positive_negatives"]
    if "corrupt" in train:  # the corruption modes of `fedgraph train --corrupt`
        out["modes"] = {"both": MODES, "tail": ("tail-batch",)}[train["corrupt"]]
    return out


#: ``fedgraph train`` option -> field of ``KGESettings`` (``pipeline``'s
#: ``training``)
_TRAINING_KEYS = {
    "dim": "dim",
    "gamma": "gamma",
    "lr": "lr",
    "batch_size": "batch_size",
    "num_negatives": "num_negatives",
    "loss": "loss",
    "regime": "regime",
    "optimizer": "optimizer",
    "model_kwargs": "model_kwargs",
}

#: ``fedgraph train`` option -> field of ``LoopSettings`` (``pipeline``'s
#: ``loop``)
_LOOP_KEYS = {
    "rounds": "num_rounds",
    "eval_every": "eval_every",
    "patience": "patience",
}


def pipeline_kwargs(name: str) -> dict[str, Any]:
    r"""The recipe ``name`` as keyword arguments of
    :func:`fedgraph.runtime.pipeline.pipeline`: ``model``, ``training`` (the
    :class:`~fedgraph.federated.kge.setup.KGESettings` fields, with
    ``regime`` and ``regime_kwargs``), ``loop`` (rounds, evaluation,
    patience), ``corrupt`` and ``subsampling``; a caller's own
    ``dataset`` and ``algorithm`` complete them, e.g.
    ``pipeline("fb15k-237", algorithm="centralized", **pipeline_kwargs(name))``."""
    train = load_recipe(name)["train"]
    training = {_TRAINING_KEYS[k]: v for k, v in train.items() if k in _TRAINING_KEYS}
    regime_kwargs = {_REGIME_KEYS[k]: v for k, v in train.items() if k in _REGIME_KEYS}
    if regime_kwargs:
        training["regime_kwargs"] = regime_kwargs
    if "per_positive_negatives" in train:
        training["shared_negatives"] = not train["per_positive_negatives"]
    out: dict[str, Any] = {"training": training}
    if "model" in train:
        out["model"] = train["model"]
    loop = {_LOOP_KEYS[k]: v for k, v in train.items() if k in _LOOP_KEYS}
    if loop:
        out["loop"] = loop
    if "corrupt" in train:
        out["corrupt"] = train["corrupt"]
    if "no_subsampling" in train:
        out["subsampling"] = not train["no_subsampling"]
    return out


__all__ = [
    "RECIPE_KEYS",
    "recipe_names",
    "load_recipe",
    "baseline_kwargs",
    "pipeline_kwargs",
]
