r"""``python -m fedgraph.cli.flower_executor --runtime-api HOST:PORT
--insecure``: the long-lived ``ClientApp`` runtime of one SuperNode started
with ``--isolation process``
(:class:`fedgraph.runtime.flower.executor.Executor`)::

    flower-supernode --insecure --superlink HOST:9092 --port 9094 \
        --isolation process --node-config "partition-id=0" &
    python -m fedgraph.cli.flower_executor --runtime-api 127.0.0.1:9094 --insecure &
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from fedgraph.cli.main import Parser
from fedgraph.cli.options import number, real


def build_parser() -> Parser:
    p = Parser(
        prog="python -m fedgraph.cli.flower_executor",
        description="A long-lived ClientApp runtime for one SuperNode: runs "
        "every ClientApp task of the node in this one process.",
    )
    p.add_argument("--runtime-api", required=True, help="the SuperNode's host:port")
    p.add_argument("--insecure", action="store_true")
    p.add_argument("--root-certificates", default=None)
    p.add_argument(
        "--poll-interval",
        type=real(0),
        default=0.05,
        help="seconds between two task requests when idle (default: 0.05)",
    )
    p.add_argument(
        "--pull-backoff",
        type=number,
        default=0.05,
        help="seconds before asking the node again for an object it has not "
        "received yet, doubling (Flower: 1; 0: Flower's) (default: 0.05)",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    if not args.insecure and not args.root_certificates:
        p.error("give `--insecure` or `--root-certificates`")
    if not 0 <= args.pull_backoff <= 60:
        p.error(f"`--pull-backoff` must lie in [0, 60] s (got {args.pull_backoff})")
    from fedgraph.runtime.flower.executor import Executor

    Executor(
        args.runtime_api,
        insecure=args.insecure,
        root_certificates=args.root_certificates,
        poll_interval=args.poll_interval,
        pull_backoff=args.pull_backoff or None,
    ).serve()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
