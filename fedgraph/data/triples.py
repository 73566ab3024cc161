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

**Evaluation triples seen in training.** A ``valid`` or ``test`` triple that
also occurs in ``train`` is kept, with one warning per split naming both files,
the count and the first line (:func:`flag_eval_in_train`); ``fedgraph info``
reports the counts as ``in_train`` (:func:`count_eval_in_train`). Such
triples reward memorising the training set; none of the shipped datasets has
any.

**Invisible characters.** Every file goes through
:func:`~fedgraph.data.io.read_text` and :func:`~fedgraph.data.io.split_columns`:
a leading byte-order mark is dropped and whitespace around a name is stripped,
each with a warning naming the file, so neither creates a new entity.
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
    rows_in,
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


#: Splits checked against ``train`` by :func:`flag_eval_in_train` (an extra
#: split such as FedLU's ``unlearn`` is a subset of ``train`` by design).
EVAL_SPLITS = ("valid", "test")


def eval_in_train(triples: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    r"""``split → row indices`` of the ``valid``/``test`` triples (``[n, 3]``
    int arrays in ``triples``) that also occur in ``triples["train"]``."""
    if "train" not in triples:
        return {}
    train = np.asarray(triples["train"])
    return {
        s: np.flatnonzero(rows_in(np.asarray(triples[s]), train))
        for s in EVAL_SPLITS
        if s in triples
    }


def flag_eval_in_train(
    triples: Mapping[str, np.ndarray],
    paths: Mapping[str, str | os.PathLike[str]] | None = None,
    *,
    first_line: int = 1,
) -> dict[str, int]:
    r"""Warns once per ``valid``/``test`` split holding triples that also
    occur in ``train``, naming both files, the count and the first line;
    returns ``split → count``."""
    counts = {}
    for split, rows in eval_in_train(triples).items():
        counts[split] = int(rows.size)
        if rows.size == 0:
            continue
        where = paths[split] if paths and split in paths else split
        train = paths["train"] if paths and "train" in paths else "train"
        warnings.warn(
            f"{where}: {rows.size} triple(s) also in {train} (first at line "
            f"{int(rows[0]) + first_line}); kept, but a model that memorises "
            "the training set scores them perfectly",
            stacklevel=3,
        )
    return counts


def count_eval_in_train(graph: KnowledgeGraph) -> dict[str, int]:
    r"""``{"valid": n, "test": n}``: how many of ``graph``'s evaluation
    triples also occur in its ``train`` split (``fedgraph info`` shows it)."""
    splits = {s: graph.triples(s).numpy() for s in graph.split_names}
    return {s: int(rows.size) for s, rows in eval_in_train(splits).items()}


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
    parts = {}
    offset = 0
    for split, size in zip(splits, sizes, strict=True):
        parts[split] = ids[offset : offset + size]
        offset += size
    flag_eval_in_train(parts, paths)
    triples = {}
    for split, part in parts.items():
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
    "EVAL_SPLITS",
    "eval_in_train",
    "flag_eval_in_train",
    "count_eval_in_train",
    "labeled_triples_to_graph",
    "read_triple_files",
    "read_triple_folder",
]
