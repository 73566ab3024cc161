r"""DBP-5L (Chen et al., 2020): five DBpedia KGs (EN, FR, ES, JA, EL) with
integer ids and seed entity alignments."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from fedgraph.data.io import DataFormatError, parse_ints, read_text, split_columns
from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.data.multilingual import MultilingualKG
from fedgraph.data.triple_dataset import TripleFolderDataset, remote_files
from fedgraph.data.triples import Duplicates, handle_duplicates

LANGUAGES = ("en", "fr", "es", "ja", "el")
ALIGN_PAIRS = (
    ("el", "en"), ("el", "es"), ("el", "fr"), ("el", "ja"), ("en", "fr"),
    ("es", "en"), ("es", "fr"), ("ja", "en"), ("ja", "es"), ("ja", "fr"),
)  # fmt: skip
# DBP-5L names its splits train/val/test; fedgraph uses train/valid/test.
SPLIT_FILES = {"train": "train", "valid": "val", "test": "test"}


def _names(path: Path) -> list[str]:
    r"""One name per line; line ``i`` (0-based) is id ``i``."""
    lines = read_text(path).rstrip("\n").split("\n")
    return [line.strip() for line in lines]


def _check_range(
    values: np.ndarray, limit: int, *, path: Path, what: str, first_line: int = 1
) -> None:
    bad = np.flatnonzero((values < 0) | (values >= limit))
    if bad.size:
        raise DataFormatError(
            f"{path}, line {int(bad[0]) + first_line}: unknown {what} id "
            f"{int(values[bad[0]])} (there are {limit})"
        )


def read_id_triples(path: Path, num_entities: int, num_relations: int) -> np.ndarray:
    r"""``head<TAB>relation<TAB>tail`` integer ids → ``[n, 3]`` int64."""
    cols = split_columns(read_text(path), 3, path=path)
    t = np.stack([parse_ints(cols[:, j], path=path) for j in range(3)], axis=1)
    _check_range(t[:, 0], num_entities, path=path, what="head entity")
    _check_range(t[:, 2], num_entities, path=path, what="tail entity")
    _check_range(t[:, 1], num_relations, path=path, what="relation")
    return t


def read_alignment(path: Path, num_a: int, num_b: int) -> np.ndarray:
    r"""An ``a<TAB>b`` link file (ids may be float-formatted, ``3931.0``)."""
    cols = split_columns(read_text(path), 2, path=path)
    pairs = np.stack([parse_ints(cols[:, j], path=path) for j in range(2)], axis=1)
    a, b = path.stem.split("-")
    _check_range(pairs[:, 0], num_a, path=path, what=f"{a} entity")
    _check_range(pairs[:, 1], num_b, path=path, what=f"{b} entity")
    return pairs


def read_dbp5l(
    path: str | os.PathLike[str],
    *,
    languages: tuple[str, ...] = LANGUAGES,
    duplicates: Duplicates = "keep",
    name: str = "dbp-5l",
) -> MultilingualKG:
    r"""Reads the DBP-5L layout: ``kg/LANG-{train,val,test}.tsv``,
    ``entity/LANG.tsv`` (line ``i`` = URI of entity ``i``), ``relations.txt``
    (line ``i`` = URI of relation ``i``, shared by all languages) and
    ``seed_alignlinks/A-B.tsv``.

    A language's entity count is the length of its entity list (ids not used
    by any triple still count); its triples are all three splits.
    """
    path = Path(path)
    relations = _names(path / "relations.txt")
    graphs: dict[str, KnowledgeGraph] = {}
    for lang in languages:
        entities = _names(path / "entity" / f"{lang}.tsv")
        triples = {}
        for split, tag in SPLIT_FILES.items():
            f = path / "kg" / f"{lang}-{tag}.tsv"
            t = read_id_triples(f, len(entities), len(relations))
            triples[split] = handle_duplicates(t[:, [0, 1, 2]], duplicates, path=f)
        graphs[lang] = KnowledgeGraph(
            triples,
            num_entities=len(entities),
            num_relations=len(relations),
            entity_names=entities,
            relation_names=relations,
            name=f"{name}/{lang}",
        )
    alignments = {}
    for a, b in ALIGN_PAIRS:
        if a in graphs and b in graphs:
            f = path / "seed_alignlinks" / f"{a}-{b}.tsv"
            alignments[(a, b)] = read_alignment(
                f, graphs[a].num_entities, graphs[b].num_entities
            )
    return MultilingualKG(graphs, alignments, relation_names=relations, name=name)


def _files() -> tuple[str, ...]:
    kg = [f"kg/{lang}-{tag}.tsv" for lang in LANGUAGES for tag in SPLIT_FILES.values()]
    ent = [f"entity/{lang}.tsv" for lang in LANGUAGES]
    links = [f"seed_alignlinks/{a}-{b}.tsv" for a, b in ALIGN_PAIRS]
    return tuple(["relations.txt", *ent, *kg, *links])


class DBP5L(TripleFolderDataset):
    r"""DBP-5L from `"Multilingual Knowledge Graph Completion via Ensemble
    Knowledge Transfer" <https://arxiv.org/abs/2010.03158>`_ (KEnS), as
    published in github.com/stasl0217/KEnS ``data/``. Loads a
    :class:`MultilingualKG` of five language graphs plus the seed alignments.

    **STATS** (triples = train + valid + test):

    .. list-table::
        :header-rows: 1

        * - language
          - #entities
          - #triples
        * - EN
          - 13,996
          - 80,167
        * - FR
          - 13,176
          - 49,015
        * - ES
          - 12,381
          - 54,066
        * - JA
          - 11,805
          - 28,774
        * - EL
          - 5,231
          - 13,839
    """

    name = "dbp-5l"
    aliases = ("dbp5l",)
    kind = "multilingual-kg"
    folder = "dbp-5l"
    remote_files = remote_files(
        "dbp-5l", "https://raw.githubusercontent.com/stasl0217/KEnS/main/data", _files()
    )

    @property
    def raw_file_names(self) -> list[str]:
        return list(_files())

    def process(self) -> MultilingualKG:
        return read_dbp5l(self.raw_dir, duplicates=self.duplicates, name=self.name)

    def serialize(self, obj: MultilingualKG) -> dict[str, Any]:
        return obj.to_dict()

    def deserialize(self, state: dict[str, Any]) -> MultilingualKG:
        return MultilingualKG.from_dict(state)


__all__ = ["DBP5L", "read_dbp5l", "LANGUAGES"]
