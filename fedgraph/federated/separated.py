r"""Separated training (SP): every client trains alone, nothing is shared."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fedgraph.federated.base import Strategy
from fedgraph.federated.payload import Payload, Scalar


class Separated(Strategy):
    r"""The "SP" baseline of FedAlign's Table 4: each client runs its local
    epochs every round on its own model and nothing is aggregated, so
    :math:`\mathbf{w}^k_{t+1} = \mathrm{SGD}^{E}(\mathbf{w}^k_t)` and each client
    is evaluated with its own model.

    Args:
        config (Mapping[str, Scalar], optional): sent with every training
            payload (e.g. ``{"local-epochs": 5}``).
    """

    def __init__(self, *, config: Mapping[str, Scalar] | None = None) -> None:
        self.config: dict[str, Scalar] = dict(config or {})

    def configure_train(
        self, server_round: int, client_ids: Sequence[int]
    ) -> dict[int, Payload]:
        cfg = {**self.config, "server-round": int(server_round)}
        return {c: Payload(config=dict(cfg)) for c in client_ids}

    def aggregate_train(
        self, server_round: int, replies: Mapping[int, Payload]
    ) -> None:
        return None

    def get_params(self) -> dict[str, Any]:
        return {"config": self.config} if self.config else {}


__all__ = ["Separated"]
