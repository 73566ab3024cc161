r"""FedYogi: FedAdam with Yogi's additive second-moment update."""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor

from fedgraph.federated.algorithms import Algorithm
from fedgraph.federated.kge.fedadam import FedAdam, FedAdamSettings
from fedgraph.federated.kge.setup import fede_builder


@dataclass(frozen=True)
class FedYogiSettings(FedAdamSettings):
    r"""The settings of :class:`FedAdam` (Reddi et al. use the same values)."""


class FedYogi(FedAdam):
    r"""FedYogi from `"Adaptive Federated Optimization"
    <https://arxiv.org/abs/2003.00295>`_ (Reddi et al., ICLR 2021,
    Algorithm 2) on FedE's entity table: :class:`FedAdam` whose second
    moment moves additively, by at most :math:`(1 - \beta_2)\Delta_t^2`,

    .. math::
        \mathbf{v}_t = \mathbf{v}_{t-1} - (1 - \beta_2)\, \Delta_t^2
        \odot \operatorname{sign}(\mathbf{v}_{t-1} - \Delta_t^2),

    so that :math:`\mathbf{v}` does not forget a large past update as fast as
    Adam's exponential average does. Everything else — the rows received this
    round only, rows not received keeping value and moments, ``m`` and ``v``
    in :meth:`state_dict`, the settings and their defaults — is
    :class:`FedAdam`'s.
    """

    def second_moment(self, v: Tensor, delta: Tensor) -> Tensor:
        r"""Yogi's :math:`\mathbf{v} - (1 - \beta_2) \Delta^2
        \operatorname{sign}(\mathbf{v} - \Delta^2)`."""
        d2 = delta.square()
        return v - (1 - self.beta2) * d2 * (v - d2).sign()


ALGORITHMS = [
    Algorithm(
        "fedyogi",
        "kge",
        "FedE with a server-side Yogi step on the aggregated entity rows",
        fede_builder(FedYogi),
        FedYogiSettings,
        reference="https://arxiv.org/abs/2003.00295",
    )
]

__all__ = ["FedYogi", "FedYogiSettings", "ALGORITHMS"]
