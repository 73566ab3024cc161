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
from fedgraph.cli.train_common import progress_writer


def check_rgcn_args(args: argparse.Namespace) -> None:
    r"""The checks of the R-GCN family that need no data (the options of
    other families are checked with the other families')."""
    if str(args.device).lower() != "cpu":
        raise ValueError(
            f"`--device {args.device}`: the R-GCN family trains on the CPU only"
        )
    defaults = getattr(args, "family_option_defaults", {})
    if Path(args.data).is_dir():  # a saved partition: its own clients
        for dest in ("clients", "num_types"):
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
    from fedgraph.runtime import run_simulation
    from fedgraph.runtime.run_record import check_resume, run_identity

    t0 = time.perf_counter()
    check_rgcn_args(args)
    alg = registry.get(algorithm, "rgcn")
    own = alg.parse(parse_assignments(args.set))
    common = RGCNSettings(
        args.dim, args.num_bases, args.lr, args.local_epochs, args.seed
    )
    given = rgcn_record(args, algorithm, common, own)
    if args.resume:
        check_resume(args.out, given, rounds=args.rounds)
        if _report_finished(args, algorithm):
            return 0
    fed = _federation(args)
    given.update(run_identity(args.out, args.data, args.root))  # data fingerprint
    if args.resume:
        check_resume(args.out, given)
    strategy, clients = alg.build(fed, common, own)
    setup_seconds = time.perf_counter() - t0
    args.out.mkdir(parents=True, exist_ok=True)  # only once the run can start
    meta = _meta(args, given, strategy)
    meta["setup_seconds"] = setup_seconds
    res = run_simulation(
        strategy,
        clients,
        **loop_kwargs(args.rounds, args.seed),
        checkpoint_dir=args.out / "checkpoints",
        resume=args.resume,
        progress=not args.quiet,
        stop_after=args.stop_after,
        on_round=progress_writer(args, meta),
        record=meta,
    )
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


def _federation(args: argparse.Namespace) -> Any:
    r"""The saved partition ``args.data``, or the registered RDF graph
    partitioned by node-type sampling (``--clients``, ``--num-types``)."""
    import torch

    from fedgraph.data.rdf_entities import load_rdf
    from fedgraph.partition.rdf_shard import FederatedRDF
    from fedgraph.partition.rdf_type import RDFTypePartitioner

    torch.manual_seed(args.seed)
    if Path(args.data).is_dir():  # a saved partition (`fedgraph partition`)
        return FederatedRDF.load(args.data)
    graph = load_rdf(args.data, args.root)
    torch.manual_seed(args.seed)
    return RDFTypePartitioner(args.clients, num_types=args.num_types, seed=args.seed)(
        graph
    )


def rgcn_record(
    args: argparse.Namespace, algorithm: str, common: Any, own: Any
) -> dict[str, Any]:
    r"""What changes the result of an R-GCN run: a resumed run must have
    been trained with it."""
    from dataclasses import asdict

    return {
        "algorithm": algorithm,
        "family": "rgcn",
        "model": "rgcn",
        "data": str(args.data),
        **asdict(common),
        "extra": asdict(own),
        **(
            {}
            if Path(args.data).is_dir()
            else {"num_clients": args.clients, "num_types": args.num_types}
        ),
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
