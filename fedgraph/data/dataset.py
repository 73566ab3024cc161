r"""The dataset contract (PyG ``torch_geometric.data.Dataset`` style).

A dataset class declares its raw files (:class:`RemoteFile`: path, public URL,
SHA-256) and implements :meth:`KGDataset.process`. Construction then

1. looks for the raw files in ``root / folder`` (``root``: the argument, else
   ``FEDGRAPH_DATA``, else the user cache; see :mod:`fedgraph.data.root`);
   present files skip the download, so a local copy works offline;
2. downloads missing files (temp file, SHA-256 check, rename) or, offline,
   raises :class:`DatasetNotFoundError` saying where it looked and how to set
   ``FEDGRAPH_DATA``;
3. loads the processed cache, or processes the raw files and writes the cache
   atomically. The cache lives in ``get_cache_dir() / folder`` (never in the
   possibly read-only raw root) and is keyed by the SHA-256 of every raw file
   plus the class's :attr:`~KGDataset.version` and processing options, so an
   edited raw file is never served stale. A failed load writes nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.error
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import torch

from fedgraph.data.download import (
    download_url,
    extract_archive,
    first_missing_dir,
    remove_empty_dirs,
)
from fedgraph.data.io import atomic_torch_save, sha256_file
from fedgraph.data.root import get_cache_dir, get_data_root


class DatasetNotFoundError(FileNotFoundError):
    r"""Raw files are missing and could not be downloaded."""


@dataclass(frozen=True)
class RemoteFile:
    r"""One raw file of a dataset.

    Args:
        path (str): path relative to the dataset's raw folder.
        url (str): canonical public download URL.
        sha256 (str or None): hex SHA-256 of the published file; ``None``
            only for a file we could not fetch to pin (BGS, AM): its download
            is then not verified and a warning says so.
        extract (bool, optional): the file is a ``.tar``/``.tgz`` archive to
            unpack into the raw folder after download. (default: :obj:`False`)
    """

    path: str
    url: str
    sha256: str | None
    extract: bool = False


class KGDataset(ABC):
    r"""Base class of every registered dataset.

    Subclasses set the class attributes below and implement :meth:`process`
    (raw files → object); KG-like objects override :meth:`serialize` /
    :meth:`deserialize` for a stable cache format.

    Args:
        root (str or Path, optional): data root holding ``folder``; default
            ``FEDGRAPH_DATA`` or the user cache. (default: :obj:`None`)
        force_reload (bool, optional): re-process even if a cache exists.
            (default: :obj:`False`)
        download (bool, optional): download missing raw files.
            (default: :obj:`True`)
    """

    #: Registry name (``fedgraph datasets``); matched ignoring case, ``-``, ``_``.
    name: ClassVar[str] = ""
    #: Other accepted names.
    aliases: ClassVar[tuple[str, ...]] = ()
    #: ``"kg"``, ``"federated-kg"``, ``"multilingual-kg"`` or ``"rdf"``.
    kind: ClassVar[str] = "kg"
    #: Folder of the raw files under the data root.
    folder: ClassVar[str] = ""
    #: Raw files with their public URLs and checksums.
    remote_files: ClassVar[tuple[RemoteFile, ...]] = ()
    #: Bump to invalidate caches after a change to :meth:`process`.
    version: ClassVar[int] = 1

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        force_reload: bool = False,
        download: bool = True,
    ) -> None:
        self.root = get_data_root(root)
        self.force_reload = force_reload
        self._download(allowed=download)
        self._data = self._process()

    # ------------------------------------------------------------- contract
    @property
    def raw_file_names(self) -> list[str]:
        r"""Raw files (relative to :attr:`raw_dir`) that must exist."""
        return [f.path for f in self.remote_files if not f.extract]

    @property
    def raw_dir(self) -> Path:
        return self.root / self.folder

    @property
    def raw_paths(self) -> list[Path]:
        return [self.raw_dir / f for f in self.raw_file_names]

    @property
    def processed_dir(self) -> Path:
        return get_cache_dir() / self.folder

    @property
    def processed_file_names(self) -> list[str]:
        return [f"{self.name}-{self.cache_key()[:20]}.pt"]

    @property
    def processed_paths(self) -> list[Path]:
        return [self.processed_dir / f for f in self.processed_file_names]

    def download(self) -> None:
        r"""Downloads the missing :attr:`remote_files` (checksum-verified)."""
        for f in self.remote_files:
            target = self.raw_dir / f.path
            if target.is_file():
                continue
            download_url(f.url, target, sha256=f.sha256)
            if f.extract:
                extract_archive(target, target.parent)

    @abstractmethod
    def process(self) -> Any:
        r"""Parses the raw files and returns the dataset object."""

    def options(self) -> dict[str, Any]:
        r"""Processing options that change the result (part of the cache key)."""
        return {}

    def serialize(self, obj: Any) -> Any:
        r"""``obj`` → something ``torch.save`` writes (default: ``obj``)."""
        return obj

    def deserialize(self, state: Any) -> Any:
        r"""Inverse of :meth:`serialize`."""
        return state

    def stats(self) -> dict[str, Any]:
        r"""Statistics for ``fedgraph info`` (default: ``obj.stats()``)."""
        return dict(self._data.stats())

    # --------------------------------------------------------------- access
    def get(self) -> Any:
        r"""The loaded dataset object."""
        return self._data

    def __getitem__(self, idx: int) -> Any:
        if idx not in (0, -1):
            raise IndexError(f"{self.name} holds one object (got index {idx})")
        return self._data

    def __len__(self) -> int:
        return 1

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._data!r})"

    @classmethod
    def is_present(cls, root: str | os.PathLike[str] | None = None) -> bool:
        r"""Whether every raw file exists under ``root`` (no download)."""
        obj = cls.__new__(cls)
        obj.root = get_data_root(root)
        return all(p.is_file() for p in obj.raw_paths)

    @classmethod
    def raw_folder(cls, root: str | os.PathLike[str] | None = None) -> Path:
        return get_data_root(root) / cls.folder

    # ------------------------------------------------------------ internals
    def _missing(self) -> list[str]:
        return [
            f
            for f, p in zip(self.raw_file_names, self.raw_paths, strict=True)
            if not p.is_file()
        ]

    def _download(self, allowed: bool) -> None:
        missing = self._missing()
        if not missing:
            return
        urls = sorted({f.url.rsplit("/", 1)[0] for f in self.remote_files})
        source = f" from {urls[0]}" if urls else ""
        reason = "downloads are disabled (`download=False`)"
        if allowed and self.remote_files:
            fresh = first_missing_dir(self.raw_dir)
            try:
                self.download()
                missing = self._missing()
                if not missing:
                    return
                reason = f"the download{source} did not provide them"
            except (OSError, urllib.error.URLError, ValueError) as exc:
                reason = f"the download{source} failed ({exc})"
            # a failed download (a mistyped FEDGRAPH_DATA, no network) leaves
            # no empty folders behind
            remove_empty_dirs(fresh)
        elif allowed:
            reason = "no download URL is registered"
        shown = ", ".join(missing[:4]) + (" …" if len(missing) > 4 else "")
        raise DatasetNotFoundError(
            f"Dataset '{self.name}' not found: looked in {self.raw_dir} "
            f"(missing {shown}) and {reason}. Point the FEDGRAPH_DATA "
            "environment variable (or `root=`) at a folder that holds "
            f"`{self.folder}/`, e.g. a copy of the benchmark data folder."
        )

    def cache_key(self) -> str:
        r"""SHA-256 over the class, :attr:`version`, :meth:`options` and the
        SHA-256 of each raw file."""
        h = hashlib.sha256()
        head = [type(self).__qualname__, self.version, self.options()]
        h.update(json.dumps(head, sort_keys=True, default=str).encode())
        for rel, path in zip(self.raw_file_names, self.raw_paths, strict=True):
            h.update(f"\0{rel}\0{sha256_file(path)}".encode())
        return h.hexdigest()

    def _process(self) -> Any:
        path = self.processed_paths[0]
        if path.is_file() and not self.force_reload:
            try:
                return self.deserialize(torch.load(path, weights_only=True))
            except Exception as exc:  # noqa: BLE001 - a corrupt cache is rebuilt
                warnings.warn(
                    f"Ignoring unreadable cache {path} ({exc}); re-processing",
                    stacklevel=3,
                )
        obj = self.process()
        try:
            atomic_torch_save(self.serialize(obj), path)
        except OSError as exc:
            warnings.warn(
                f"Could not write the processed cache {path} ({exc}); the next "
                "load will process the raw files again",
                stacklevel=3,
            )
        return obj


__all__ = ["KGDataset", "RemoteFile", "DatasetNotFoundError"]
