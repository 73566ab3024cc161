r"""``fedgraph unlearn RUN_DIR --forget FILE_OR_DIR``: FedLU unlearning of a
trained FedLU run (``fedgraph train --algorithm fedlu --out RUN_DIR``).

Evaluates the raw models, unlearns (retroactive interference, passive decay,
then ``--rounds`` FedLU rounds on the retained data), evaluates again and,
unless ``--no-retrain``, trains the re-trained-from-scratch references; writes ``RUN_DIR/unlearn/results.json``
(or ``--results``) as
``{"raw" | "retrained" | "unlearned": {"local" | "global": {"forget" | "test":
{"hits@1", "mrr"}}}, "seconds": {...}}``.
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fedgraph import guard
from fedgraph.cli.choices import CHECKPOINTS
from fedgraph.cli.options import non_negative, positive, real, threads


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "unlearn",
        help="forget triples from a trained FedLU run (FedLU §4.2)",
        description=(
            "FedLU unlearning (FedLU §4.2) of a trained FedLU run: evaluates the raw "
            "models, unlearns the --forget triples, evaluates again and (unless "
            "--no-retrain) trains the "
            "re-trained references; writes RUN_DIR/unlearn/results.json."
        ),
    )
    p.add_argument("run_dir", type=Path, help="output folder of `fedgraph train`")
    p.add_argument(
        "--forget",
        required=True,
        type=Path,
        help="a folder of clientK/unlearn.txt files (FedLU's layout), or one file "
        "with --client",
    )
    p.add_argument(
        "--client", type=non_negative, default=None, help="client of a single file"
    )
    _add_unlearning(p)
    _add_retraining(p)
    p.add_argument(
        "--checkpoint",
        choices=CHECKPOINTS,
        default="best",
        help="the run's state to unlearn from: its best validation round or its "
        "last round (default: best)",
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
        help="results file (default: RUN_DIR/unlearn/results.json)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep the raw and unlearned results of an earlier call with the same "
        "settings and continue its re-training from the checkpoints in "
        "RUN_DIR/unlearn/retrain",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _add_unlearning(p: argparse.ArgumentParser) -> None:
    r"""FedLU's unlearning options (interference, decay, aggregation)."""
    p.add_argument(
        "--epochs", type=non_negative, default=10, help="interference epochs (10)"
    )
    p.add_argument(
        "--decay-epochs", type=non_negative, default=10, help="max passive-decay epochs"
    )
    p.add_argument(
        "--mu-soft",
        type=real(0.0, strict=False),
        default=0.1,
        help="weight of the soft-confusion loss on the forgotten triples (0.1)",
    )
    p.add_argument(
        "--mu-distill",
        type=real(0.0, strict=False),
        default=None,
        help="default: the run's mu_distill",
    )
    p.add_argument("--no-hard", action="store_true", help="ablation: no hard confusion")
    p.add_argument(
        "--no-aggregate",
        action="store_true",
        help="skip the server aggregation after unlearning",
    )
    p.add_argument(
        "--rounds",
        type=non_negative,
        default=1,
        help="FedLU learning rounds on the retained data after unlearning "
        "(propagation; 0: only average the global tables) (default: 1)",
    )


def _add_retraining(p: argparse.ArgumentParser) -> None:
    r"""The re-trained-from-scratch references."""
    p.add_argument(
        "--no-retrain",
        action="store_true",
        help="skip the references re-trained from scratch without the forgotten "
        "triples (the slowest part)",
    )
    p.add_argument(
        "--retrain-max-epochs",
        type=positive,
        default=400,
        help="max epochs of each re-trained reference (default: 400)",
    )


@guard.releases_locks
def run(args: argparse.Namespace) -> int:
    import torch

    from fedgraph.eval import library_versions
    from fedgraph.federated.kge.setup import algorithm_settings
    from fedgraph.runtime.trained import load_trained_run

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    # unlearning needs the local and global tables of a FedLU run
    meta, settings, fed, strategy, clients, which_round = load_trained_run(
        args.run_dir, args.checkpoint, algorithms=("fedlu",)
    )
    requests = _requests(args, fed)
    mu = (
        args.mu_distill
        if args.mu_distill is not None
        else algorithm_settings("fedlu", settings.extra)["mu_distill"]
    )
    doc: dict[str, Any] = {
        "settings": _settings(args, meta, settings, which_round, requests, mu),
        "seconds": {},
        "versions": library_versions(),
    }
    out = guard.claim_file(  # not over a file of someone else; locked
        args.results or args.run_dir / "unlearn" / "results.json", option="--results"
    )
    if not args.no_retrain:  # the re-trained references' checkpoints
        guard.claim(args.run_dir / "unlearn", ("retrain",), option="RUN_DIR")
    finished = _earlier_results(out, doc["settings"]) if args.resume else None
    if finished is not None:
        print(f"resuming: raw and unlearned results of {out}", flush=True)
        doc = {
            **copy.deepcopy(finished),
            "settings": doc["settings"],
            "versions": doc["versions"],
        }
    else:
        _unlearn(args, doc, out, strategy, clients, requests, mu)
    if not args.no_retrain and not _retrain(
        args, doc, out, fed, settings, requests, finished
    ):
        return 0
    print(f"results in {out}")
    return 0


def _requests(args: argparse.Namespace, fed: Any) -> dict[int, Any]:
    r"""The forget requests of ``--forget`` (a folder, or a file for
    ``--client``)."""
    from fedgraph.federated.unlearning.forget import load_forget_requests

    if args.forget.is_dir():
        return load_forget_requests(args.forget, fed)
    if args.client is None:
        raise ValueError(
            "`--forget` is a file: pass `--client K` (the client it is for)"
        )
    return load_forget_requests({args.client: args.forget}, fed)


def _settings(
    args: argparse.Namespace,
    meta: dict[str, Any],
    settings: Any,
    which_round: Any,
    requests: dict[int, Any],
    mu: float,
) -> dict[str, Any]:
    r"""The results file's ``settings`` of an unlearning run."""
    import torch

    return {
        "command": args.command_line,
        "run_dir": str(args.run_dir),
        "checkpoint": which_round,
        "data": meta["data"],
        "model": settings.model,
        "forget": str(args.forget),
        "n_forget": {str(c): int(f.size(0)) for c, f in requests.items()},
        "epochs": args.epochs,
        "decay_epochs": args.decay_epochs,
        "mu_soft": args.mu_soft,
        "mu_distill": mu,
        "hard": not args.no_hard,
        "aggregate": not args.no_aggregate,
        "propagation_rounds": args.rounds,
        "threads": torch.get_num_threads(),
        "protocol": "Hits@1/MRR, head+tail, client's own entities; forget set "
        "filtered by the client's triples minus the forget set",
    }


def _retrain(
    args: argparse.Namespace,
    doc: dict[str, Any],
    out: Path,
    fed: Any,
    settings: Any,
    requests: dict[int, Any],
    finished: dict[str, Any] | None,
) -> bool:
    r"""Trains (or resumes) the re-trained references and writes them into
    ``doc`` and ``out``. Returns :obj:`False` when a resumed run's references
    had already finished (``out`` is left as it was)."""
    from fedgraph.data.io import atomic_write_json
    from fedgraph.federated.unlearning.retrain import retrain

    ref = retrain(
        fed,
        requests,
        model=settings.model,
        dim=settings.dim,
        gamma=settings.gamma,
        seed=settings.seed,
        lr=settings.lr,
        batch_size=settings.batch_size,
        num_negatives=settings.num_negatives,
        max_epochs=args.retrain_max_epochs,
        checkpoint_dir=args.run_dir / "unlearn" / "retrain",
        resume=args.resume,
    )
    retrained = {k: ref[k] for k in ("local", "global")}
    if finished is not None and _same(
        (finished.get("retrained"), finished.get("retrain_epochs")),
        (retrained, ref["epochs"]),
    ):
        # the re-training had finished: this call only re-evaluated it
        # from its checkpoints; the file keeps the original call's record
        print(f"unchanged: {out} (finished run)")
        return False
    doc["retrained"] = retrained
    doc["seconds"]["retrain"] = ref["seconds"]
    doc["seconds"]["retrain_train"] = ref["train_seconds"]
    doc["retrain_epochs"] = ref["epochs"]
    atomic_write_json(out, doc, default=float)
    return True


#: settings that may differ between a call and the one it resumes.
_FREE = ("command", "threads")


def _same(a: Any, b: Any) -> bool:
    r"""Whether ``a`` and ``b`` are equal as JSON (tuples as lists, numbers as
    written)."""
    return json.loads(json.dumps(a, default=float)) == json.loads(
        json.dumps(b, default=float)
    )


def _earlier_results(out: Path, settings: dict[str, Any]) -> dict[str, Any] | None:
    r"""The results file of an earlier call with the same settings that got as
    far as the unlearned model's evaluation, as written, else ``None``."""
    if not out.exists():
        return None
    written = json.loads(out.read_text())
    old = {k: v for k, v in written.get("settings", {}).items() if k not in _FREE}
    new = {k: v for k, v in settings.items() if k not in _FREE}
    if "unlearned" not in written or not _same(new, old):
        return None
    return written


def _unlearn(
    args: argparse.Namespace,
    doc: dict[str, Any],
    out: Path,
    strategy: Any,
    clients: Mapping[int, Any],
    requests: Mapping[int, Any],
    mu: float,
) -> None:
    r"""Evaluates the raw models, unlearns, evaluates the unlearned ones; writes
    ``out`` after each step."""
    from fedgraph.data.io import atomic_write_json
    from fedgraph.federated.unlearning.unlearn import (
        evaluate_forgetting,
        unlearn_federation,
    )

    t0 = time.perf_counter()
    doc["raw"] = evaluate_forgetting(clients, requests)
    doc["seconds"]["evaluate"] = time.perf_counter() - t0
    atomic_write_json(out, doc, default=float)
    log = unlearn_federation(
        strategy,
        clients,
        requests,
        aggregate=not args.no_aggregate,
        rounds=args.rounds,
        epochs=args.epochs,
        decay_epochs=args.decay_epochs,
        mu_soft=args.mu_soft,
        mu_distill=mu,
        hard=not args.no_hard,
    )
    doc["seconds"]["unlearn"], doc["unlearn_log"] = log["seconds"], log["clients"]
    doc["seconds"]["propagate"] = log["propagate_seconds"]
    doc["unlearned"] = evaluate_forgetting(clients, requests)
    atomic_write_json(out, doc, default=float)
    print(
        f"unlearned in {log['seconds']:.0f}s; raw/unlearned local forget hits@1 "
        f"{doc['raw']['local']['forget']['hits@1']:.4f} -> "
        f"{doc['unlearned']['local']['forget']['hits@1']:.4f}",
        flush=True,
    )
