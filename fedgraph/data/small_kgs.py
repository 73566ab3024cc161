r"""The small classic KGs Nations, Kinship and UMLS (Kok & Domingos, 2007),
in the train/valid/test split distributed with PyKEEN (from
github.com/ZhenfengLei/KGDatasets)."""

from __future__ import annotations

from fedgraph.data.triple_dataset import TripleFolderDataset, remote_files

_FILES = ("train.txt", "valid.txt", "test.txt")
_PYKEEN = "https://raw.githubusercontent.com/pykeen/pykeen/master/src/pykeen/datasets"


class Nations(TripleFolderDataset):
    r"""The Nations KG from `"Statistical predicate invention"
    <https://doi.org/10.1145/1273496.1273551>`_ (Kok & Domingos, 2007).

    **STATS:** 14 entities, 55 relations, 1,592 / 199 / 201 triples.
    """

    name = "nations"
    folder = "nations"
    remote_files = remote_files("nations", f"{_PYKEEN}/nations", _FILES)


class Kinship(TripleFolderDataset):
    r"""The Kinship KG (Alyawarra kinship terms) from `"Statistical predicate
    invention" <https://doi.org/10.1145/1273496.1273551>`_.

    **STATS:** 104 entities, 25 relations, 8,544 / 1,068 / 1,074 triples.
    """

    name = "kinship"
    folder = "kinship"
    remote_files = remote_files("kinship", f"{_PYKEEN}/kinship", _FILES)


class UMLS(TripleFolderDataset):
    r"""The UMLS semantic network KG from `"Statistical predicate invention"
    <https://doi.org/10.1145/1273496.1273551>`_.

    **STATS:** 135 entities, 46 relations, 5,216 / 652 / 661 triples.
    """

    name = "umls"
    folder = "umls"
    remote_files = remote_files("umls", f"{_PYKEEN}/umls", _FILES)


__all__ = ["Nations", "Kinship", "UMLS"]
