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
            '"predicates", "classes", "labelled". KGs and partitions add '
            '"in_train": {"valid", "test"}, the evaluation triples that also '
            "occur in train (0 for every shipped dataset)."
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
    r"""``{"name", "kind", **stats}`` of a registered dataset or a folder;
    KGs and federated KGs add ``in_train`` (:func:`in_train`)."""
    from fedgraph.data import load_folder, resolve_dataset
    from fedgraph.data.federated import federated_stats
    from fedgraph.data.load import is_folder_query
    from fedgraph.data.shard import FederatedKG

    path = Path(name)
    if is_folder_query(name):
        obj = load_folder(path)
        if isinstance(obj, FederatedKG):
            stats = {"name": path.name, "kind": "federated-kg", **federated_stats(obj)}
        else:
            stats = {"name": path.name, "kind": "kg", **obj.stats()}
    else:
        cls = resolve_dataset(name)
        ds = cls(root, download=download)
        obj = ds.get()
        stats = {"name": cls.name, "kind": cls.kind, **ds.stats()}
    overlap = in_train(obj)
    if overlap is not None:
        stats["in_train"] = overlap
    return stats


def in_train(obj: Any) -> dict[str, int] | None:
    r"""``{"valid": n, "test": n}``: evaluation triples of a
    :class:`~fedgraph.data.KnowledgeGraph` (summed over the clients of a
    :class:`~fedgraph.data.shard.FederatedKG`) that also occur in its
    ``train`` split; :obj:`None` for other kinds."""
    from fedgraph.data.knowledge_graph import KnowledgeGraph
    from fedgraph.data.shard import FederatedKG
    from fedgraph.data.triples import count_eval_in_train

    if isinstance(obj, KnowledgeGraph):
        graphs = [obj]
    elif isinstance(obj, FederatedKG):
        graphs = [s.graph for s in obj.shards]
    else:
        return None
    total: dict[str, int] = {}
    for graph in graphs:
        for split, n in count_eval_in_train(graph).items():
            total[split] = total.get(split, 0) + n
    return total


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


__all__ = ["register", "run", "describe", "in_train"]
