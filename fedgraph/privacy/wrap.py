r"""Delegating wrappers: a defence or a recorder wraps a
:class:`~fedgraph.federated.Strategy` or a :class:`~fedgraph.federated.Client`
and changes only what crosses the wire; everything else (attributes such as
``table`` or ``evaluate_with``, metrics, state) is the wrapped object's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fedgraph.federated.base import Client, Strategy
from fedgraph.federated.payload import Payload


class StrategyWrapper(Strategy):
    r"""A :class:`Strategy` that forwards every call to ``inner``."""

    def __init__(self, inner: Strategy) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (e.g. during unpickling)
            raise AttributeError(name)
        return getattr(self.inner, name)

    def register(self, registrations: Mapping[int, Payload]) -> None:
        self.inner.register(registrations)

    def configure_train(
        self, server_round: int, client_ids: Sequence[int]
    ) -> dict[int, Payload]:
        return self.inner.configure_train(server_round, client_ids)

    def aggregate_train(
        self, server_round: int, replies: Mapping[int, Payload]
    ) -> None:
        self.inner.aggregate_train(server_round, replies)

    def configure_evaluate(
        self, server_round: int, client_ids: Sequence[int], split: str = "valid"
    ) -> dict[int, Payload]:
        return self.inner.configure_evaluate(server_round, client_ids, split)

    def aggregate_evaluate(
        self, server_round: int, replies: Mapping[int, Payload]
    ) -> dict[str, float]:
        return self.inner.aggregate_evaluate(server_round, replies)

    def on_validation(
        self, server_round: int, metrics: Mapping[str, float]
    ) -> bool | None:
        return self.inner.on_validation(server_round, metrics)

    def client_metrics(self, reply: Payload) -> dict[str, float]:
        return self.inner.client_metrics(reply)

    def state_dict(self) -> dict[str, Any]:
        return self.inner.state_dict()

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.inner.load_state_dict(state)

    def get_params(self) -> dict[str, Any]:
        return self.inner.get_params()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"


class ClientWrapper(Client):
    r"""A :class:`Client` that forwards every call to ``inner``."""

    def __init__(self, inner: Client) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def register(self) -> Payload:
        return self.inner.register()

    def fit(self, payload: Payload) -> Payload:
        return self.inner.fit(payload)

    def evaluate(self, payload: Payload) -> Payload:
        return self.inner.evaluate(payload)

    def state_dict(self) -> dict[str, Any]:
        return self.inner.state_dict()

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.inner.load_state_dict(state)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"


def innermost(obj: Any) -> Any:
    r"""The object at the bottom of a stack of wrappers."""
    while isinstance(obj, StrategyWrapper | ClientWrapper):
        obj = obj.inner
    return obj


def find_wrapper(obj: Any, cls: type) -> Any:
    r"""The first wrapper of type ``cls`` in the stack, or :obj:`None`."""
    while isinstance(obj, StrategyWrapper | ClientWrapper):
        if isinstance(obj, cls):
            return obj
        obj = obj.inner
    return None


__all__ = ["StrategyWrapper", "ClientWrapper", "innermost", "find_wrapper"]
