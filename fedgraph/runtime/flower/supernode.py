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

This launcher (:func:`run`, the command :mod:`fedgraph.cli.flower_supernode`)
runs Flower's own entry point (``flower_supernode``, the ``flower-supernode``
command) with those waits shortened and nothing else changed; the rest of
the command line is Flower's::

    python -m fedgraph.cli.flower_supernode --idle-poll-interval 0.2 \
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

import sys
from collections.abc import Sequence


def run(
    flower_args: Sequence[str],
    *,
    idle_poll_interval: float = 0.2,
    reply_poll_interval: float = 0.05,
    pull_backoff: float = 0.05,
    heartbeat_interval: float | None = None,
) -> None:
    r"""Runs Flower's ``flower-supernode`` on ``flower_args`` with the waits
    shortened: ``idle_poll_interval`` seconds between two pulls when the
    SuperLink had no message (Flower: 3), ``reply_poll_interval`` between two
    looks for the ``ClientApp``'s reply (Flower: 0.5), ``pull_backoff`` before
    asking again for an object that has not arrived (Flower: 1), and
    ``heartbeat_interval`` the heartbeat interval the node reports
    (:obj:`None`: Flower's 30 s)."""
    import importlib

    from flwr.supernode.cli import flower_supernode

    from fedgraph.runtime.flower.polling import (
        set_heartbeat_interval,
        shorten_polls,
        shorten_pull_backoff,
    )

    module = importlib.import_module("flwr.supernode.start_client_internal")
    shorten_polls(module, idle_poll_interval, reply_poll_interval)
    shorten_pull_backoff(pull_backoff)
    if heartbeat_interval is not None:
        set_heartbeat_interval(heartbeat_interval)
    sys.argv = ["flower-supernode", *flower_args]
    flower_supernode()
