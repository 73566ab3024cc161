r"""File access for the report pages: atomic text writes (temporary file +
``os.replace``) and results files read when present."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from fedgraph.data.io import _atomic_write

LINK = "../results/"  # from a page under docs/papers/ to a results file


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    r"""``text`` to ``path`` atomically: readers never see a half-written file."""
    _atomic_write(Path(path), lambda tmp: tmp.write_text(text))


def load_json(path: Path) -> Any | None:
    r"""The JSON document at ``path``, or ``None`` when there is no such file."""
    if not path.exists():
        return None
    with open(path) as f:
        return json.load(f)
