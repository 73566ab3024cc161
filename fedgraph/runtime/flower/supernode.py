r"""``flower-supernode`` with shorter waits.

Flower's SuperNode (flwr 1.41 and 1.42) asks the SuperLink for a message,
and when there is none sleeps a fixed 3 s before asking again; while its
``ClientApp`` works it looks for the reply every 0.5 s; and an object of a
message that is not there yet is asked for again after 1 s, then 2 s
(:mod:`fedgraph.runtime.flower.polling` names the places). None of these has
a flag, an environment variable or an argument. A node asks right after
sending a reply, before the server has the other nodes' replies, so every
exchange of a round reaches the last node about 3 s after its previous
reply: with two exchanges per round (training, validation) that is 6 s of
every round, however short the computation.

This launcher runs Flower's own entry point (``flower_supernode``, the
``flower-supernode`` command) with those waits shortened and nothing else
changed; the rest of the command line is Flower's::

    python -m fedgraph.runtime.flower.supernode --idle-poll-interval 0.2 \
        --insecure --superlink 127.0.0.1:9092 --node-config "partition-id=0"

The cost: an idle node sends a pull request every ``--idle-poll-interval``
seconds instead of every 3 s (at 0.2 s, five small HTTP requests a second
per node to the SuperLink).

``--heartbeat-interval S`` (10 s to 30 min; Flower: 30 s, kept when it is
not given) sets the heartbeat interval the node reports: the SuperLink
reports a node that died unavailable after at most ``2 * S`` seconds (Flower:
about a minute), and the node sends a heartbeat every ``0.8 * (S - 5)``
seconds or so.
"""

from __future__ import annotations

import argparse
import sys


def _heartbeat(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds (got {text!r})") from None
    if not 10 <= value <= 1800:
        raise argparse.ArgumentTypeError(
            f"must lie in [10, 1800] s, the SuperLink's bounds (got {text})"
        )
    return value


def _interval(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds (got {text!r})") from None
    if not 0 < value <= 60:
        raise argparse.ArgumentTypeError(f"must lie in (0, 60] s (got {text})")
    return value


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    r"""This launcher's options; the rest of ``argv`` is Flower's."""
    p = argparse.ArgumentParser(
        prog="python -m fedgraph.runtime.flower.supernode",
        description=__doc__.split("\n\n")[0]
        + " All other arguments are flower-supernode's.",
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
    return p.parse_known_args(argv)


def main(argv: list[str] | None = None) -> None:
    args, rest = parse_args(sys.argv[1:] if argv is None else argv)
    import importlib

    from flwr.supernode.cli import flower_supernode

    from fedgraph.runtime.flower.polling import (
        set_heartbeat_interval,
        shorten_polls,
        shorten_pull_backoff,
    )

    module = importlib.import_module("flwr.supernode.start_client_internal")
    shorten_polls(module, args.idle_poll_interval, args.reply_poll_interval)
    shorten_pull_backoff(args.pull_backoff)
    if args.heartbeat_interval is not None:
        set_heartbeat_interval(args.heartbeat_interval)
    sys.argv = ["flower-supernode", *rest]
    flower_supernode()


if __name__ == "__main__":
    main()
