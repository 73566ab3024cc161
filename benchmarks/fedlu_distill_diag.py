r"""Does FedLU's mutual distillation itself, or our shared negatives, hold
the FedLU models down? (session 8: on FB15k-237 C3 switching global→local
distillation on dropped both models to ≈ 28 validation MRR.)

Runs FedLU learning in-process on a federated dataset with distillation from
round 1 (``distill_schedule="always"``) at the given ``--mu`` and negative
regime, FedLU's other settings (``fedgraph train`` defaults) except
``--lr``, and writes the run's results file (the ``fedgraph train``
format)::

    python benchmarks/fedlu_distill_diag.py --data runs/umls-c3 --mu 2 \
        --negatives per-positive --lr 1e-3 \
        --results docs/results/umls-c3-fedlu-perpositive-transe.json

(``--negatives shared --mu 0`` is ``fedgraph train --algorithm fedlu --set
mu_distill=0``; ``fedgraph train`` has no per-positive switch, hence this
script.)
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time

import torch


def main(argv: list[str] | None = None) -> int:
    from fedgraph.cli.train import _load_federation
    from fedgraph.federated.kge_setup import KGESettings, build_kge_federation
    from fedgraph.runtime import run_simulation

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True)
    p.add_argument("--mu", type=float, default=2.0, help="mu_distill (2.0)")
    p.add_argument("--negatives", choices=("shared", "per-positive"), default="shared")
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--rounds", type=int, default=100)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--results", required=True)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    fed = _load_federation(args.data)
    settings = KGESettings(
        lr=args.lr,
        shared_negatives=args.negatives == "shared",
        extra={"mu_distill": args.mu},
    )
    strategy, clients = build_kge_federation("fedlu", fed, settings)
    t0 = time.perf_counter()
    res = run_simulation(
        strategy,
        clients,
        num_rounds=args.rounds,
        eval_every=5,
        patience=3,
        progress=False,
    )
    argv = sys.argv[1:] if argv is None else argv
    meta = {
        "algorithm": "fedlu",
        "data": args.data,
        "command": "python benchmarks/fedlu_distill_diag.py "
        + " ".join(shlex.quote(a) for a in argv),
        **settings.to_dict(),
        "negatives": args.negatives,
        "distill_schedule": "always",
        "wall_seconds": time.perf_counter() - t0,
        "threads": args.threads,
    }
    path = res.write_results(args.results, settings=meta)
    print(
        f"mu {args.mu}, {args.negatives}: test mrr local {res.test['mrr']:.4f} "
        f"global {res.test['global_mrr']:.4f} (best round {res.best_round}/"
        f"{res.rounds}); {path}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
