r"""OpenKE's id format → :class:`KnowledgeGraph`.

Files (as in OpenKE's ``benchmarks/``; NELL-995 uses it):

* ``entity2id.txt``, ``relation2id.txt``: first line = count, then
  ``name<TAB>id``;
* ``train2id.txt``, ``valid2id.txt``, ``test2id.txt``: first line = count,
  then ``head tail relation`` (whitespace separated; **note the order
  h, t, r**), reordered here to fedgraph's ``(head, relation, tail)``.

The published ids are kept as they are (no re-numbering). Every count line
is checked against the rows that follow it, a dictionary must be one-to-one
(ids a permutation of ``0 … count - 1``, no name listed twice), and a triple
naming an id beyond the dictionaries is an error naming the file and line.
``valid``/``test`` triples also in ``train`` are flagged as in
:mod:`fedgraph.data.triples`.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from fedgraph.data.io import (
    DataFormatError,
    first_repeat,
    parse_ints,
    read_text,
    split_columns,
)
from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.data.triples import Duplicates, flag_eval_in_train, handle_duplicates

OPENKE_SPLITS = {
    "train": "train2id.txt",
    "valid": "valid2id.txt",
    "test": "test2id.txt",
}


def _count_and_body(path: Path) -> tuple[int, str]:
    text = read_text(path)
    first, _, body = text.partition("\n")
    try:
        count = int(first.strip())
    except ValueError:
        raise DataFormatError(
            f"{path}, line 1: expected the number of rows (got {first.strip()!r})"
        ) from None
    rows = body.rstrip("\n").count("\n") + 1 if body.strip() else 0
    if count != rows:
        raise DataFormatError(
            f"{path}, line 1: the count line says {count} rows but the file has {rows}"
        )
    return count, body


def read_openke_ids(path: str | os.PathLike[str]) -> list[str]:
    r"""Reads ``entity2id.txt``/``relation2id.txt``: returns the names ordered
    by id (``names[i]`` has id ``i``).

    The map must be one-to-one: an id given to two names, or a name given
    two ids, is an error naming both lines (after the whitespace rule of
    :func:`~fedgraph.data.io.split_columns`, so ``"usa "`` is ``"usa"``).
    """
    path = Path(path)
    count, body = _count_and_body(path)
    if count == 0:
        raise DataFormatError(f"{path}: the dictionary is empty")
    cols = split_columns(body, 2, path=path, first_line=2)
    ids = parse_ints(cols[:, 1], path=path, first_line=2)
    bad = np.flatnonzero((ids < 0) | (ids >= count))
    if bad.size:
        raise DataFormatError(
            f"{path}, line {int(bad[0]) + 2}: id {int(ids[bad[0]])} outside "
            f"[0, {count})"
        )
    names = cols[:, 0]
    if (pair := first_repeat(ids)) is not None:
        i, j = pair
        raise DataFormatError(
            f"{path}, line {j + 2}: id {int(ids[j])} is used twice (also on line "
            f"{i + 2}: {names[i]!r} and {names[j]!r})"
        )
    if (pair := first_repeat(names)) is not None:
        i, j = pair
        raise DataFormatError(
            f"{path}, line {j + 2}: name {names[j]!r} is listed twice (also on "
            f"line {i + 2}, with ids {int(ids[i])} and {int(ids[j])})"
        )
    order = np.empty(count, dtype=np.int64)
    order[ids] = np.arange(count)
    return [str(n) for n in names[order].tolist()]


def read_openke_triples(
    path: str | os.PathLike[str], num_entities: int, num_relations: int
) -> np.ndarray:
    r"""Reads a ``*2id.txt`` triple file (columns h, t, r) into an
    ``[n, 3]`` ``int64`` array in ``(head, relation, tail)`` order."""
    path = Path(path)
    count, body = _count_and_body(path)
    if count == 0:
        return np.empty((0, 3), dtype=np.int64)
    cols = split_columns(body, 3, path=path, sep=None, first_line=2)
    htr = np.stack(
        [parse_ints(cols[:, j], path=path, first_line=2) for j in range(3)], axis=1
    )
    for col, limit, what in (
        (0, num_entities, "head entity"),
        (1, num_entities, "tail entity"),
        (2, num_relations, "relation"),
    ):
        bad = np.flatnonzero((htr[:, col] < 0) | (htr[:, col] >= limit))
        if bad.size:
            raise DataFormatError(
                f"{path}, line {int(bad[0]) + 2}: unknown {what} id "
                f"{int(htr[bad[0], col])} (the dictionary has {limit})"
            )
    return htr[:, [0, 2, 1]]


def read_openke_folder(
    path: str | os.PathLike[str],
    *,
    name: str = "",
    duplicates: Duplicates = "keep",
) -> KnowledgeGraph:
    r"""Reads an OpenKE benchmark folder into a :class:`KnowledgeGraph`.

    Args:
        path (str or Path): folder with ``entity2id.txt``, ``relation2id.txt``
            and ``{train,valid,test}2id.txt``.
        name (str, optional): the graph's name (default: the folder name).
        duplicates (str, optional): duplicate policy, see
            :mod:`fedgraph.data.triples`. (default: :obj:`"keep"`)
    """
    path = Path(path)
    entities = read_openke_ids(path / "entity2id.txt")
    relations = read_openke_ids(path / "relation2id.txt")
    files = {split: path / fname for split, fname in OPENKE_SPLITS.items()}
    raw = {
        split: read_openke_triples(f, len(entities), len(relations))
        for split, f in files.items()
    }
    flag_eval_in_train(raw, files, first_line=2)
    triples = {
        split: handle_duplicates(t, duplicates, path=files[split], first_line=2)
        for split, t in raw.items()
    }
    return KnowledgeGraph(
        triples,
        num_entities=len(entities),
        num_relations=len(relations),
        entity_names=entities,
        relation_names=relations,
        name=name or path.name,
    )


__all__ = ["read_openke_ids", "read_openke_triples", "read_openke_folder"]
