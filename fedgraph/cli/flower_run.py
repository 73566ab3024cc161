r"""``fedgraph flower-run --out OUT [APP FEDERATION] [--run-config STR]``:
``flwr run`` whose exit code tells whether the deployment run completed."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from fedgraph.cli.options import real


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "flower-run",
        help="run (or follow) a Flower deployment run; exit 1 unless it completed",
        description=(
            "Runs `flwr run APP FEDERATION --stream` with the run config "
            "`out` set to OUT (made absolute: run it where the SuperLink's "
            "ServerApp writes OUT), then follows OUT/status.json. Exit 0 only "
            "when the ServerApp wrote `completed` and `flwr run` exited 0; "
            "1 when it wrote `failed`, wrote nothing for this run, or its "
            "heartbeat (OUT/heartbeat.json) stopped while status.json said "
            "`running`: then status.json is rewritten as `lost`. Without APP "
            "it follows a run already writing into OUT."
        ),
    )
    p.add_argument("app", metavar="APP", nargs="?", help="the Flower app folder")
    p.add_argument(
        "federation",
        metavar="FEDERATION",
        nargs="?",
        default=None,
        help="the SuperLink connection in the flwr configuration",
    )
    p.add_argument("--out", type=Path, required=True, help="the run's `out` folder")
    p.add_argument("--run-config", default="", help="`flwr run --run-config` text")
    p.add_argument(
        "--lost-after",
        type=real(0),
        default=20.0,
        help="seconds without a heartbeat after which a running ServerApp is lost",
    )
    p.set_defaults(func=run)


def flwr_command(args: argparse.Namespace, out: Path) -> list[str]:
    r"""``flwr run`` with ``out`` appended to the run config; raises
    :class:`ValueError` for a run config that sets ``out`` itself."""
    if args.federation is None:
        raise ValueError(f"`FEDERATION` is missing after `APP` (got {args.app!r})")
    if re.search(r"(^|\s)out\s*=", args.run_config):
        raise ValueError(
            f"`--run-config` sets `out` (got {args.run_config!r}); give it as `--out`"
        )
    flwr = shutil.which("flwr") or str(Path(sys.executable).parent / "flwr")
    config = f'{args.run_config} out="{out}"'.strip()
    return [flwr, "run", args.app, args.federation, "--stream", "--run-config", config]


def run(args: argparse.Namespace) -> int:
    from fedgraph.runtime.flower.run_status import file_id, follow

    out = args.out.resolve()
    before = file_id(out / "status.json")
    proc = None
    if args.app is not None:
        proc = subprocess.Popen(flwr_command(args, out), start_new_session=True)
    try:
        outcome = follow(out, proc, before=before, lost_after=args.lost_after)
    finally:
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # a stream left hanging
            proc.wait(timeout=30)
    stream = sys.stdout if outcome.exit_code == 0 else sys.stderr
    print(f"fedgraph flower-run: {outcome.status}: {outcome.message}", file=stream)
    return outcome.exit_code
