r"""File access for the report pages: results files read when present
(pages are written with :func:`fedgraph.data.io.atomic_write_text`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["LINK", "load_json"]

LINK = "../results/"  # from a page under docs/papers/ to a results file


def load_json(path: Path) -> Any | None:
    r"""The JSON document at ``path``, or ``None`` when there is no such file."""
    if not path.exists():
        return None
    with open(path) as f:
        return json.load(f)
