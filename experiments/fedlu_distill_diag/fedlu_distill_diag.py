r"""Does FedLU's mutual distillation itself, or our shared negatives, hold
the FedLU models down? (On FB15k-237 C3 switching global→local
distillation on drops both models to ≈ 28 validation MRR.)

Runs FedLU learning in-process on a federated dataset with distillation from
round 1 (``distill_schedule="always"``) at the given ``--mu`` and negative
regime, FedLU's other settings (``fedgraph train`` defaults) except
``--lr``, and writes the run's results file (the ``fedgraph train``
format)::

    python experiments/fedlu_distill_diag/fedlu_distill_diag.py --data runs/umls-c3 --mu 2 \
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
    from fedgraph.federated.algorithms import parse_assignments
    from fedgraph.federated.kge.setup import KGESettings, build_kge_federation
    from fedgraph.runtime import run_simulation
    from fedgraph.runtime.trained import load_kge_federation

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True)
    p.add_argument(
        "--algorithm",
        default="fedlu",
        help="fedlu (mutual distillation from round 1), or any `fedgraph train` "
        "KGE algorithm, e.g. fede / fedprox (FedProx's negative-regime check)",
    )
    p.add_argument(
        "--clients",
        type=int,
        nargs="+",
        help="train only these clients (default: all); the others stay idle",
    )
    p.add_argument("--eval-every", type=int, default=5)
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an algorithm setting, as `fedgraph train --set` "
        "(e.g. proximal_reduction=entity-mean)",
    )
    p.add_argument("--mu", type=float, default=2.0, help="mu_distill (2.0; fedlu only)")
    p.add_argument("--negatives", choices=("shared", "per-positive"), default="shared")
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--rounds", type=int, default=100)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--results", required=True)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    fed = load_kge_federation(args.data)
    settings = KGESettings(
        lr=args.lr,
        shared_negatives=args.negatives == "shared",
        extra={
            **({"mu_distill": args.mu} if args.algorithm == "fedlu" else {}),
            **parse_assignments(args.set, "`--set`"),
        },
    )
    strategy, clients = build_kge_federation(args.algorithm, fed, settings)
    if args.clients:
        unknown = sorted(set(args.clients) - set(clients))
        if unknown:
            p.error(
                f"--clients: no client {unknown} in {args.data} ({len(clients)} clients)"
            )
        clients = {k: clients[k] for k in args.clients}
    t0 = time.perf_counter()
    res = run_simulation(
        strategy,
        clients,
        num_rounds=args.rounds,
        eval_every=args.eval_every,
        patience=3,
        progress=False,
        on_round=lambda e: print(
            {k: e[k] for k in ("round", "valid") if k in e}, flush=True
        ),
    )
    argv = sys.argv[1:] if argv is None else argv
    meta = {
        "algorithm": args.algorithm,
        "clients": args.clients or sorted(clients),
        "data": args.data,
        "command": "python experiments/fedlu_distill_diag/fedlu_distill_diag.py "
        + " ".join(shlex.quote(a) for a in argv),
        **settings.to_dict(),
        "negatives": args.negatives,
        **({"distill_schedule": "always"} if args.algorithm == "fedlu" else {}),
        "wall_seconds": time.perf_counter() - t0,
        "threads": args.threads,
    }
    path = res.write_results(args.results, settings=meta)
    glob = res.test.get("global_mrr")
    print(
        f"{args.algorithm}, {args.negatives}: test mrr {res.test['mrr']:.4f}"
        + (f" global {glob:.4f}" if glob is not None else "")
        + f" (best round {res.best_round}/{res.rounds}); {path}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
