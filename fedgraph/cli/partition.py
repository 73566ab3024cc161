r"""``fedgraph partition DATASET --strategy S --clients N --seed S --out DIR``."""

from __future__ import annotations

import argparse
import inspect
import time
from pathlib import Path
from typing import Any

from fedgraph.cli.choices import PARTITIONERS
from fedgraph.cli.options import number, positive, seed


def _strategies() -> list[str]:
    from fedgraph.partition import aliases, partitioners
    from fedgraph.registry import normalize_name

    short = {cls: name for name, cls in reversed(list(aliases.items()))}
    return [
        short.get(c) or normalize_name(c.__name__, "Partitioner") for c in partitioners
    ]


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
        "--alpha",
        type=number,
        default=None,
        help="Dirichlet concentration of --strategy dirichlet (default: 0.5; "
        "smaller: more skewed clients)",
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
    p.set_defaults(func=run)


def _cli_names(exc: ValueError) -> ValueError:
    # the library names its arguments; the user typed options
    return ValueError(
        str(exc).replace("`num_clients`", "`--clients`").replace("`alpha`", "`--alpha`")
    )


def _partitioner(args: argparse.Namespace) -> Any:
    from fedgraph.partition import aliases, partitioners, resolve_partitioner
    from fedgraph.registry import resolve_class

    cls = resolve_class(
        args.strategy, partitioners, suffix="Partitioner", aliases=aliases
    )
    kwargs = {}
    if args.alpha is not None:
        if (
            not isinstance(cls, type)
            or "alpha" not in inspect.signature(cls).parameters
        ):
            raise ValueError(
                f"`--alpha` applies to --strategy dirichlet only (got {args.strategy})"
            )
        kwargs["alpha"] = args.alpha
    try:
        return resolve_partitioner(cls, args.clients, seed=args.seed, **kwargs)
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
