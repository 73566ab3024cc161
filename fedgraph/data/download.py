r"""Checksum-verified downloads and archive extraction (standard library only).

A download goes to a temporary file beside the target, is verified against
its SHA-256, then renamed into place: an interrupted or corrupted download
never leaves a file that looks complete.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
import warnings
import zlib
from pathlib import Path

from fedgraph.data.io import DataFormatError


class ChecksumError(ValueError):
    r"""A downloaded file's SHA-256 differs from the registry's."""


def verify_sha256(path: str | os.PathLike[str], sha256: str | None) -> str:
    r"""The hex SHA-256 of the file at ``path``, checked against the pinned
    ``sha256`` (:obj:`None`: nothing pinned, nothing checked).

    Raises:
        ChecksumError: naming the file and both digests (a corrupt copy, or
            another file under the pinned name).
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    digest = h.hexdigest()
    if sha256 is not None and digest != sha256.lower():
        raise ChecksumError(
            f"Archive '{path}' has SHA-256 {digest}, expected {sha256}: the file "
            "is corrupt or a different release"
        )
    return digest


def download_url(
    url: str,
    path: str | os.PathLike[str],
    *,
    sha256: str | None = None,
    timeout: float = 60.0,
) -> Path:
    r"""Downloads ``url`` to ``path`` (``http(s)://`` or ``file://``).

    Args:
        url (str): the source.
        path (path): the destination file; parent folders are created.
        sha256 (str, optional): expected hex SHA-256; checked before the
            file is moved into place.
        timeout (float, optional): socket timeout in seconds.

    Raises:
        OSError: if the source cannot be reached (``urllib.error.URLError``).
        ChecksumError: if the content's SHA-256 differs from ``sha256``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        h = hashlib.sha256()
        with (
            os.fdopen(fd, "wb") as out,
            urllib.request.urlopen(url, timeout=timeout) as response,
        ):
            while block := response.read(1 << 20):
                h.update(block)
                out.write(block)
        digest = h.hexdigest()
        if sha256 is None:
            warnings.warn(
                f"No pinned checksum for {url}: the download (sha256 {digest}) "
                "is not verified",
                stacklevel=2,
            )
        elif digest != sha256.lower():
            raise ChecksumError(
                f"Checksum mismatch for {url}: expected sha256 {sha256}, got "
                f"{digest}; the file was not saved"
            )
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def extract_archive(
    archive: str | os.PathLike[str], folder: str | os.PathLike[str]
) -> Path:
    r"""Extracts a ``.tar``, ``.tar.gz``/``.tgz`` archive into ``folder``.

    The archive is unpacked into a temporary folder first and moved into
    place only when complete, so a truncated archive leaves nothing.

    Raises:
        DataFormatError: if the archive is truncated or corrupt.
    """
    archive, folder = Path(archive), Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".extract-", dir=folder))
    try:
        try:
            with tarfile.open(archive, "r:*") as tar:
                tar.extractall(tmp, filter="data")
        except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
            raise DataFormatError(
                f"{archive}: truncated or corrupt archive ({exc})"
            ) from None
        for item in tmp.iterdir():
            target = folder / item.name
            if target.exists():
                if target.is_dir():
                    shutil.rmtree(target)
                else:
                    target.unlink()
            os.replace(item, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def first_missing_dir(path: str | os.PathLike[str]) -> Path | None:
    r"""The outermost folder of ``path`` (itself or an ancestor) that does
    not exist yet: what creating ``path`` would create (:obj:`None` if
    ``path`` exists)."""
    path = Path(path).absolute()
    if path.exists():
        return None
    while not path.parent.exists() and path.parent != path:
        path = path.parent
    return path


def remove_empty_dirs(top: Path | None) -> None:
    r"""Removes ``top`` and the folders under it if they hold no file (what
    a failed download created); anything holding a file is kept."""
    if top is None or not top.is_dir():
        return
    for folder, _, _ in sorted(os.walk(top), key=lambda w: -len(w[0])):
        try:
            os.rmdir(folder)  # only succeeds on an empty folder
        except OSError:
            pass


__all__ = [
    "ChecksumError",
    "verify_sha256",
    "download_url",
    "extract_archive",
    "first_missing_dir",
    "remove_empty_dirs",
]
