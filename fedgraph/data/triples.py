r"""Tab-separated ``head relation tail`` files → :class:`KnowledgeGraph`.

The format of FB15k-237, Nations, Kinship, UMLS and the FedLU client folders:
one triple per line, three tab-separated names, LF or CRLF line ends.

**Id policy.** Entity and relation ids are assigned over *all* splits, in
first-seen order: splits in the order given (``train``, ``valid``, ``test``,
then extra splits such as ``unlearn``), lines in file order, and on each line
the head before the tail. This is exactly PyG's ``FB15k_237`` dictionary
(14,541 entities), so ids are deterministic and stable when a split is added
at the end.

**Duplicates.** A triple repeated inside one split is kept by default (PyG
and the published counts keep them) with one warning giving the count and the
first line; ``duplicates="drop"`` drops later copies (also warned),
``duplicates="error"`` raises.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import numpy as np

from fedgraph.data.io import (
    DataFormatError,
    duplicate_rows,
    factorize,
    read_text,
    split_columns,
)
from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.typing import SPLITS

Duplicates = Literal["keep", "drop", "error"]
DUPLICATE_POLICIES = ("keep", "drop", "error")


def read_labeled_triples(path: str | os.PathLike[str]) -> np.ndarray:
    r"""Reads a ``head<TAB>relation<TAB>tail`` file into an ``[n, 3]`` object
    array of names (columns ``h, r, t``)."""
    return split_columns(read_text(path), 3, path=path)


def handle_duplicates(
    triples: np.ndarray,
    policy: Duplicates,
    *,
    path: str | os.PathLike[str],
    first_line: int = 1,
) -> np.ndarray:
    r"""Applies the duplicate ``policy`` to the ``[n, 3]`` int triples of one
    file (see the module docstring); returns the triples to keep."""
    if policy not in DUPLICATE_POLICIES:
        raise ValueError(
            f"`duplicates` must be one of {DUPLICATE_POLICIES} (got {policy!r})"
        )
    dup = duplicate_rows(triples)
    if dup.size == 0:
        return triples
    where = f"{path}, line {int(dup[0]) + first_line}"
    if policy == "error":
        raise DataFormatError(
            f"{where}: duplicate triple ({dup.size} duplicates in the file); "
            "pass `duplicates='keep'` or `'drop'` to accept them"
        )
    action = "kept" if policy == "keep" else "dropped"
    warnings.warn(
        f"{path}: {dup.size} duplicate triple(s), first at line "
        f"{int(dup[0]) + first_line}; {action} (duplicates={policy!r})",
        stacklevel=3,
    )
    if policy == "drop":
        keep = np.ones(len(triples), dtype=bool)
        keep[dup] = False
        return triples[keep]
    return triples


def order_splits(files: Mapping[str, object]) -> list[str]:
    r"""``train``, ``valid``, ``test`` first (when present), then the rest."""
    return [s for s in SPLITS if s in files] + [s for s in files if s not in SPLITS]


def labeled_triples_to_graph(
    named: Mapping[str, np.ndarray],
    *,
    name: str = "",
    duplicates: Duplicates = "keep",
    paths: Mapping[str, str | os.PathLike[str]] | None = None,
) -> KnowledgeGraph:
    r"""Builds a :class:`KnowledgeGraph` from ``split -> [n, 3]`` name arrays
    with the first-seen id policy of the module docstring."""
    splits = order_splits(named)
    sizes = [len(named[s]) for s in splits]
    stacked = (
        np.concatenate([named[s] for s in splits])
        if splits
        else np.empty((0, 3), dtype=object)
    )
    ent_codes, entity_names = factorize(stacked[:, [0, 2]].reshape(-1))
    rel_codes, relation_names = factorize(stacked[:, 1])
    ids = np.stack([ent_codes[0::2], rel_codes, ent_codes[1::2]], axis=1).astype(
        np.int64
    )
    triples = {}
    offset = 0
    for split, size in zip(splits, sizes, strict=True):
        part = ids[offset : offset + size]
        offset += size
        where = paths[split] if paths and split in paths else split
        triples[split] = handle_duplicates(part, duplicates, path=where)
    return KnowledgeGraph(
        {s: t for s, t in triples.items()},
        num_entities=len(entity_names),
        num_relations=len(relation_names),
        entity_names=[str(e) for e in entity_names],
        relation_names=[str(r) for r in relation_names],
        name=name,
    )


def read_triple_files(
    files: Mapping[str, str | os.PathLike[str]],
    *,
    name: str = "",
    duplicates: Duplicates = "keep",
) -> KnowledgeGraph:
    r"""Reads labelled triple files into one :class:`KnowledgeGraph`.

    Args:
        files (Mapping[str, path]): split name → file, e.g.
            ``{"train": ".../train.txt", "valid": ..., "test": ...}``.
        name (str, optional): the graph's name. (default: :obj:`""`)
        duplicates (str, optional): ``"keep"``, ``"drop"`` or ``"error"``.
            (default: :obj:`"keep"`)

    Raises:
        DataFormatError: a malformed file (named, with its line).
    """
    named = {s: read_labeled_triples(files[s]) for s in order_splits(files)}
    return labeled_triples_to_graph(
        named, name=name, duplicates=duplicates, paths=files
    )


def read_triple_folder(
    path: str | os.PathLike[str],
    *,
    name: str = "",
    duplicates: Duplicates = "keep",
    extra_splits: tuple[str, ...] = (),
) -> KnowledgeGraph:
    r"""Reads ``train.txt``, ``valid.txt``, ``test.txt`` (and each of
    ``extra_splits`` as ``SPLIT.txt`` when present) from a folder."""
    path = Path(path)
    files = {s: path / f"{s}.txt" for s in SPLITS}
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        raise FileNotFoundError(
            f"{path}: not a triple folder (missing {', '.join(missing)})"
        )
    for extra in extra_splits:
        if (path / f"{extra}.txt").is_file():
            files[extra] = path / f"{extra}.txt"
    return read_triple_files(files, name=name or path.name, duplicates=duplicates)


__all__ = [
    "Duplicates",
    "read_labeled_triples",
    "handle_duplicates",
    "labeled_triples_to_graph",
    "read_triple_files",
    "read_triple_folder",
]
