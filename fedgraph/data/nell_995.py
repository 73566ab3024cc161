r"""NELL-995 in OpenKE's id format."""

from __future__ import annotations

from typing import ClassVar

from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.data.openke import read_openke_folder
from fedgraph.data.triple_dataset import TripleFolderDataset, remote_files

_FILES = (
    "entity2id.txt",
    "relation2id.txt",
    "train2id.txt",
    "valid2id.txt",
    "test2id.txt",
)


class NELL995(TripleFolderDataset):
    r"""NELL-995 from `"DeepPath: A Reinforcement Learning Method for
    Knowledge Graph Reasoning" <https://arxiv.org/abs/1707.06690>`_, as
    published in OpenKE's ``benchmarks/NELL-995`` (the copy FedE used).

    Ids are OpenKE's own (``entity2id.txt``/``relation2id.txt``); the triple
    files' columns ``h t r`` are reordered to ``(head, relation, tail)``.

    **STATS:** 75,492 entities, 200 relations, 149,678 / 543 / 3,992 triples.
    """

    name = "nell-995"
    aliases = ("nell995",)
    folder = "nell-995"
    split_files: ClassVar[dict[str, str]] = {}
    remote_files = remote_files(
        "nell-995",
        "https://raw.githubusercontent.com/thunlp/OpenKE/OpenKE-PyTorch/"
        "benchmarks/NELL-995",
        _FILES,
    )

    @property
    def raw_file_names(self) -> list[str]:
        return list(_FILES)

    def process(self) -> KnowledgeGraph:
        return read_openke_folder(
            self.raw_dir, name=self.name, duplicates=self.duplicates
        )


__all__ = ["NELL995"]
