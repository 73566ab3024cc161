r"""``python -m fedgraph.cli.flower_worker --target MODULE:ATTR --address
SOCKET --parent PID``: the worker process of a forwarding ``ClientApp``
(started by :class:`~fedgraph.runtime.flower.node.WorkerClientApp`; it runs
:func:`fedgraph.runtime.flower.worker.serve`).

The worker exits when ``PID`` is gone or after ``FEDGRAPH_WORKER_IDLE``
seconds (default 3600) without a message.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from fedgraph.cli.main import Parser


def build_parser() -> Parser:
    p = Parser(
        prog="python -m fedgraph.cli.flower_worker",
        description="Serves a fedgraph ClientApp on a local Unix socket, "
        "one message at a time.",
    )
    p.add_argument("--target", required=True, help="the app, MODULE:ATTR")
    p.add_argument("--address", required=True, help="the Unix socket's path")
    p.add_argument(
        "--parent", type=int, required=True, help="exit when this process is gone"
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    idle = os.environ.get("FEDGRAPH_WORKER_IDLE", "3600")
    try:
        seconds = float(idle)
    except ValueError:
        p.error(f"`FEDGRAPH_WORKER_IDLE` must be seconds (got {idle!r})")
    from fedgraph.runtime.flower.worker import serve

    serve(args.target, args.address, args.parent, seconds)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
