r"""Atomic text writes for the report pages (temporary file + ``os.replace``)."""

from __future__ import annotations

import os
from pathlib import Path

from fedgraph.data.io import _atomic_write


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    r"""``text`` to ``path`` atomically: readers never see a half-written file."""
    _atomic_write(Path(path), lambda tmp: tmp.write_text(text))
