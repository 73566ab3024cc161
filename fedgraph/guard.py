r"""The rule every fedgraph writer follows: a file or folder fedgraph did not
write is never replaced, and a folder is written by one process at a time.

**What fedgraph wrote.** A folder fedgraph writes into holds a ledger,
``.fedgraph`` (JSON: ``{"format": "fedgraph.outputs", "names": [...]}``), of
the names fedgraph wrote there, as :mod:`fnmatch` patterns (``*``: a run
folder that was empty when a run took it, all of it fedgraph's). Before
writing, a command :func:`claim`\ s the names it will write: an existing
entry of one of those names that the ledger does not list is someone else's,
and the command stops with one line naming it (:class:`NotFedgraphsError`, a
:class:`ValueError`: the CLI exits with code 2), having written nothing. A
name the ledger lists is fedgraph's own output and is replaced as documented
(a second ``fedgraph audit`` rewrites its report). A saved partition's
``META.json`` is the ledger of its folder: it lists every file, and
:func:`unlisted` is the rule that ``save_partition(overwrite=True)`` applies.

**One writer per folder.** :func:`claim` also takes the folder's lock: an
exclusive, non-blocking :func:`fcntl.flock` on ``.fedgraph.lock`` inside it,
which records the holder's pid. A second process gets one line naming the
folder and that pid (:class:`FolderBusyError`). A command holds its locks
until it ends, also when it raises (:func:`releases_locks`); the kernel drops
the lock of a process that dies, so a lock file left behind blocks nothing.

The files themselves are written by :mod:`fedgraph.data.io`'s atomic helpers
(temporary file, then rename). This module imports only the standard library
(the command line imports it while it builds its parsers).
"""

from __future__ import annotations

import fnmatch
import functools
import glob
import json
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

#: the ledger of the names fedgraph wrote into a folder
LEDGER = ".fedgraph"
#: the file a folder's writer holds locked
LOCK = ".fedgraph.lock"
LEDGER_FORMAT = "fedgraph.outputs"
#: the guard's own files: never listed, never anyone's data
GUARD_FILES = frozenset({LEDGER, LOCK})

F = TypeVar("F", bound=Callable[..., Any])


class NotFedgraphsError(ValueError):
    r"""An existing file or folder that fedgraph did not write: not replaced."""


class FolderBusyError(ValueError):
    r"""A folder that another process is writing."""


#: folders this process holds locked: resolved path -> lock file descriptor
_HELD: dict[Path, int] = {}
#: the folders each open command scope locked (released when it closes)
_SCOPES: list[list[Path]] = []


def refusal(
    path: str | os.PathLike[str],
    why: str,
    *,
    what: str = "was not written by fedgraph",
    option: str = "--out",
) -> NotFedgraphsError:
    r"""The one-line error for a ``path`` that is not fedgraph's: ``"`PATH`
    {what} ({why}): not replaced; pick another `{option}` or remove it
    yourself"``."""
    return NotFedgraphsError(
        f"`{path}` {what} ({why}): not replaced; pick another `{option}` or "
        "remove it yourself"
    )


def unlisted(names: Iterable[str], listed: Iterable[str]) -> list[str]:
    r"""The ``names`` (sorted) that ``listed`` neither holds nor matches as
    :mod:`fnmatch` patterns, the guard's own files left out: what a folder
    holds that its ledger does not account for."""
    listed = list(listed)
    exact = set(listed)
    return sorted(
        n
        for n in names
        if n not in GUARD_FILES
        and n not in exact
        and not any(fnmatch.fnmatchcase(n, p) for p in listed)
    )


def contents(folder: str | os.PathLike[str]) -> list[str]:
    r"""The names (sorted) in ``folder`` besides the guard's own files (an
    empty folder that a command locked, or a killed one left, holds none)."""
    return unlisted((p.name for p in Path(folder).iterdir()), ())


def listed_names(folder: str | os.PathLike[str], *, option: str = "--out") -> list[str]:
    r"""The names the ledger of ``folder`` lists (none without a ledger).

    Raises:
        NotFedgraphsError: if ``.fedgraph`` exists but is not a ledger.
    """
    path = Path(folder) / LEDGER
    if not path.exists():
        return []
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        doc = None
    names = doc.get("names") if isinstance(doc, dict) else None
    if (
        not isinstance(doc, dict)
        or doc.get("format") != LEDGER_FORMAT
        or not isinstance(names, list)
        or not all(isinstance(n, str) for n in names)
    ):
        raise refusal(path, "not a fedgraph ledger", option=option)
    return names


def check(
    folder: str | os.PathLike[str],
    names: Iterable[str] = ("*",),
    *,
    option: str = "--out",
) -> None:
    r"""Refuses to write ``names`` (:mod:`fnmatch` patterns) into ``folder``
    when an existing entry they match is not listed in its ledger. Reads
    only; :func:`claim` checks again under the folder's lock.

    Raises:
        NotFedgraphsError: naming the first such entry.
    """
    folder = Path(folder)
    if not folder.exists():
        return
    if not folder.is_dir():
        raise ValueError(f"`{option}`: {folder} is a file, not a folder")
    names = list(names)
    present = [
        p.name
        for p in folder.iterdir()
        if any(fnmatch.fnmatchcase(p.name, n) for n in names)
    ]
    foreign = unlisted(present, listed_names(folder, option=option))
    if foreign:
        raise refusal(
            folder / foreign[0], f"{folder / LEDGER} does not list it", option=option
        )


def claim(
    folder: str | os.PathLike[str],
    names: Iterable[str] = ("*",),
    *,
    fresh: bool = False,
    option: str = "--out",
) -> Path:
    r"""Takes ``folder`` for writing ``names``: creates and locks it
    (:func:`hold`), checks under the lock that every existing entry the
    ``names`` match is fedgraph's (:func:`check`), then adds the ``names`` to
    its ledger.

    Args:
        folder (str or PathLike): the folder written into.
        names (Iterable[str], optional): what will be written, as
            :mod:`fnmatch` patterns (default: ``*``, the whole folder).
        fresh (bool, optional): the folder must hold nothing when this
            command takes its lock (a new run, whose emptiness was checked
            before). (default: :obj:`False`)
        option (str, optional): the option that named the folder, for the
            errors. (default: ``--out``)
    """
    folder = Path(folder)
    names = list(names)
    if _take(folder, option) and fresh:
        present = contents(folder)
        if present:
            raise ValueError(
                f"`{option}` {folder} is not empty (it holds {present[0]}, written "
                "since this command started): pass --resume to continue it"
            )
    check(folder, names, option=option)
    listed = listed_names(folder, option=option)
    if set(names) - set(listed) or not (folder / LEDGER).is_file():
        from fedgraph.data.io import atomic_write_json

        ledger = {"format": LEDGER_FORMAT, "names": sorted({*listed, *names})}
        atomic_write_json(folder / LEDGER, ledger, indent=2)
    return folder


def check_file(path: str | os.PathLike[str], *, option: str = "--out") -> Path:
    r"""``path``, after :func:`check` that an existing file there is
    fedgraph's (reads only)."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"`{option}`: {path} is a folder, not a file")
    check(path.parent, (glob.escape(path.name),), option=option)
    return path


def claim_file(path: str | os.PathLike[str], *, option: str = "--out") -> Path:
    r"""``path``, after :func:`claim` of its folder for its name."""
    path = check_file(path, option=option)
    claim(path.parent, (glob.escape(path.name),), option=option)
    return path


def hold(folder: str | os.PathLike[str], *, option: str = "--out") -> Path:
    r"""Creates ``folder`` and locks it until the current command ends
    (:func:`releases_locks`); a folder this process holds already is held
    once.

    Raises:
        FolderBusyError: if another process holds it.
        RuntimeError: outside a command (:func:`releases_locks`).
    """
    folder = Path(folder)
    _take(folder, option)
    return folder


def _take(folder: Path, option: str) -> bool:
    r"""Creates and locks ``folder`` (:func:`hold`); whether this call took
    the lock (:obj:`False`: the command held it already)."""
    if not _SCOPES:
        raise RuntimeError(
            "fedgraph.guard.hold: call it inside a command wrapped by `releases_locks`"
        )
    folder.mkdir(parents=True, exist_ok=True)
    key = folder.resolve()
    if key in _HELD:
        return False
    _HELD[key] = _lock(folder, option)
    _SCOPES[-1].append(key)
    return True


def _lock(folder: Path, option: str) -> int:
    r"""The descriptor of ``folder``'s lock file, locked (exclusive, not
    waiting) and holding this process's pid."""
    import fcntl

    fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        os.close(fd)
        raise FolderBusyError(
            f"`{folder}` is being written by another fedgraph process (pid "
            f"{holder or 'unknown'}): wait for it to end, or pick another "
            f"`{option}`"
        ) from None
    if not os.pread(fd, 32, 0).strip().isdigit() and os.fstat(fd).st_size:
        os.close(fd)
        raise refusal(folder / LOCK, "not a fedgraph lock file", option=option)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


@contextmanager
def command() -> Iterator[None]:
    r"""A command's scope: the folders it locks (:func:`hold`) are released
    when it closes, also on an exception."""
    _SCOPES.append([])
    try:
        yield
    finally:
        for key in _SCOPES.pop():
            os.close(_HELD.pop(key))


def releases_locks(func: F) -> F:
    r"""Runs ``func`` in a :func:`command` scope (a CLI command's ``run``)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with command():
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


__all__ = [
    "LEDGER",
    "LOCK",
    "GUARD_FILES",
    "NotFedgraphsError",
    "FolderBusyError",
    "refusal",
    "unlisted",
    "contents",
    "listed_names",
    "check",
    "claim",
    "check_file",
    "claim_file",
    "hold",
    "command",
    "releases_locks",
]
