r"""The federated contract: a server-side :class:`Strategy` and a
:class:`Client`, exchanging only :class:`~fedgraph.federated.Payload` objects.

The round loop is *not* here: :func:`fedgraph.runtime.run_simulation` drives
the very same objects in-process, and a Flower ``ServerApp``/``ClientApp``
can drive them across machines by converting payloads to records.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from fedgraph.federated.aggregate import merge_metric_sums
from fedgraph.federated.payload import Payload


class Strategy(ABC):
    r"""Server side of a federated algorithm (Flower's ``Strategy`` shape).

    A round is ``configure_train`` → clients ``fit`` → ``aggregate_train``,
    optionally followed by ``configure_evaluate`` → clients ``evaluate`` →
    ``aggregate_evaluate``. Everything a strategy knows about a client comes
    from the payloads it received (incl. the one-off :meth:`register`
    payloads), so communication can be counted and audited.
    """

    def register(self, registrations: Mapping[int, Payload]) -> None:
        r"""Receives each client's one-off registration payload (e.g. the
        global ids of the entities it holds: FedE's :math:`\mathbf{P}_c`)
        before round 1. (default: ignores them)"""
        return None

    @abstractmethod
    def configure_train(
        self, server_round: int, client_ids: Sequence[int]
    ) -> dict[int, Payload]:
        r"""The payload each sampled client receives for training."""

    @abstractmethod
    def aggregate_train(
        self, server_round: int, replies: Mapping[int, Payload]
    ) -> None:
        r"""Updates the server state from the clients' ``fit`` replies."""

    def configure_evaluate(
        self, server_round: int, client_ids: Sequence[int], split: str = "valid"
    ) -> dict[int, Payload]:
        r"""The payload each client receives for evaluation on ``split``.
        (default: only ``{"split": split}``: clients score their own model)"""
        return {c: Payload(config={"split": split}) for c in client_ids}

    def aggregate_evaluate(
        self, server_round: int, replies: Mapping[int, Payload]
    ) -> dict[str, float]:
        r"""Merges the clients' metric states into weighted metrics
        (:func:`~fedgraph.federated.aggregate.merge_metric_sums`)."""
        return merge_metric_sums({c: p.metrics for c, p in replies.items()})

    def on_validation(
        self, server_round: int, metrics: Mapping[str, float]
    ) -> bool | None:
        r"""Called by the runtime with the weighted metrics of each periodic
        evaluation pass (validation unless the runtime's ``eval_split`` says
        otherwise; never the final test), before the next round is
        configured: a strategy may adapt its schedule to them (FedLU's gated
        distillation). Whatever it changes belongs in :meth:`state_dict`.

        Returns :obj:`True` when the run progressed although the runtime's
        monitored metric may not have (FedLU's code: its global model
        improved): such a pass does not count towards early stopping's
        patience (it does not become the best round either). (default:
        nothing, :obj:`None`)"""
        return None

    def client_metrics(self, reply: Payload) -> dict[str, float]:
        r"""The metrics of one client's ``evaluate`` reply (for per-client
        reporting; the same merge as :meth:`aggregate_evaluate`, on one
        client)."""
        return self.aggregate_evaluate(0, {0: reply})

    def state_dict(self) -> dict[str, Any]:
        r"""Everything needed to resume (tensors and plain values)."""
        return {}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        r"""Inverse of :meth:`state_dict`."""
        return None

    def get_params(self) -> dict[str, Any]:
        r"""Constructor arguments (for ``results.json`` and replay)."""
        return {}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{self.__class__.__name__}({args})"


class Client(ABC):
    r"""Client side: receives a payload, trains or evaluates locally, replies.

    A client never sends its data, relation names or relation parameters;
    what it sends is exactly the returned :class:`Payload`.
    """

    def register(self) -> Payload:
        r"""The one-off payload sent before round 1. (default: empty)"""
        return Payload()

    @abstractmethod
    def fit(self, payload: Payload) -> Payload:
        r"""Trains locally from ``payload`` and returns the reply."""

    @abstractmethod
    def evaluate(self, payload: Payload) -> Payload:
        r"""Evaluates on ``payload.config["split"]``; the reply's metrics are
        mergeable states (``count`` and ``NAME_sum``)."""

    @abstractmethod
    def state_dict(self) -> dict[str, Any]:
        r"""Everything needed to resume (parameters, optimiser, RNG)."""

    @abstractmethod
    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        r"""Inverse of :meth:`state_dict`."""


__all__ = ["Strategy", "Client"]
