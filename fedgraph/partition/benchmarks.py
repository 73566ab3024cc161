r"""Named federated benchmarks: small JSON recipes in the repository's
``datasets/`` folder (not data), built or loaded by :func:`load_benchmark`.

A recipe either *builds* a partition::

    {"name": "FB15k-237-Fed3", "source": "fb15k-237", "strategy": "relation",
     "num_clients": 3, "seed": 0, "kwargs": {"ratios": [0.8, 0.1, 0.1]}}

(``source`` goes to :func:`fedgraph.data.load_dataset`, ``strategy`` to
:func:`~fedgraph.partition.resolve_partitioner`), or *loads* a published one
from the data root::

    {"name": "FB15k-237-R3", "published": "fedlu-fb15k-237/R3"}

(read with :func:`fedgraph.data.load_federated_folder`). Built partitions are
cached under ``$FEDGRAPH_CACHE/partitions/NAME`` in the
:mod:`~fedgraph.partition.io` layout and rebuilt when the recipe changes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from fedgraph.data.federated import load_federated_folder
from fedgraph.data.load import load_dataset
from fedgraph.data.root import get_cache_dir, get_data_root
from fedgraph.partition.io import (
    KINDS,
    PartitionFormatError,
    load_partition,
    save_partition,
)

RECIPES = Path(__file__).resolve().parents[2] / "datasets"


def _recipe_dir() -> Path:
    return Path(os.environ.get("FEDGRAPH_RECIPES", RECIPES))


def benchmark_names() -> list[str]:
    r"""Names of the recipes in ``datasets/`` (sorted)."""
    return sorted(
        json.loads(p.read_text(encoding="utf-8"))["name"]
        for p in _recipe_dir().glob("*.json")
    )


def get_recipe(name: str) -> dict[str, Any]:
    r"""The recipe called ``name`` (case-insensitive)."""
    path = _recipe_dir() / f"{name.lower()}.json"
    if not path.is_file():
        raise ValueError(f"Unknown benchmark `{name}` (choices: {benchmark_names()})")
    return json.loads(path.read_text(encoding="utf-8"))


def load_benchmark(
    name: str,
    *,
    root: str | os.PathLike[str] | None = None,
    cache: bool = True,
    progress: bool = False,
) -> Any:
    r"""Builds (or loads from cache) the named federated benchmark.

    Args:
        name (str): a recipe name, e.g. ``"FB15k-237-Fed3"`` or
            ``"FB15k-237-R3"`` (see :func:`benchmark_names`).
        root (str or PathLike, optional): raw data root (default:
            ``FEDGRAPH_DATA``, see :func:`fedgraph.data.get_data_root`).
        cache (bool, optional): keep built partitions under
            ``$FEDGRAPH_CACHE/partitions``. (default: :obj:`True`)
        progress (bool, optional): show tqdm progress. (default: :obj:`False`)

    Returns:
        FederatedKG: the client shards (or the kind the recipe's partitioner
        produces, e.g. RDF shards).
    """
    # the registry of the package that re-exports this module
    from fedgraph.partition import resolve_partitioner

    recipe = get_recipe(name)
    if "published" in recipe:
        folder = get_data_root(root) / recipe["published"]
        fed = load_federated_folder(folder)
        fed.meta.setdefault("benchmark", recipe["name"])
        return fed
    target = get_cache_dir() / "partitions" / recipe["name"].lower()
    if cache and target.exists():
        try:
            fed = load_partition(target)
            if fed.meta.get("recipe") == recipe:
                return fed
        except (PartitionFormatError, FileNotFoundError):
            pass  # stale or broken cache: rebuild below
    graph = load_dataset(recipe["source"], root=root)
    partitioner = resolve_partitioner(
        recipe["strategy"],
        int(recipe["num_clients"]),
        seed=int(recipe.get("seed", 0)),
        **recipe.get("kwargs", {}),
    )
    fed = partitioner(graph)
    fed.meta["recipe"] = recipe
    fed.meta["benchmark"] = recipe["name"]
    if cache and any(isinstance(fed, k.cls) for k in KINDS.values()):
        save_partition(fed, target, overwrite=True)
    return fed


__all__ = ["load_benchmark", "benchmark_names", "get_recipe"]
