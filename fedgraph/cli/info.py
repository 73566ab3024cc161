r"""``fedgraph info DATASET [--json]``: a dataset's statistics."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "info",
        help="print a dataset's statistics",
        description=(
            "Loads a registered dataset (or a triple / client-folder directory) "
            'and prints its statistics. KG JSON: {"entities", "relations", '
            '"triples": {"train", "valid", "test"}}; federated partitions add '
            '"clients" (the same per client); DBP-5L adds "languages" and '
            '"alignments"; RDF benchmarks give "nodes", "triples", '
            '"predicates", "classes", "labelled".'
        ),
    )
    p.add_argument("dataset", metavar="DATASET", help="registered name or folder")
    p.add_argument("--root", type=Path, default=None, help="data root")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--no-download",
        action="store_true",
        help="fail instead of downloading missing raw files",
    )
    p.set_defaults(func=run)


def describe(
    name: str, root: Path | None = None, download: bool = True
) -> dict[str, Any]:
    r"""``{"name", "kind", **stats}`` of a registered dataset or a folder."""
    from fedgraph.data import load_folder, resolve_dataset
    from fedgraph.data.federated import federated_stats
    from fedgraph.data.load import is_folder_query
    from fedgraph.data.shard import FederatedKG

    path = Path(name)
    if is_folder_query(name):
        obj = load_folder(path)
        if isinstance(obj, FederatedKG):
            return {"name": path.name, "kind": "federated-kg", **federated_stats(obj)}
        return {"name": path.name, "kind": "kg", **obj.stats()}
    cls = resolve_dataset(name)
    ds = cls(root, download=download)
    return {"name": cls.name, "kind": cls.kind, **ds.stats()}


def _fmt(stats: dict[str, Any]) -> str:
    out = [f"{stats['name']} ({stats['kind']})"]
    for key, value in stats.items():
        if key in ("name", "kind", "clients", "languages"):
            continue
        if isinstance(value, dict):
            value = ", ".join(
                f"{k}={v:,}" if isinstance(v, int) else f"{k}={v}"
                for k, v in value.items()
            )
        elif isinstance(value, int):
            value = f"{value:,}"
        out.append(f"  {key}: {value}")
    for group in ("clients", "languages"):
        items = stats.get(group)
        if not items:
            continue
        out.append(f"  {group}:")
        pairs = enumerate(items) if isinstance(items, list) else items.items()
        for k, s in pairs:
            tri = ", ".join(f"{sp}={n:,}" for sp, n in s["triples"].items())
            out.append(
                f"    {k}: entities={s['entities']:,} relations={s['relations']:,} {tri}"
            )
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    stats = describe(args.dataset, args.root, download=not args.no_download)
    print(json.dumps(stats, indent=2) if args.json else _fmt(stats))
    return 0


__all__ = ["register", "run", "describe"]
