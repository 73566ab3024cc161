r"""``fedgraph train --model rgcn``: an R-GCN method of the registry on an
RDF graph partitioned by node-type sampling, through the same round loop,
checkpoints and results format as the KGE algorithms.

FedAlign's protocol: every client's test accuracy (global bases synchronised
in) after every round, no early stopping; ``results.json`` reports the last
round's accuracy as ``weighted`` (``accuracy``, averaged over clients as
FedAlign does, and the node-weighted ``accuracy`` in the clients' rows).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from fedgraph.cli.family_options import shown
from fedgraph.cli.train_common import loop_settings


def check_rgcn_args(args: argparse.Namespace) -> None:
    r"""The checks of the R-GCN family that need no data (the options of
    other families are checked with the other families')."""
    if str(args.device).lower() != "cpu":
        raise ValueError(
            f"`--device {args.device}`: the R-GCN family trains on the CPU only"
        )
    defaults = getattr(args, "family_option_defaults", {})
    if Path(args.data).is_dir():  # a saved partition: its own clients
        for dest in ("clients", "num_types", "strategy", "partition_kwargs"):
            if dest in defaults and getattr(args, dest) != defaults[dest]:
                raise ValueError(
                    f"`{shown(dest, getattr(args, dest))}`: DATASET {args.data} is "
                    "a saved partition, whose clients are already chosen (leave "
                    "it out)"
                )


def run_rgcn(args: argparse.Namespace, algorithm: str) -> int:
    r"""Checks, loads, partitions, builds the registry's strategy and
    clients, runs and writes ``args.out``; ``--resume`` is refused when a
    setting that changes the result differs from the recorded one."""
    from fedgraph.federated import algorithms as registry
    from fedgraph.federated.algorithms import parse_assignments
    from fedgraph.federated.rgcn.setup import RGCNSettings, loop_kwargs
    from fedgraph.runtime.pipeline_run import RunFolder, run_loop
    from fedgraph.runtime.run_record import check_resume, run_identity

    t0 = time.perf_counter()
    check_rgcn_args(args)
    alg = registry.get(algorithm, "rgcn")
    own = alg.parse(parse_assignments(args.set))
    common = RGCNSettings(
        args.dim, args.num_bases, args.lr, args.local_epochs, args.seed
    )
    partition = None if Path(args.data).is_dir() else rgcn_partition(args)
    given = rgcn_record(args, algorithm, common, own, partition)
    if args.resume:
        check_resume(args.out, given, rounds=args.rounds)
        if _report_finished(args, algorithm):
            return 0
    fed = _federation(args, partition)
    given.update(run_identity(args.out, args.data, args.root))  # data fingerprint
    if args.resume:
        check_resume(args.out, given)
    strategy, clients = alg.build(fed, common, own)
    setup_seconds = time.perf_counter() - t0
    meta = _meta(args, given, strategy)
    meta["setup_seconds"] = setup_seconds
    loop = loop_settings(args, **loop_kwargs(args.rounds, args.seed))  # FedAlign's
    res = run_loop(strategy, clients, loop, RunFolder(args.out, args.resume), meta)
    if res.rounds < args.rounds:
        print(f"stopped after round {res.rounds}; continue with --resume", flush=True)
        return 0
    last = res.history[-1]  # FedAlign's protocol: the last round's accuracy
    res.test, res.test_clients = dict(last["test"]), dict(last["test_clients"])
    path = res.write_results(args.out / "results.json", settings=meta)
    print(
        f"{algorithm} on {args.data}: test accuracy {res.test['accuracy']:.4f} "
        f"after {res.rounds} rounds; results in {path}"
    )
    return 0


def _report_finished(args: argparse.Namespace, algorithm: str) -> bool:
    r"""``--resume`` on a run that already reached ``--rounds``: print its
    results and leave the folder as it is (another ``--rounds`` is refused
    before: :func:`~fedgraph.runtime.run_record.check_rounds`)."""
    import json

    finished = args.out / "results.json"
    if not finished.exists():
        return False
    done = json.loads(finished.read_text())
    if done.get("rounds", 0) < args.rounds:
        return False
    print(
        f"{algorithm} run in {args.out} already finished at round {done['rounds']}: "
        f"test accuracy {done['weighted']['accuracy']:.4f}; {finished} left as written"
    )
    return True


def rgcn_partition(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    r"""The partitioner of a named RDF graph (``--strategy``, default
    rdf-type, from :data:`fedgraph.partition.partitioners`) and its own
    arguments (``--partition-kwargs``; rdf-type's ``num_types`` is
    ``--num-types`` unless given there), checked before any data is read."""
    from fedgraph.federated.algorithms import parse_assignments
    from fedgraph.partition import partitioners

    given = parse_assignments(args.partition_kwargs, "`--partition-kwargs`")
    try:
        name = partitioners.name(partitioners.resolve_class(args.strategy))
        kwargs = partitioners.check_kwargs(name, given)
    except ValueError as exc:
        message = str(exc).replace("`partition_kwargs`", "`--partition-kwargs`")
        raise ValueError(f"`--strategy {args.strategy}`: {message}") from None
    default = getattr(args, "family_option_defaults", {}).get("num_types", 6)
    if "num_types" not in partitioners.hyperparameters(name):
        if args.num_types != default:
            raise ValueError(
                f"`--num-types {args.num_types}` is an argument of rdf-type, not of "
                f"{name} (leave it out)"
            )
        return name, kwargs
    if "num_types" in kwargs and args.num_types != default:
        raise ValueError(
            f"`--num-types {args.num_types}` and `--partition-kwargs num_types="
            f"{kwargs['num_types']}` both set num_types: give one"
        )
    return name, {"num_types": args.num_types, **kwargs}


def _federation(
    args: argparse.Namespace, partition: tuple[str, dict[str, Any]] | None
) -> Any:
    r"""The saved partition ``args.data``, or the registered RDF graph split
    by ``partition`` (:func:`rgcn_partition`) into ``--clients`` clients."""
    import torch

    from fedgraph.data.rdf_entities import load_rdf
    from fedgraph.partition import resolve_partitioner
    from fedgraph.partition.rdf_shard import FederatedRDF

    torch.manual_seed(args.seed)
    if partition is None:  # a saved partition (`fedgraph partition`)
        return FederatedRDF.load(args.data)
    name, kwargs = partition
    graph = load_rdf(args.data, args.root)
    torch.manual_seed(args.seed)
    partitioner = resolve_partitioner(name, args.clients, seed=args.seed, **kwargs)
    try:
        return partitioner(graph)
    except TypeError as exc:  # a partitioner of KGs, not of RDF graphs
        raise ValueError(f"`--strategy {args.strategy}`: {exc}") from None


def rgcn_record(
    args: argparse.Namespace,
    algorithm: str,
    common: Any,
    own: Any,
    partition: tuple[str, dict[str, Any]] | None,
) -> dict[str, Any]:
    r"""What changes the result of an R-GCN run: a resumed run must have
    been trained with it (the partitioner's name only when it is not the
    default rdf-type)."""
    from dataclasses import asdict

    split: dict[str, Any] = {}
    if partition is not None:
        name, kwargs = partition
        split = {"num_clients": args.clients, **kwargs}
        split.update({} if name == "rdf-type" else {"partitioner": name})
    return {
        "algorithm": algorithm,
        "family": "rgcn",
        "model": "rgcn",
        "data": str(args.data),
        **asdict(common),
        "extra": asdict(own),
        **split,
    }


def _meta(
    args: argparse.Namespace, given: dict[str, Any], strategy: Any
) -> dict[str, Any]:
    r"""The run's recorded settings (``progress.json``, ``results.json``)."""
    return {
        **given,
        "command": args.command_line,
        "strategy": repr(strategy),
        "rounds_max": args.rounds,
        "protocol": {
            "evaluation": "every client's test accuracy after every round, "
            "global bases synchronised in",
            "early_stopping": "none",
            "optimizer": "SGD",
        },
    }
