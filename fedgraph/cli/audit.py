r"""``fedgraph audit RUN_DIR --attack NAME``: what the server of a
``fedgraph train --record-uploads`` run (or of a Flower deployment with
``privacy.record-uploads``) could infer, per client, against a random guess
(see docs/privacy.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from fedgraph import guard
from fedgraph.cli.options import number, positive, seed


def register(sub: argparse._SubParsersAction) -> None:
    from fedgraph.cli.choices import ATTACKS

    p = sub.add_parser(
        "audit",
        help="run a privacy attack on a run's recorded uploads",
        description=(
            "Runs ATTACK as the server of RUN_DIR (a `fedgraph train "
            "--record-uploads` run, or the `out` folder of a finished Flower "
            "run with run-config key privacy.record-uploads) and scores it per "
            "client against the "
            "clients' true data, beside a random guess; writes "
            "RUN_DIR/audit-ATTACK.json (or --out)."
        ),
    )
    p.add_argument(
        "run_dir",
        type=Path,
        help="a fedgraph train output folder or a Flower run's `out` folder",
    )
    p.add_argument(
        "--attack",
        required=True,
        choices=ATTACKS,
        help="triple-inference: the victim's unknown training triples against "
        "true negatives; membership: which entities the victim holds",
    )
    p.add_argument(
        "--round", type=positive, default=None, help="recorded round (default: last)"
    )
    p.add_argument(
        "--known-fraction",
        type=number,
        default=0.1,
        help="share of each victim's training triples the attacker knows "
        "(triple-inference; default: 0.1)",
    )
    p.add_argument("--data", default=None, help="dataset, if the run's has moved")
    p.add_argument(
        "--seed", type=seed, default=0, help="seeds the known share and the fit"
    )
    p.add_argument("--out", type=Path, default=None, help="report file")
    p.set_defaults(func=run)


@guard.releases_locks
def run(args: argparse.Namespace) -> int:
    from fedgraph.data.io import atomic_write_json
    from fedgraph.privacy.audit import run_audit

    if not args.run_dir.is_dir():
        raise FileNotFoundError(f"RUN_DIR {args.run_dir} is not a folder")
    if not 0 < args.known_fraction < 1:
        raise ValueError(
            f"`--known-fraction` must lie in (0, 1) (got {args.known_fraction})"
        )
    # someone's file at the report's path is refused before the attack runs
    out = guard.check_file(args.out or args.run_dir / f"audit-{args.attack}.json")
    report = run_audit(
        args.run_dir,
        args.attack,
        data=args.data,
        server_round=args.round,
        known_fraction=args.known_fraction,
        seed=args.seed,
    )
    report["command"] = args.command_line
    atomic_write_json(guard.claim_file(out), report, default=float)
    keys = list(report["mean"])
    print(f"{args.attack} on {args.run_dir} (round {report['round']}):")
    print("client  " + "  ".join(f"{k:>9}" for k in keys))
    for c, r in report["clients"].items():
        print(f"{c:>6}  " + "  ".join(f"{r[k]:9.4f}" for k in keys))
    print("  mean  " + "  ".join(f"{report['mean'][k]:9.4f}" for k in keys))
    print(
        "random  "
        + "  ".join(f"{report['baseline'].get(k, float('nan')):9.4f}" for k in keys)
    )
    if "knowledge_only" in report:
        ko = report["knowledge_only"]
        print("no-rows " + "  ".join(f"{ko.get(k, float('nan')):9.4f}" for k in keys))
    print(f"report in {out}")
    return 0
