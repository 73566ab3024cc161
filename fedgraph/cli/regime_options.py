r"""The training-regime options of ``fedgraph train`` (``--regime``,
``--reciprocal``, ``--regularizer``, …) and ``--recipe``, in one group.

Imports nothing heavy: ``--regime``, ``--regime-loss`` and
``--regularizer`` take the library's names as read from source
(:data:`fedgraph.cli.choices.REGIMES`, :data:`~fedgraph.cli.choices.REGIME_LOSSES`,
:data:`~fedgraph.cli.choices.REGULARIZERS`).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from fedgraph.cli.choices import REGIME_LOSSES, REGIMES, REGULARIZERS
from fedgraph.cli.options import real, unit

#: option destination -> the regime setting it sets
REGIME_SETTINGS = {
    "regime_loss": "loss",
    "label_smoothing": "label_smoothing",
    "reciprocal": "reciprocal",
    "regularizer": "regularizer",
    "regularizer_weight": "regularizer_weight",
    "entity_dropout": "entity_dropout",
    "relation_dropout": "relation_dropout",
}

#: the options of this group (their ``argparse`` destinations): the KGE
#: models read them (:mod:`fedgraph.cli.family_options`)
REGIME_OPTIONS = ("regime", *REGIME_SETTINGS, "recipe")


def add_regime_arguments(p: argparse.ArgumentParser) -> None:
    r"""Adds the group "training regime (KGE)" to ``p``."""
    g = p.add_argument_group("training regime (KGE)")
    g.add_argument(
        "--regime",
        choices=REGIMES,
        default="negative-sampling",
        help="what a training step scores: sampled negatives (--loss, "
        "--num-negatives), or every entity for each triple (1vsall) or each "
        "distinct query (kvsall) (default: negative-sampling)",
    )
    g.add_argument(
        "--regime-loss",
        choices=REGIME_LOSSES,
        default=None,
        help="the loss over all entities of 1vsall / kvsall: cross-entropy or "
        "binary cross-entropy (default: ce for 1vsall, bce for kvsall)",
    )
    g.add_argument(
        "--label-smoothing",
        type=unit,
        default=0.0,
        help="1vsall / kvsall label smoothing in [0, 1) (default: 0)",
    )
    g.add_argument(
        "--reciprocal",
        action="store_true",
        help="reciprocal relations: an inverse per relation, tail queries only; "
        "evaluation ranks heads through the inverse",
    )
    g.add_argument(
        "--regularizer",
        choices=REGULARIZERS,
        default="none",
        help="embedding regulariser of each batch (default: none)",
    )
    g.add_argument(
        "--regularizer-weight",
        type=real(0, strict=False),
        default=0.0,
        help="its weight (default: 0)",
    )
    for what in ("entity", "relation"):
        g.add_argument(
            f"--{what}-dropout",
            type=unit,
            default=0.0,
            help=f"dropout on the {what} embeddings a training step scores "
            "(default: 0)",
        )
    g.add_argument(
        "--recipe",
        default=None,
        help="a shipped recipe (fedgraph/recipes/NAME.json, its source cited): "
        "its options apply wherever the command leaves an option at its "
        "default; choices: " + ", ".join(recipe_names()),
    )


def regime_settings(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    r"""``(regime, regime_kwargs)`` of the command line (the kwargs left at
    their defaults are left out, so the regime's own defaults apply)."""
    defaults = {
        "regime_loss": None,
        "label_smoothing": 0.0,
        "reciprocal": False,
        "regularizer": "none",
        "regularizer_weight": 0.0,
        "entity_dropout": 0.0,
        "relation_dropout": 0.0,
    }
    kwargs = {
        key: getattr(args, dest)
        for dest, key in REGIME_SETTINGS.items()
        if getattr(args, dest, defaults[dest]) != defaults[dest]
    }
    return str(getattr(args, "regime", "negative-sampling")), kwargs


def recipe_names() -> list[str]:
    r"""The shipped recipes (:mod:`fedgraph.recipes`)."""
    from fedgraph.recipes import recipe_names as names

    return names()


def apply_recipe(args: argparse.Namespace, defaults: dict[str, Any]) -> None:
    r"""Sets each option of ``args.recipe``'s ``"train"`` table whose value
    in ``args`` is still its parser default (``defaults``): what the
    command gives explicitly wins. The recipe's ``model_kwargs`` table goes
    before the command's own ``--model-kwargs`` items, so that a key the
    command sets wins. Nothing without ``--recipe``."""
    if not getattr(args, "recipe", None):
        return
    from fedgraph.recipes import load_recipe

    recipe = load_recipe(args.recipe)
    for dest, value in recipe["train"].items():
        if not hasattr(args, dest):
            raise ValueError(
                f"recipe {args.recipe!r}: {dest!r} is no option of `fedgraph train`"
            )
        if dest == "model_kwargs":  # a table: the command's own items win
            items = [f"{k}={json.dumps(v)}" for k, v in value.items()]
            setattr(args, dest, items + list(args.model_kwargs))
        elif getattr(args, dest) == defaults.get(dest):
            setattr(args, dest, value)


def recipe_defaults(p: argparse.ArgumentParser) -> dict[str, Any]:
    r"""The parser defaults of every option a shipped recipe sets (what
    :func:`apply_recipe` compares with)."""
    from fedgraph.recipes import load_recipe

    keys = {k for name in recipe_names() for k in load_recipe(name)["train"]}
    return {dest: p.get_default(dest) for dest in sorted(keys)}


__all__ = [
    "REGIME_OPTIONS",
    "REGIME_SETTINGS",
    "add_regime_arguments",
    "regime_settings",
    "apply_recipe",
    "recipe_defaults",
    "recipe_names",
]
