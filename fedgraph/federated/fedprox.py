r"""FedProx: FedAvg plus a client-side proximal term (the FedE variant for
entity tables: :class:`~fedgraph.federated.kge.fedprox.FedEProx`)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from torch import Tensor

from fedgraph.federated.fedavg import FedAvg
from fedgraph.federated.payload import Scalar

PROXIMAL_MU = "proximal-mu"
PROXIMAL_REDUCTION = "proximal-reduction"
#: How FedEProx's clients reduce the proximal term over their entity rows.
PROXIMAL_REDUCTIONS = ("sum", "entity-mean")


def check_mu(proximal_mu: float) -> float:
    if proximal_mu < 0:
        raise ValueError(f"`proximal_mu` must be non-negative (got {proximal_mu})")
    if proximal_mu == 0:
        warnings.warn(
            "FedProx initialized with `proximal_mu=0.0`. This makes the strategy "
            "equivalent to FedAvg/FedE.",
            UserWarning,
            stacklevel=3,
        )
    return float(proximal_mu)


class FedProx(FedAvg):
    r"""FedProx from `"Federated Optimization in Heterogeneous Networks"
    <https://arxiv.org/abs/1812.06127>`_ (Li et al., MLSys 2020), as in
    Flower: FedAvg that asks each client to add the proximal term to its
    local loss on the shared tensors it received,

    .. math::
        \min_{\mathbf{w}} F_k(\mathbf{w}) + \frac{\mu}{2}
        \lVert \mathbf{w} - \mathbf{w}_t \rVert^2 .

    The server only sets ``config["proximal-mu"]``; aggregation is FedAvg's.

    Args:
        initial_arrays (Mapping[str, Tensor], optional): the initial global
            tensors (:obj:`None`: a client's registration, see
            :class:`~fedgraph.federated.FedAvg`).
        proximal_mu (float): :math:`\mu`.
        config (Mapping[str, Scalar], optional): extra config.
    """

    def __init__(
        self,
        initial_arrays: Mapping[str, Tensor] | None = None,
        *,
        proximal_mu: float,
        config: Mapping[str, Scalar] | None = None,
    ) -> None:
        super().__init__(initial_arrays, config=config)
        self.proximal_mu = check_mu(proximal_mu)

    def train_config(self, server_round: int) -> dict[str, Scalar]:
        return {**super().train_config(server_round), PROXIMAL_MU: self.proximal_mu}

    def get_params(self) -> dict[str, Any]:
        return {**super().get_params(), "proximal_mu": self.proximal_mu}


__all__ = [
    "FedProx",
    "PROXIMAL_MU",
    "PROXIMAL_REDUCTION",
    "PROXIMAL_REDUCTIONS",
]
