r"""``fedgraph fuse RUN_DIR --single SINGLE_DIR``: FedE's model fusion
(FedE §2.2.3) as a final step of a trained federated run.

On every client, a linear layer over the scores of its single-KG model
(``SINGLE_DIR``: the Independent baseline on the same partition, e.g.
``fedgraph train --algorithm independent --out SINGLE_DIR``) and of its
federated model (``RUN_DIR``'s best round; FedLU: the local model) is fitted
with FedE's margin ranking loss on the client's validation triples; the
single, federated and fused models are then tested. Writes
``RUN_DIR/fusion/results.json`` (or ``--results``) in the results format,
the fused model's metrics as ``weighted`` and the other two as
``weighted_single`` and ``weighted_federated``. Nothing leaves a client:
fusion is local.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from fedgraph import guard
from fedgraph.cli.choices import CHECKPOINTS
from fedgraph.cli.options import non_negative, positive, real, seed, threads


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fuse",
        help="FedE's model fusion of a federated run with the single-KG models",
        description=(
            "FedE's model fusion (FedE §2.2.3) as a final step: on every client, a "
            "linear layer over the scores of its Independent model (--single) and its "
            "federated model (RUN_DIR's best round) is fitted on its validation "
            "triples; the three models are tested and RUN_DIR/fusion/results.json "
            "written."
        ),
    )
    _add_inputs(p)
    _add_fitting(p)
    p.add_argument(
        "--checkpoint",
        choices=CHECKPOINTS,
        default="best",
        help="the federated run's state to fuse: its best validation round or its "
        "last round (default: best)",
    )
    p.add_argument(
        "--data", default=None, help="the partition, if it moved since the run"
    )
    p.add_argument(
        "--threads",
        type=threads,
        default=0,
        help="torch threads, at most the machine's CPUs (0: default)",
    )
    p.add_argument(
        "--results",
        type=Path,
        default=None,
        help="results file (default: RUN_DIR/fusion/results.json)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _add_inputs(p: argparse.ArgumentParser) -> None:
    r"""The federated run and the single-KG models to fuse."""
    p.add_argument("run_dir", type=Path, help="output folder of `fedgraph train`")
    p.add_argument(
        "--single",
        required=True,
        type=Path,
        help="folder of the Independent baseline's trainerK.pt checkpoints (one per "
        "client, same partition)",
    )
    p.add_argument(
        "--single-results",
        type=Path,
        default=None,
        help="the Independent run's results file, for its model settings "
        "(default: SINGLE/results.json if it exists, else the federated run's "
        "model, dim and gamma)",
    )


def _add_fitting(p: argparse.ArgumentParser) -> None:
    r"""The fitting of the fusion layer."""
    p.add_argument(
        "--fit-on",
        default="valid",
        choices=("valid", "train"),
        help="triples the fusion layer is fitted on (default: valid, as FedE's code)",
    )
    p.add_argument(
        "--epochs",
        type=non_negative,
        default=100,
        help="fitting epochs (100; 0: no fitting, the plain sum of the two scores)",
    )
    p.add_argument(
        "--lr", type=real(0.0), default=0.1, help="Adam lr of the layer (0.1)"
    )
    p.add_argument(
        "--batch-size",
        type=positive,
        default=512,
        help="triples per batch of the fitting (default: 512)",
    )
    p.add_argument(
        "--num-negatives",
        type=positive,
        default=256,
        help="negatives per positive in the fitting (default: 256)",
    )
    p.add_argument(
        "--margin",
        type=real(0.0, strict=False),
        default=10.0,
        help="FedE's beta (default: 10)",
    )
    p.add_argument("--seed", type=seed, default=0, help="random seed (default: 0)")


@guard.releases_locks
def run(args: argparse.Namespace) -> int:
    import torch

    from fedgraph.eval import write_results
    from fedgraph.runtime.trained import load_trained_run
    from fedgraph.training.fusion import fuse_and_evaluate
    from fedgraph.training.fusion_io import load_single_model, single_model_settings

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    opts = _fusion_options(args)
    if not args.single.is_dir():
        raise FileNotFoundError(f"`--single` folder {args.single} does not exist")
    out = guard.check_file(  # someone's file there is refused before any work
        args.results or args.run_dir / "fusion" / "results.json", option="--results"
    )
    meta, _, fed, strategy, clients, which_round = load_trained_run(
        args.run_dir, args.checkpoint, data=args.data
    )
    single_settings = single_model_settings(args.single, meta, args.single_results)
    single = {
        s.client_id: load_single_model(args.single, s, single_settings)
        for s in fed.shards
    }
    # the federated model each client was tested with (FedE: the global rows)
    ids = sorted(clients)
    payloads = strategy.configure_evaluate(0, ids, split="test")
    federated = {c: clients[c].evaluation_model(payloads[c]) for c in ids}
    t0 = time.perf_counter()
    res = fuse_and_evaluate(
        clients,
        single,
        federated,
        fit_split=opts.fit_on,
        seed=opts.seed,
        **opts.fit_kwargs(),
    )
    seconds = time.perf_counter() - t0
    settings = _settings(args, meta, which_round, single_settings, seconds)
    write_results(
        guard.claim_file(out, option="--results"),
        weighted=res["weighted"],
        weighted_single=res["weighted_single"],
        weighted_federated=res["weighted_federated"],
        clients=res["clients"],
        rounds=args.epochs,  # of the fusion layer's fitting
        seconds_per_round=seconds / max(1, args.epochs),
        settings=settings,
    )
    _print_summary(res, seconds, out)
    return 0


def _fusion_options(args: argparse.Namespace) -> Any:
    r"""The :class:`~fedgraph.training.fusion.FusionSettings` of ``args``."""
    from fedgraph.training.fusion import FusionSettings

    return FusionSettings(
        epochs=args.epochs,
        lr=args.lr,
        fit_on=args.fit_on,
        batch_size=args.batch_size,
        num_negatives=args.num_negatives,
        margin=args.margin,
        seed=args.seed,
    )


def _settings(
    args: argparse.Namespace,
    meta: dict[str, Any],
    which_round: Any,
    single_settings: dict[str, Any],
    seconds: float,
) -> dict[str, Any]:
    r"""The results file's ``settings`` of a fusion run."""
    import torch

    return {
        "command": args.command_line,
        "run_dir": str(args.run_dir),
        "algorithm": meta["algorithm"],
        "checkpoint": which_round,
        "data": meta["data"] if args.data is None else args.data,
        "single_dir": str(args.single),
        "single": single_settings,
        "federated": {k: meta[k] for k in ("model", "dim", "gamma")},
        "fit_on": args.fit_on,
        "epochs": args.epochs,
        "lr": args.lr,
        "batch_size": args.batch_size,
        "num_negatives": args.num_negatives,
        "margin": args.margin,
        "seed": args.seed,
        "threads": torch.get_num_threads(),
        "seconds": seconds,
        # the federated run's protocol (a run recording no protocol name ran
        # FedLU's, described here in words)
        "protocol": meta["protocol"]
        if "name" in meta.get("protocol", {})
        else "filtered, head+tail, client's own entities, client's own "
        "train+valid+test as filter, realistic rank",
    }


def _print_summary(res: dict[str, Any], seconds: float, out: Path) -> None:
    print(
        "test mrr single {:.4f}, federated {:.4f}, fused {:.4f} ({:.0f}s); "
        "results in {}".format(
            res["weighted_single"]["mrr"],
            res["weighted_federated"]["mrr"],
            res["weighted"]["mrr"],
            seconds,
            out,
        )
    )
