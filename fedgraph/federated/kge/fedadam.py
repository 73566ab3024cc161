r"""FedAdam: FedE with a server-side Adam step on the entity table."""

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
class FedAdamSettings:
    server_lr: float = setting(0.01, "server learning rate η", low=0.0, low_open=True)
    beta1: float = setting(
        0.9, "first-moment decay β1", low=0.0, high=1.0, high_open=True
    )
    beta2: float = setting(
        0.99, "second-moment decay β2", low=0.0, high=1.0, high_open=True
    )
    tau: float = setting(
        1e-3, "adaptivity τ (also the initial √v)", low=0.0, low_open=True
    )


class FedAdam(FedE):
    r"""FedAdam from `"Adaptive Federated Optimization"
    <https://arxiv.org/abs/2003.00295>`_ (Reddi et al., ICLR 2021,
    Algorithm 2) on FedE's entity table. With :math:`\Delta_t` the
    pseudo-gradient of the rows :math:`S_t` some participant sent this round
    (FedE's aggregate minus the current global rows),

    .. math::
        \mathbf{m}_t = \beta_1 \mathbf{m}_{t-1} + (1 - \beta_1) \Delta_t, \quad
        \mathbf{v}_t = \beta_2 \mathbf{v}_{t-1} + (1 - \beta_2) \Delta_t^2, \quad
        \mathbf{E}_{t+1} = \mathbf{E}_t + \eta
        \frac{\mathbf{m}_t}{\sqrt{\mathbf{v}_t} + \tau}

    on the rows :math:`S_t`, element-wise, without bias correction (as the
    paper); :math:`\mathbf{m}` starts at 0 and :math:`\mathbf{v}` at
    :math:`\tau^2` (the paper's :math:`v_{-1} \ge \tau^2`). Rows not received
    keep their value and their moments (a row's moments decay only in rounds
    it is updated, as a lazy/sparse Adam). Both moment tables are part of
    :meth:`state_dict`, so a checkpointed run resumes exactly.

    Args:
        num_entities (int): see :class:`~fedgraph.federated.FedE`.
        entity_dim (int): see :class:`~fedgraph.federated.FedE`.
        server_lr (float, optional): :math:`\eta`. (default: :obj:`0.01`)
        beta1 (float, optional): :math:`\beta_1`. (default: :obj:`0.9`)
        beta2 (float, optional): :math:`\beta_2`. (default: :obj:`0.99`)
        tau (float, optional): :math:`\tau`. (default: :obj:`1e-3`)
        **kwargs: forwarded to :class:`~fedgraph.federated.FedE`.
    """

    def __init__(
        self,
        num_entities: int,
        entity_dim: int,
        *,
        server_lr: float = 0.01,
        beta1: float = 0.9,
        beta2: float = 0.99,
        tau: float = 1e-3,
        **kwargs: Any,
    ) -> None:
        super().__init__(num_entities, entity_dim, **kwargs)
        for name, value in (("server_lr", server_lr), ("tau", tau)):
            if not value > 0:
                raise ValueError(f"`{name}` must be positive (got {value})")
        for name, value in (("beta1", beta1), ("beta2", beta2)):
            if not 0 <= value < 1:
                raise ValueError(f"`{name}` must lie in [0, 1) (got {value})")
        self.server_lr, self.tau = float(server_lr), float(tau)
        self.beta1, self.beta2 = float(beta1), float(beta2)
        self.m = torch.zeros_like(self.table)
        self.v = torch.full_like(self.table, self.tau**2)

    def second_moment(self, v: Tensor, delta: Tensor) -> Tensor:
        r"""Adam's :math:`\beta_2 \mathbf{v} + (1 - \beta_2) \Delta^2`."""
        return self.beta2 * v + (1 - self.beta2) * delta.square()

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
        m = self.beta1 * self.m[index] + (1 - self.beta1) * delta
        v = self.second_moment(self.v[index], delta)
        self.m[index], self.v[index] = m, v
        self.table[index] += self.server_lr * m / (v.sqrt() + self.tau)

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "m": self.m.clone(), "v": self.v.clone()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict(state)
        self.m, self.v = state["m"].clone(), state["v"].clone()

    def get_params(self) -> dict[str, Any]:
        return {
            **super().get_params(),
            "server_lr": self.server_lr,
            "beta1": self.beta1,
            "beta2": self.beta2,
            "tau": self.tau,
        }


ALGORITHMS = [
    Algorithm(
        "fedadam",
        "kge",
        "FedE with a server-side Adam step on the aggregated entity rows",
        fede_builder(FedAdam),
        FedAdamSettings,
        reference="https://arxiv.org/abs/2003.00295",
    )
]

__all__ = ["FedAdam", "FedAdamSettings", "ALGORITHMS"]
