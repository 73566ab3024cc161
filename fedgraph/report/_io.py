r"""File access for the report pages: atomic text writes (temporary file +
``os.replace``) and results files read when present."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fedgraph.data.io import atomic_write_text

__all__ = ["LINK", "atomic_write_text", "load_json"]

LINK = "../results/"  # from a page under docs/papers/ to a results file


def load_json(path: Path) -> Any | None:
    r"""The JSON document at ``path``, or ``None`` when there is no such file."""
    if not path.exists():
        return None
    with open(path) as f:
        return json.load(f)
