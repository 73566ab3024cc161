r"""The results pages' generator lives beside the pages (``docs/generator``,
run as ``python docs/generate.py``), not in the package: its tests import it
as that script does, with ``docs/`` on the path."""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
if str(DOCS) not in sys.path:
    sys.path.insert(0, str(DOCS))
