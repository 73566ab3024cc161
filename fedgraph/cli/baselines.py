r"""``python -m fedgraph.cli.baselines``: the Independent and Centralized
baselines (:func:`fedgraph.runtime.baselines.run_baseline`) on their own,
one JSON summary printed; ``fedgraph train DATASET --algorithm independent``
runs the same trainer with ``fedgraph train``'s folder and closing line."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence

from fedgraph.cli.choices import BASELINES, EVAL_PROTOCOLS, SAMPLE_ON


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m fedgraph.cli.baselines",
        description="The Independent (each client alone) and Centralized (all "
        "data pooled) baselines of FedE and FedLU.",
    )
    p.add_argument("--data", required=True, help="federated dataset folder")
    p.add_argument("--setting", choices=BASELINES, default=BASELINES[0])
    p.add_argument("--model", default="transe")
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--gamma", type=float, default=9.0)
    p.add_argument("--loss", default="sigmoid-ns")
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--num-negatives", type=int, default=256)
    p.add_argument(
        "--per-positive-negatives",
        action="store_true",
        help="K negatives per positive instead of K shared per batch",
    )
    p.add_argument("--no-subsampling", action="store_true")
    p.add_argument("--eval-every", type=int, default=5)
    p.add_argument("--patience", type=int, default=3)
    p.add_argument("--max-epochs", type=int, default=400)
    p.add_argument(
        "--protocol",
        choices=sorted(EVAL_PROTOCOLS),
        default="fedlu",
        help="evaluation protocol (fedgraph.eval.protocol; default: fedlu)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument(
        "--device", default="cpu", help="where models train and rank (e.g. cuda)"
    )
    p.add_argument(
        "--sample-on",
        choices=SAMPLE_ON,
        default="host",
        help="where batches and negatives are drawn (fedgraph.training.sample_on)",
    )
    p.add_argument("--out", default="runs/baseline")
    p.add_argument("--results", default=None)
    p.add_argument("--progress", action="store_true")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    r"""``python -m fedgraph.cli.baselines``: the baselines' CLI."""
    import torch

    from fedgraph.registry import resolve_device
    from fedgraph.runtime.baselines import run_baseline

    p = _parser()
    a = p.parse_args(argv)
    try:
        resolve_device(a.device, "`--device`")
    except ValueError as exc:
        p.error(str(exc))
    if a.threads:
        torch.set_num_threads(a.threads)
    res = run_baseline(
        a.data,
        setting=a.setting,
        model=a.model,
        hidden_channels=a.dim,
        gamma=a.gamma,
        out=a.out,
        results=a.results,
        protocol=a.protocol,
        # as typed, re-runnable from a shell (paths with spaces quoted)
        command="python -m fedgraph.cli.baselines "
        + shlex.join(sys.argv[1:] if argv is None else argv),
        loss=a.loss,
        lr=a.lr,
        batch_size=a.batch_size,
        num_negatives=a.num_negatives,
        shared_negatives=not a.per_positive_negatives,
        subsampling=not a.no_subsampling,
        eval_every=a.eval_every,
        patience=a.patience,
        max_epochs=a.max_epochs,
        seed=a.seed,
        progress=a.progress,
        device=a.device,
        sample_on=a.sample_on,
    )
    print(json.dumps({"weighted": res["weighted"], "path": res["path"]}, indent=1))
    return 0


__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
