r"""``fedgraph datasets``: the dataset registry and what is present locally."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "datasets",
        help="list the registered datasets and whether each is present locally",
        description=(
            "Lists every registered dataset: its name, kind, whether all its "
            "raw files are present under the data root (--root, else "
            "FEDGRAPH_DATA, else the user cache) and where they are looked for."
        ),
    )
    p.add_argument("--root", type=Path, default=None, help="data root")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def rows(root: Path | None = None) -> list[dict[str, object]]:
    r"""One ``{"name", "kind", "present", "path", "aliases"}`` per dataset."""
    from fedgraph.data import datasets

    return [
        {
            "name": cls.name,
            "kind": cls.kind,
            "present": cls.is_present(root),
            "path": str(cls.raw_folder(root)),
            "aliases": list(cls.aliases),
        }
        for cls in datasets
    ]


def run(args: argparse.Namespace) -> int:
    table = rows(args.root)
    if args.json:
        print(json.dumps(table, indent=2))
        return 0
    header = ("name", "kind", "present", "path")
    cells = [
        (
            str(r["name"]),
            str(r["kind"]),
            "yes" if r["present"] else "no",
            str(r["path"]),
        )
        for r in table
    ]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(header)]
    for line in (header, tuple("-" * w for w in widths), *cells):
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())
    return 0


__all__ = ["register", "run", "rows"]
