r"""``fedgraph partition DATASET --strategy S --clients N --seed S --out DIR``."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from fedgraph.cli.choices import PARTITIONERS
from fedgraph.cli.options import positive, seed
from fedgraph.declared import kwargs_help


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "partition",
        help="split a dataset into client shards and save them",
        description=(
            "Partitions DATASET (a name known to fedgraph.data.load_dataset, "
            "e.g. fb15k-237, nell-995, aifb) into client shards, saved "
            "atomically under --out (see docs/partition.md for the layout)."
        ),
    )
    p.add_argument(
        "dataset", metavar="DATASET", help="registered name (e.g. fb15k-237, aifb)"
    )
    p.add_argument(
        "--strategy",
        required=True,
        help=f"partitioner: {' | '.join(PARTITIONERS)} (or a class name)",
    )
    p.add_argument(
        "--clients", type=positive, required=True, help="number of clients (>= 1)"
    )
    p.add_argument("--seed", type=seed, default=0, help="random seed (default: 0)")
    p.add_argument(
        "--partition-kwargs",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an argument of the partitioner's own (repeatable; e.g. "
        "--partition-kwargs alpha=0.5 for dirichlet); each partitioner's "
        "arguments and defaults: " + kwargs_help("partitioner"),
    )
    p.add_argument("--out", required=True, type=Path, help="output folder")
    p.add_argument(
        "--root", default=None, help="raw data root (default: $FEDGRAPH_DATA)"
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace --out if it is a partition fedgraph wrote (never another folder)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress or summary")
    p.add_argument(
        "--keep-splits",
        action="store_true",
        help="keep the dataset's own train/valid/test: each triple stays in its "
        "split and goes to the client the partitioner gave it to (default: "
        "each client's triples pooled and re-split 8:1:1)",
    )
    p.set_defaults(func=run)


def _cli_names(exc: ValueError) -> ValueError:
    # the library names its arguments; the user typed options
    return ValueError(
        str(exc)
        .replace("`num_clients`", "`--clients`")
        .replace("`partition_kwargs`", "`--partition-kwargs`")
    )


def _partitioner(args: argparse.Namespace) -> Any:
    from fedgraph.federated.algorithms import parse_assignments
    from fedgraph.partition import partitioners

    try:
        given = parse_assignments(args.partition_kwargs, "`--partition-kwargs`")
        kwargs = partitioners.check_kwargs(args.strategy, given)
        return partitioners.resolve(
            args.strategy, args.clients, seed=args.seed, **kwargs
        )
    except ValueError as exc:
        raise _cli_names(exc) from None


def run(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    from fedgraph import data
    from fedgraph.partition import describe, format_table, save_partition
    from fedgraph.partition.feasible import check_shards
    from fedgraph.partition.io import check_replaceable

    if args.out.exists() and not args.overwrite:
        raise ValueError(f"`--out` {args.out} exists (pass --overwrite to replace it)")
    if args.out.exists():
        check_replaceable(args.out)
    partitioner = _partitioner(args)
    steps = ["load", "partition", "save"]
    bar = tqdm(steps, desc="partition", disable=args.quiet, leave=False)
    times = {}
    for step in bar:
        bar.set_postfix_str(step)
        t0 = time.perf_counter()
        if step == "load":
            graph = data.load_dataset(args.dataset, root=args.root)
            try:  # before the work, and before anything is written
                partitioner.check_feasible(graph)
            except ValueError as exc:
                raise _cli_names(exc) from None
        elif step == "partition":
            try:
                fed = partitioner(graph)
                if args.keep_splits:
                    from fedgraph.partition.split import keep_source_splits

                    fed = keep_source_splits(fed, graph)
                check_shards(fed)
            except ValueError as exc:
                raise _cli_names(exc) from None
        else:
            save_partition(fed, args.out, overwrite=args.overwrite)
        times[step] = time.perf_counter() - t0
    if not args.quiet:
        print(f"{partitioner!r} on {args.dataset} -> {args.out}")
        print(", ".join(f"{k} {v:.1f}s" for k, v in times.items()))
        print(format_table(describe(fed, clustering=False)))
    return 0


__all__ = ["register", "run"]
