r"""Reading the results files that the report tables cite: a results file
that is not there yet is ``None`` (its row is left out), and a table links
each file it shows by :data:`LINK` (pages are written with
:func:`fedgraph.data.io.atomic_write_text`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["LINK", "load_json"]

#: The link from a results page under ``docs/papers/`` to a results file.
LINK = "../results/"


def load_json(path: Path) -> Any | None:
    r"""The JSON document at ``path``, or ``None`` when there is no such file."""
    if not path.exists():
        return None
    with open(path) as f:
        return json.load(f)
