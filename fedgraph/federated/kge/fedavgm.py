r"""FedAvgM: FedE with server momentum on the entity table."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from fedgraph.federated.algorithms import Algorithm, setting
from fedgraph.federated.kge.fede import ENTITY, FedE
from fedgraph.federated.kge.setup import fede_builder


@dataclass(frozen=True)
class FedAvgMSettings:
    server_lr: float = setting(1.0, "server learning rate η", low=0.0, low_open=True)
    momentum: float = setting(
        0.9, "server momentum β", low=0.0, high=1.0, high_open=True
    )


class FedAvgM(FedE):
    r"""FedAvgM (`Hsu et al., 2019 <https://arxiv.org/abs/1909.06335>`_; the
    momentum instance of FedOpt in `"Adaptive Federated Optimization"
    <https://arxiv.org/abs/2003.00295>`_, Reddi et al., ICLR 2021) on FedE's
    entity table. With :math:`\Delta_t` the pseudo-gradient of the rows
    :math:`S_t` some participant sent this round (FedE's aggregate minus the
    current global rows),

    .. math::
        \mathbf{m}_t = \beta\, \mathbf{m}_{t-1} + \Delta_t, \qquad
        \mathbf{E}_{t+1} = \mathbf{E}_t + \eta\, \mathbf{m}_t
        \quad \text{on the rows } S_t .

    Rows not received this round keep their value and their momentum (the
    momentum of a row decays only in rounds it is updated, as a lazy/sparse
    optimiser does). :math:`\eta = 1, \beta = 0` is FedE. The momentum
    table is part of :meth:`state_dict` (checkpoints resume exactly).

    Args:
        num_entities (int): see :class:`~fedgraph.federated.FedE`.
        entity_dim (int): see :class:`~fedgraph.federated.FedE`.
        server_lr (float, optional): :math:`\eta`. (default: :obj:`1.0`)
        momentum (float, optional): :math:`\beta`. (default: :obj:`0.9`)
        **kwargs: forwarded to :class:`~fedgraph.federated.FedE`.
    """

    def __init__(
        self,
        num_entities: int,
        entity_dim: int,
        *,
        server_lr: float = 1.0,
        momentum: float = 0.9,
        **kwargs: Any,
    ) -> None:
        super().__init__(num_entities, entity_dim, **kwargs)
        if not server_lr > 0:
            raise ValueError(f"`server_lr` must be positive (got {server_lr})")
        if not 0 <= momentum < 1:
            raise ValueError(f"`momentum` must lie in [0, 1) (got {momentum})")
        self.server_lr, self.momentum = float(server_lr), float(momentum)
        self.velocity = torch.zeros_like(self.table)

    def server_update(
        self,
        server_round: int,
        key: str,
        aggregated: Tensor,
        index: Tensor | None = None,
    ) -> None:
        if key != ENTITY or index is None:
            return super().server_update(server_round, key, aggregated, index)
        delta = aggregated.to(self.table.dtype) - self.table[index]
        m = self.momentum * self.velocity[index] + delta
        self.velocity[index] = m
        self.table[index] += self.server_lr * m

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "velocity": self.velocity.clone()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict(state)
        self.velocity = state["velocity"].clone()

    def get_params(self) -> dict[str, Any]:
        return {
            **super().get_params(),
            "server_lr": self.server_lr,
            "momentum": self.momentum,
        }


ALGORITHMS = [
    Algorithm(
        "fedavgm",
        "kge",
        "FedE with server momentum on the aggregated entity rows",
        fede_builder(FedAvgM),
        FedAvgMSettings,
        reference="https://arxiv.org/abs/1909.06335",
    )
]

__all__ = ["FedAvgM", "FedAvgMSettings", "ALGORITHMS"]
