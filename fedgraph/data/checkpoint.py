r"""Checkpoint files: written atomically, read back safely.

:func:`save_checkpoint` writes through a temporary file and ``os.replace``
(a reader never sees half a file). :func:`load_checkpoint` reads with
``torch.load(weights_only=True)``: tensors, numbers, strings and plain
containers only, never arbitrary Python objects, since a checkpoint may come
from someone else. The NumPy arrays of ``np.random.get_state()``, which
training checkpoints hold, are allowed (array reconstruction only).
A file that cannot be read (empty, truncated, not a checkpoint) raises
:class:`CheckpointError`, a :class:`ValueError` naming the file and what to
do.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from fedgraph.data.io import atomic_torch_save


class CheckpointError(ValueError):
    r"""A checkpoint file is unreadable or is not the checkpoint expected."""


def _numpy_globals() -> list[Any]:
    r"""What unpickling a NumPy array needs (the ``np.random.get_state()``
    that training checkpoints hold)."""
    try:  # NumPy >= 2
        from numpy._core.multiarray import _reconstruct
    except ImportError:  # pragma: no cover - NumPy 1.x
        from numpy.core.multiarray import _reconstruct  # type: ignore[no-redef]
    names = [_reconstruct, np.ndarray, np.dtype]
    # the dtype classes of the arrays that RNG states hold
    names += [type(np.dtype(t)) for t in ("uint32", "int64", "float64", "uint64")]
    return names


def save_checkpoint(obj: Any, path: str | os.PathLike[str]) -> None:
    r"""``torch.save(obj, path)`` atomically (parents are created)."""
    atomic_torch_save(obj, path)


def load_checkpoint(
    path: str | os.PathLike[str],
    *,
    keys: Iterable[str] = (),
    hint: str = "",
    mmap: bool = False,
) -> Any:
    r"""A checkpoint read with ``torch.load(weights_only=True)`` onto the CPU.

    Args:
        path (path): the file.
        keys (Iterable[str], optional): top-level keys the checkpoint must
            hold (a mapping). (default: none)
        hint (str, optional): what the user can do if the file is unreadable,
            appended to the error. (default: delete it)
        mmap (bool, optional): map the file's tensors into memory instead of
            reading them (cheap when only its plain values are wanted, e.g.
            the run settings a checkpoint records). (default: :obj:`False`)

    Raises:
        FileNotFoundError: if ``path`` does not exist.
        CheckpointError: if the file is empty, truncated, not a checkpoint,
            holds objects other than tensors and plain data, or lacks ``keys``.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint {path} not found")
    hint = hint or f"delete {path} (or restore it from a copy) and run again"
    if path.stat().st_size == 0:
        raise CheckpointError(f"checkpoint {path} is empty; {hint}")
    allow = getattr(torch.serialization, "safe_globals", None)  # torch >= 2.5
    try:
        with allow(_numpy_globals()) if allow else contextlib.nullcontext():
            obj = torch.load(path, weights_only=True, map_location="cpu", mmap=mmap)
    except pickle.UnpicklingError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "unpickling"
        if "weights_only" in str(exc) or "Unsupported global" in str(exc):
            reason = "holds Python objects other than tensors and plain data"
        else:
            reason = f"is not a checkpoint ({first})"
        raise CheckpointError(f"checkpoint {path} {reason}; {hint}") from None
    except (RuntimeError, EOFError, OSError, zipfile.BadZipFile, ValueError) as exc:
        # the first sentence of torch's message (the rest is advice we give)
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        first = text.split(". ")[0].rstrip(".") or type(exc).__name__
        raise CheckpointError(
            f"checkpoint {path} is truncated or corrupt ({first}); {hint}"
        ) from None
    missing = [k for k in keys if not isinstance(obj, dict) or k not in obj]
    if missing:
        raise CheckpointError(
            f"checkpoint {path} lacks {missing}: not a checkpoint of this kind; {hint}"
        )
    return obj


__all__ = [
    "CheckpointError",
    "save_checkpoint",
    "load_checkpoint",
]
