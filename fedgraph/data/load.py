r"""Name → dataset resolution and the one-call loaders."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from fedgraph.data.dataset import KGDataset
from fedgraph.data.triples import Duplicates
from fedgraph.registry import normalize_name, resolve_class
from fedgraph.validate import check_instance


def _registry() -> list[type[KGDataset]]:
    from fedgraph.data import datasets

    return datasets


def dataset_aliases(choices: list[type[KGDataset]]) -> dict[str, type[KGDataset]]:
    r"""Every registry ``name`` and ``aliases`` entry → its class."""
    out: dict[str, type[KGDataset]] = {}
    for cls in choices:
        for alias in (cls.name, *cls.aliases):
            out[alias] = cls
    return out


def resolve_dataset(name: str | type[KGDataset]) -> type[KGDataset]:
    r"""The dataset class registered under ``name`` (case, ``-`` and ``_``
    ignored: ``"fb15k-237"``, ``"FB15k_237"`` and ``"fb15k237"`` agree).

    Raises:
        ValueError: ``Could not resolve 'NAME' among choices [...]`` (the
            choices are the registered dataset names).
    """
    choices = _registry()
    try:
        return resolve_class(name, choices, aliases=dataset_aliases(choices))
    except ValueError:
        raise ValueError(
            f"Could not resolve dataset '{name}' among choices "
            f"{[c.name for c in choices]}"
        ) from None


def load_dataset(
    name: str | os.PathLike[str],
    root: str | os.PathLike[str] | None = None,
    **kwargs: Any,
) -> Any:
    r"""Loads a registered dataset, or a dataset folder, by name.

    Args:
        name (str or Path): a registered name (see ``fedgraph datasets``)
            or the path of a folder holding either ``train.txt``,
            ``valid.txt``, ``test.txt`` (→ :class:`KnowledgeGraph`) or client
            folders ``client0/ …`` (→ :class:`FederatedKG`).
        root (str or Path, optional): data root (default: ``FEDGRAPH_DATA``,
            else the user cache).
        **kwargs: passed to the dataset class (``force_reload``,
            ``download``, ``duplicates`` …).

    Returns:
        The dataset's object: a :class:`~fedgraph.data.KnowledgeGraph`,
        :class:`~fedgraph.data.shard.FederatedKG`,
        :class:`~fedgraph.data.MultilingualKG` or PyG ``HeteroData``.

    Raises:
        TypeError: ``name`` or ``root`` is neither a string nor a path.
        ValueError: ``name`` is neither a registered name nor a folder.
    """
    check_instance(name, "name", (str, os.PathLike))
    if root is not None:
        check_instance(root, "root", (str, os.PathLike))
    if is_folder_query(name):
        return load_folder(name, **kwargs)
    text = str(name)
    if _has_separator(text):  # a path that is not a folder
        raise ValueError(
            f"Dataset folder '{text}' does not exist (or is not a folder); a "
            "registered name is one of "
            f"{[c.name for c in _registry()]}"
        )
    return resolve_dataset(text)(root, **kwargs).get()


def _has_separator(name: str) -> bool:
    r"""Whether ``name`` holds a path separator (no registered name does)."""
    return os.sep in name or bool(os.altsep and os.altsep in name)


def is_folder_query(name: str | os.PathLike[str]) -> bool:
    r"""Whether ``name`` means a folder rather than a registered name: a
    ``PathLike``, or an existing folder given with a path separator or that
    no registered name matches (registered names win otherwise)."""
    if isinstance(name, os.PathLike):
        return True
    if not Path(name).is_dir():
        return False
    if _has_separator(name):
        return True
    try:
        resolve_dataset(name)
    except ValueError:
        return True
    return False


def load_folder(
    path: str | os.PathLike[str],
    *,
    duplicates: Duplicates = "keep",
    force_reload: bool = False,
    download: bool = False,
) -> Any:
    r"""Reads a triple folder (``train.txt valid.txt test.txt`` [+
    ``unlearn.txt``]) or a federated client-folder layout. Folders are read
    directly (no cache, nothing to download): ``force_reload`` and
    ``download`` are accepted for signature compatibility and ignored."""
    from fedgraph.data.federated import load_federated_folder
    from fedgraph.data.triples import read_triple_folder

    del force_reload, download
    path = Path(path)
    if (path / "train.txt").is_file() and not (path / "META.json").is_file():
        return read_triple_folder(
            path, duplicates=duplicates, extra_splits=("unlearn",)
        )
    return load_federated_folder(path, duplicates=duplicates)


__all__ = [
    "resolve_dataset",
    "load_dataset",
    "load_folder",
    "is_folder_query",
    "normalize_name",
]
