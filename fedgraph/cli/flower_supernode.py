r"""``python -m fedgraph.cli.flower_supernode [OPTIONS] FLOWER-ARGS``:
``flower-supernode`` with shorter waits
(:func:`fedgraph.runtime.flower.supernode.run`); every argument this
launcher does not know is Flower's::

    python -m fedgraph.cli.flower_supernode --idle-poll-interval 0.2 \
        --insecure --superlink 127.0.0.1:9092 --node-config "partition-id=0"
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from fedgraph.cli.main import Parser


def _seconds(text: str, low: float, high: float, closed: bool, why: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds (got {text!r})") from None
    if not (low <= value if closed else low < value) or value > high:
        bounds = f"[{low:g}, {high:g}]" if closed else f"({low:g}, {high:g}]"
        raise argparse.ArgumentTypeError(f"must lie in {bounds} s{why} (got {text})")
    return value


def _heartbeat(text: str) -> float:
    return _seconds(text, 10, 1800, True, ", the SuperLink's bounds")


def _interval(text: str) -> float:
    return _seconds(text, 0, 60, False, "")


def build_parser() -> Parser:
    p = Parser(
        prog="python -m fedgraph.cli.flower_supernode",
        description="flower-supernode with shorter waits. All other arguments "
        "are flower-supernode's.",
    )
    p.add_argument(
        "--idle-poll-interval",
        type=_interval,
        default=0.2,
        help="seconds between two pulls when the SuperLink had no message "
        "(Flower: 3) (default: 0.2)",
    )
    p.add_argument(
        "--reply-poll-interval",
        type=_interval,
        default=0.05,
        help="seconds between two looks for the ClientApp's reply "
        "(Flower: 0.5) (default: 0.05)",
    )
    p.add_argument(
        "--pull-backoff",
        type=_interval,
        default=0.05,
        help="seconds before asking the SuperLink again for an object of a "
        "message that has not arrived yet, doubling up to 4 times that "
        "(Flower: 1 s doubling up to 10 s) (default: 0.05)",
    )
    p.add_argument(
        "--heartbeat-interval",
        type=_heartbeat,
        default=None,
        help="seconds between the heartbeats the SuperLink expects from this "
        "node; it reports the node unavailable after twice that without one "
        "(default: Flower's 30)",
    )
    return p


def parse_args(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    r"""This launcher's options; the rest of ``argv`` is Flower's."""
    return build_parser().parse_known_args(list(argv))


def main(argv: Sequence[str] | None = None) -> int:
    args, rest = parse_args(sys.argv[1:] if argv is None else argv)
    from fedgraph.runtime.flower.supernode import run

    run(
        rest,
        idle_poll_interval=args.idle_poll_interval,
        reply_poll_interval=args.reply_poll_interval,
        pull_backoff=args.pull_backoff,
        heartbeat_interval=args.heartbeat_interval,
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
