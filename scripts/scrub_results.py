r"""Writes results files without the paths of the machine that ran them.

A run records its command and folders as they were on that machine
(``/tmp/...``, the data folder, the virtual environment). Before a results
file goes under ``docs/results/``, every string in it is rewritten: the data
folder becomes ``$FEDGRAPH_DATA``, a package folder ``site-packages/...``, the
repository's own folder nothing (paths become repository-relative) and a
folder in the system's temporary folder ``runs/`` and its last name
(``/tmp/a/b/c`` → ``runs/c``, as the results pages write recorded commands).

    python scripts/scrub_results.py runs/x/results.json docs/results/x.json
    python scripts/scrub_results.py --in-place docs/results/*.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path

#: this repository's folder on the machine that runs the script
REPO = re.escape(str(Path(__file__).resolve().parents[1]))

#: (pattern, replacement), applied in order to every string
RULES = [
    (re.compile(r"[^\s\"'=]*/shared/datasets"), "$FEDGRAPH_DATA"),
    (re.compile(r"[^\s\"'=]*/site-packages/"), "site-packages/"),
    (re.compile(REPO + "/"), ""),
    (re.compile(REPO + r"\b"), "."),
    (re.compile(r"/tmp/(?:[^\s/\"']+/)*([^\s/\"']+)"), r"runs/\1"),
    (re.compile(r"/root/[^\s\"']*?([^\s/\"']+)(?=[\s\"']|$)"), r"runs/\1"),
]


def scrub_text(text: str) -> str:
    r"""``text`` with every machine path rewritten by :data:`RULES`."""
    for pattern, replacement in RULES:
        text = pattern.sub(replacement, text)
    return text


def scrub_file(source: Path, target: Path) -> None:
    r"""Writes ``source`` (a JSON file) to ``target`` with its machine paths
    rewritten in place in the text, so the file keeps its layout."""
    text = source.read_text()
    json.loads(text)
    clean = scrub_text(text)
    json.loads(clean)  # still one JSON document
    if clean != text or source != target:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        with os.fdopen(fd, "w") as f:
            f.write(clean)
        os.replace(tmp, target)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--in-place", action="store_true", help="rewrite each file")
    a = p.parse_args(argv)
    if not a.in_place and len(a.files) != 2:
        p.error("give SOURCE and TARGET, or --in-place and the files to rewrite")
    pairs = [(f, f) for f in a.files] if a.in_place else [tuple(a.files)]
    for source, target in pairs:
        try:
            scrub_file(source, target)
        except (OSError, ValueError) as err:
            print(f"`{source}`: not a readable JSON file ({err})", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
