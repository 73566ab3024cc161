r"""``fedgraph report RUN_DIR... [--out DIR]``: compare runs.

Prints a Markdown table of every run (best and final validation MRR, test
metrics, rounds, communication, time); with ``--out`` also writes
``report.md``, the validation curves, MRR against communication and the
per-client test MRR as PNG files (:func:`fedgraph.report.write_report`),
metrics in % everywhere. ``--x-axis`` puts the curves against local epochs
(the default), rounds or bytes communicated.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fedgraph import guard

#: what ``--out`` receives (:func:`fedgraph.report.write_report`, PNG figures)
REPORT_FILES = ("report.md", "curves.png", "communication.png", "clients.png")

#: ``--x-axis`` choices: the keys of :data:`fedgraph.report.runs.X_AXES`
#: (named here so that ``--help`` imports no torch)
X_AXES = ("local-epochs", "rounds", "communication")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="compare runs: a table of metrics, curves and communication",
        description=(
            "Compares `fedgraph train` runs (output folders, or results JSON "
            "files): prints a Markdown table of best/final validation MRR, test "
            "metrics, rounds and communication; --out DIR also writes report.md "
            "and PNG plots (validation curves, MRR against communication, "
            "per-client test MRR), metrics in % everywhere."
        ),
    )
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR", help="run folders")
    p.add_argument(
        "--out", type=Path, default=None, help="folder for report.md and plots"
    )
    p.add_argument(
        "--x-axis",
        choices=list(X_AXES),
        default="local-epochs",
        help="x-axis of curves.png: local epochs (a round of E local epochs "
        "counts E, a baseline's epoch 1), rounds (baselines: epochs) or bytes "
        "communicated (runs with a ledger) (default: local-epochs)",
    )
    p.set_defaults(func=run)


@guard.releases_locks
def run(args: argparse.Namespace) -> int:
    from fedgraph.report import load_run, runs_table, write_report
    from fedgraph.report.runs import curve_series

    if args.out is not None and args.out.exists() and not args.out.is_dir():
        raise ValueError(f"`--out` {args.out} exists and is not a folder")
    if args.out is not None:
        guard.check(args.out, REPORT_FILES)  # refused before anything is written
    runs = [load_run(path) for path in args.runs]  # every run read before writing
    if args.out is not None:
        curve_series(runs, args.x_axis)  # every run placed on the axis, as well
    print(runs_table(runs))
    if args.out is not None:  # an earlier report's files are replaced, no others
        folder = guard.claim(args.out, REPORT_FILES)
        files = write_report(runs, folder, x_axis=args.x_axis)
        print("wrote " + ", ".join(str(f) for f in files))
    return 0
