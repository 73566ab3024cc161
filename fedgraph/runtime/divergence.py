r"""Stopping a run whose training diverged.

A NaN or infinite loss, or a client model whose parameters went NaN, makes
every later round meaningless (and NaN scores used to rank first). The round
loop checks each training reply with :func:`check_replies` and stops with a
:class:`~fedgraph.errors.DivergedError` naming the round and the client.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch

from fedgraph.errors import DivergedError
from fedgraph.federated.payload import Payload

_HINT = "lower the learning rate (`--lr`) or check the data, then train again"


def check_replies(server_round: int, replies: Mapping[int, Payload]) -> None:
    r"""Raises :class:`~fedgraph.errors.DivergedError` when a client's reply
    reports a non-finite loss (a metric whose name holds ``"loss"``) or
    uploads a floating-point array holding NaN or infinity."""
    for c in sorted(replies):
        reply = replies[c]
        for key, value in reply.metrics.items():
            if "loss" in key and isinstance(value, float) and not math.isfinite(value):
                raise DivergedError(
                    f"training diverged in round {server_round} on client {c}: "
                    f"`{key}` is {value}; {_HINT}"
                )
        for key, array in reply.arrays.items():
            if array.is_floating_point() and not bool(torch.isfinite(array).all()):
                raise DivergedError(
                    f"training diverged in round {server_round} on client {c}: "
                    f"its `{key}` array holds NaN or infinite values; {_HINT}"
                )


__all__ = ["check_replies"]
