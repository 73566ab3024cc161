r"""``fedgraph stats DIR [--json]``: statistics of a saved partition."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

#: a client folder of a published layout: ``client3/`` or ``3/``
_CLIENT = re.compile(r"^(?:client)?\d+$")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "stats",
        help="describe a saved partition (per client and overall)",
        description=(
            "Reads a partition folder (validating its checksums; a published "
            "client0/ client1/ … triple-folder layout without META.json is read "
            "as is) and prints "
            "per-client and overall statistics as a table or JSON: "
            '{"clients": [{"entities", "relations", "triples": {"train", '
            '"valid", "test"}, "shared_entities", ...}], "overall": {...}}.'
        ),
    )
    p.add_argument(
        "dir",
        metavar="DIR",
        type=Path,
        help="a partition folder (`fedgraph partition --out`) or a client0/ "
        "client1/ … layout",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--no-clustering",
        action="store_true",
        help="skip the clustering coefficient (the slowest statistic)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from fedgraph.partition import describe, format_table, load_partition

    if (
        args.dir.is_dir()
        and not (args.dir / "META.json").exists()
        and any(p.is_dir() and _CLIENT.match(p.name) for p in args.dir.iterdir())
    ):
        # A published client-folder partition (e.g. FedLU's C3): no META.json.
        from fedgraph.data import load_federated_folder

        fed = load_federated_folder(args.dir)
    else:
        fed = load_partition(args.dir)
    kwargs = {"clustering": False} if args.no_clustering else {}
    stats = describe(fed, **kwargs)
    if args.json:
        print(json.dumps(stats, indent=2))
    else:
        print(format_table(stats))
    return 0


__all__ = ["register", "run"]
