r"""FedAvgM on the R-GCN bases: FedAvg with server momentum."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from fedgraph.federated.algorithms import Algorithm, setting
from fedgraph.federated.base import Strategy
from fedgraph.federated.fedavg import FedAvg
from fedgraph.federated.payload import Scalar
from fedgraph.federated.rgcn.fedalign import SyncOnEvaluate
from fedgraph.federated.rgcn.setup import RGCNBuilder


@dataclass(frozen=True)
class BasesFedAvgMSettings:
    server_lr: float = setting(1.0, "server learning rate η", low=0.0, low_open=True)
    momentum: float = setting(
        0.9, "server momentum β", low=0.0, high=1.0, high_open=True
    )


class BasesFedAvgM(FedAvg):
    r"""FedAvgM (`Hsu et al., 2019 <https://arxiv.org/abs/1909.06335>`_) on
    the shared R-GCN bases: with :math:`\Delta_t` the pseudo-gradient (the
    weighted mean of the clients' bases minus the global ones),

    .. math::
        \mathbf{m}_t = \beta\, \mathbf{m}_{t-1} + \Delta_t, \qquad
        \mathbf{V}_{t+1} = \mathbf{V}_t + \eta\, \mathbf{m}_t .

    :math:`\eta = 1, \beta = 0` is FedAvg. The relation coefficients stay
    local, as with FedAvg; the momentum is part of :meth:`state_dict`
    (checkpoints resume exactly).

    Args:
        initial_arrays (Mapping[str, Tensor], optional): the initial global
            bases (:obj:`None`: a client's registration).
        server_lr (float, optional): :math:`\eta > 0`. (default: :obj:`1.0`)
        momentum (float, optional): :math:`\beta \in [0, 1)`.
            (default: :obj:`0.9`)
        config (Mapping[str, Scalar], optional): the clients' training config.
    """

    def __init__(
        self,
        initial_arrays: Mapping[str, Tensor] | None = None,
        *,
        server_lr: float = 1.0,
        momentum: float = 0.9,
        config: Mapping[str, Scalar] | None = None,
    ) -> None:
        super().__init__(initial_arrays, config=config)
        if not server_lr > 0:
            raise ValueError(f"`server_lr` must be positive (got {server_lr})")
        if not 0 <= momentum < 1:
            raise ValueError(f"`momentum` must lie in [0, 1) (got {momentum})")
        self.server_lr, self.momentum = float(server_lr), float(momentum)
        self.velocity: dict[str, Tensor] = {}

    def server_update(
        self,
        server_round: int,
        key: str,
        aggregated: Tensor,
        index: Tensor | None = None,
    ) -> None:
        if index is not None:
            return super().server_update(server_round, key, aggregated, index)
        current = self.arrays[key]
        delta = aggregated.to(current.dtype) - current
        m = self.momentum * self.velocity.get(key, torch.zeros_like(current)) + delta
        self.velocity[key] = m
        self.arrays[key] = current + self.server_lr * m

    def state_dict(self) -> dict[str, Any]:
        velocity = {k: v.clone() for k, v in self.velocity.items()}
        return {**super().state_dict(), "velocity": velocity}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict(state)
        self.velocity = {k: v.clone() for k, v in state["velocity"].items()}

    def get_params(self) -> dict[str, Any]:
        return {
            **super().get_params(),
            "server_lr": self.server_lr,
            "momentum": self.momentum,
        }


def _make(
    initial: Mapping[str, Tensor] | None, config: dict[str, Any], x: Any
) -> Strategy:
    return SyncOnEvaluate(
        BasesFedAvgM(initial, server_lr=x.server_lr, momentum=x.momentum, config=config)
    )


ALGORITHMS = [
    Algorithm(
        "fedavgm",
        "rgcn",
        "FedAvg of the R-GCN bases with server momentum",
        RGCNBuilder(_make),
        BasesFedAvgMSettings,
        reference="https://arxiv.org/abs/1909.06335",
    )
]

__all__ = ["BasesFedAvgM", "BasesFedAvgMSettings", "ALGORITHMS"]
