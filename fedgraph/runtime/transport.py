r"""Where the clients of the round loop are: the :class:`Transport`
interface of :func:`~fedgraph.runtime.run_federation` and its in-process
form (the Flower form is :class:`~fedgraph.runtime.flower.GridTransport`)."""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from fedgraph.federated.base import Client
from fedgraph.federated.payload import Payload


class Transport(ABC):
    r"""Carries payloads between the server loop and the clients.

    Replies come back keyed by client id, in the order of the payloads
    sent (aggregation sums in that order, so the order is part of the
    result).
    """

    @abstractmethod
    def client_ids(self) -> list[int]:
        r"""The ids of all clients (after :meth:`register`)."""

    @abstractmethod
    def register(self) -> dict[int, Payload]:
        r"""Every client's one-off registration payload, by client id."""

    @abstractmethod
    def fit(
        self, server_round: int, payloads: Mapping[int, Payload]
    ) -> dict[int, Payload]:
        r"""Sends training payloads; returns the ``fit`` replies."""

    @abstractmethod
    def evaluate(
        self, server_round: int, payloads: Mapping[int, Payload], split: str
    ) -> dict[int, Payload]:
        r"""Sends evaluation payloads; returns the ``evaluate`` replies. On
        ``"valid"`` the clients' evaluated states are best-round candidates;
        after :meth:`restore_best`, clients evaluate their best-round state."""

    @abstractmethod
    def keep_best(
        self, server_round: int, clients: Sequence[int] | None = None
    ) -> None:
        r"""The states that ``clients`` (default: all) evaluated at
        ``server_round`` are their best so far."""

    @abstractmethod
    def restore_best(self) -> None:
        r"""From now on clients use their best-round states."""

    def pop_events(self) -> list[dict[str, Any]]:
        r"""What happened to clients since the last call, oldest first: a
        transport that tolerates failures reports each client that
        ``"failed"`` in an exchange, was ``"skipped"`` (not sent a payload
        because it was lost) or ``"rejoined"``, as dicts with ``event``,
        ``client`` and ``round``. In-process clients never fail: ``[]``."""
        return []


class InProcessTransport(Transport):
    r"""Clients as Python objects (:func:`~fedgraph.runtime.run_simulation`):
    payloads are handed over as detached copies, best-round states are
    client ``state_dict`` snapshots."""

    def __init__(self, clients: Mapping[int, Client]) -> None:
        self.clients = dict(clients)
        self._best: dict[int, Any] = {}  # client id -> its best-round state

    def client_ids(self) -> list[int]:
        return sorted(int(c) for c in self.clients)

    def register(self) -> dict[int, Payload]:
        return {c: self.clients[c].register() for c in self.client_ids()}

    def fit(
        self, server_round: int, payloads: Mapping[int, Payload]
    ) -> dict[int, Payload]:
        return {c: self.clients[c].fit(p.detach()) for c, p in payloads.items()}

    def evaluate(
        self, server_round: int, payloads: Mapping[int, Payload], split: str
    ) -> dict[int, Payload]:
        return {c: self.clients[c].evaluate(p.detach()) for c, p in payloads.items()}

    def keep_best(
        self, server_round: int, clients: Sequence[int] | None = None
    ) -> None:
        for c in self.client_ids() if clients is None else clients:
            # deep copies: a state_dict may alias live tensors (optimiser moments)
            self._best[c] = copy.deepcopy(self.clients[c].state_dict())

    def restore_best(self) -> None:
        missing = [c for c in self.client_ids() if c not in self._best]
        if missing:  # pragma: no cover - guarded by best_round > 0
            raise RuntimeError(f"No best-round states were kept for clients {missing}")
        for c, cl in self.clients.items():
            cl.load_state_dict(self._best[c])


__all__ = ["Transport", "InProcessTransport"]
