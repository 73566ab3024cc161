r"""The files FedE's model fusion reads: the Independent (single-KG) models of
a ``fedgraph train --algorithm independent`` run and their settings."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fedgraph.models.kge import KGEModel


def single_model_settings(
    single_dir: str | os.PathLike[str],
    fallback: Mapping[str, Any],
    results: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    r"""Model, its own keyword arguments, width and margin of the
    Independent models in ``single_dir``:
    read from ``results`` (default: ``single_dir/results.json``) when it
    exists, else ``fallback``'s ``model``/``dim``/``gamma`` (the federated
    run's). A results file of another setting raises a :class:`ValueError`
    naming it."""
    path = Path(results) if results is not None else Path(single_dir) / "results.json"
    if not path.is_file():
        return {
            "model": fallback["model"],
            "dim": int(fallback["dim"]),
            "gamma": float(fallback["gamma"]),
            "model_kwargs": dict(fallback.get("model_kwargs", {})),
            "from": "the federated run (no Independent results file)",
        }
    s = json.loads(path.read_text()).get("settings", {})
    if s.get("setting", "independent") != "independent":
        raise ValueError(f"Single-model results {path} are a {s.get('setting')!r} run")
    return {
        "model": s.get("model", fallback["model"]),
        "dim": int(s.get("hidden_channels", fallback["dim"])),
        "gamma": float(s.get("gamma", fallback["gamma"])),
        "model_kwargs": dict(s.get("model_kwargs", {})),
        "from": str(path),
    }


def best_weights(path: str | os.PathLike[str]) -> dict[str, Any]:
    r"""The state dict of the best validation's model in ``path`` (a
    :class:`~fedgraph.training.kge_trainer.KGETrainer` checkpoint), or its
    last model when it recorded no best."""
    from fedgraph.data.checkpoint import load_checkpoint

    state = load_checkpoint(path, keys=("model",))
    return state["best_state"] if state.get("best_state") else state["model"]


def load_single_model(
    single_dir: str | os.PathLike[str], shard: Any, settings: Mapping[str, Any]
) -> KGEModel:
    r"""Client ``shard.client_id``'s best Independent model from
    ``single_dir/trainerK.pt`` (a
    :class:`~fedgraph.training.kge_trainer.KGETrainer` checkpoint), built as
    ``settings`` (:func:`single_model_settings`) says, on the CPU. A missing
    file or one that does not fit the client raises an error naming it."""
    from fedgraph.models.kge import resolve_model

    c = shard.client_id
    path = Path(single_dir) / f"trainer{c}.pt"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found: the single-model folder must hold the Independent "
            f"run's trainer{c}.pt for client {c}"
        )
    weights = best_weights(path)
    model = resolve_model(
        settings["model"],
        shard.num_entities,
        shard.num_relations,
        settings["dim"],
        gamma=settings["gamma"],
        **settings.get("model_kwargs", {}),
    )
    try:
        model.load_state_dict(weights)
    except RuntimeError as exc:
        raise ValueError(
            f"{path} does not fit client {c} ({shard.num_entities} entities, "
            f"{shard.num_relations} relations, {settings['model']} dim "
            f"{settings['dim']}): is it the same partition and model? "
            f"({str(exc).splitlines()[0]})"
        ) from None
    return model


__all__ = ["best_weights", "single_model_settings", "load_single_model"]
