r"""Datasets stored as labelled triple files (``train.txt``, ``valid.txt``,
``test.txt``: ``head<TAB>relation<TAB>tail``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar

from fedgraph.data.checksums import SHA256
from fedgraph.data.dataset import KGDataset, RemoteFile
from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.data.triples import DUPLICATE_POLICIES, Duplicates, read_triple_files


def remote_files(
    folder: str, base_url: str, names: Sequence[str], remote_names: Sequence[str] = ()
) -> tuple[RemoteFile, ...]:
    r"""``RemoteFile`` entries for ``folder/NAME`` downloaded from
    ``base_url/REMOTE_NAME`` (default: the same name), with the checksums of
    :mod:`fedgraph.data.checksums`."""
    remote_names = list(remote_names) or list(names)
    return tuple(
        RemoteFile(name, f"{base_url}/{remote}", SHA256[f"{folder}/{name}"])
        for name, remote in zip(names, remote_names, strict=True)
    )


class LabelledTripleDataset(KGDataset):
    r"""A dataset read from labelled triple files, with the ``duplicates``
    policy (``"keep"`` with a counted warning, ``"drop"`` or ``"error"``) as
    a constructor option that is part of the processed cache's key."""

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        duplicates: Duplicates = "keep",
        force_reload: bool = False,
        download: bool = True,
    ) -> None:
        if duplicates not in DUPLICATE_POLICIES:
            raise ValueError(
                f"`duplicates` must be one of {DUPLICATE_POLICIES} (got {duplicates!r})"
            )
        self.duplicates = duplicates
        super().__init__(root, force_reload=force_reload, download=download)

    def options(self) -> dict[str, Any]:
        return {"duplicates": self.duplicates}


class TripleFolderDataset(LabelledTripleDataset):
    r"""A knowledge graph given as ``{train,valid,test}.txt`` labelled triple
    files (ids over all splits in first-seen order, see
    :mod:`fedgraph.data.triples`).

    Args:
        root (str, optional): data root (default: ``FEDGRAPH_DATA``).
        duplicates (str, optional): ``"keep"`` (default, warned), ``"drop"``
            (warned) or ``"error"``, for triples repeated within a split.
        force_reload (bool, optional): re-process the raw files.
        download (bool, optional): download missing raw files.
    """

    #: split name → file name under the raw folder.
    split_files: ClassVar[dict[str, str]] = {
        "train": "train.txt",
        "valid": "valid.txt",
        "test": "test.txt",
    }

    @property
    def raw_file_names(self) -> list[str]:
        return list(self.split_files.values())

    def process(self) -> KnowledgeGraph:
        files = {s: self.raw_dir / f for s, f in self.split_files.items()}
        return read_triple_files(files, name=self.name, duplicates=self.duplicates)

    def serialize(self, obj: KnowledgeGraph) -> dict[str, Any]:
        return obj.to_dict()

    def deserialize(self, state: dict[str, Any]) -> KnowledgeGraph:
        return KnowledgeGraph.from_dict(state)


__all__ = ["TripleFolderDataset", "remote_files"]
