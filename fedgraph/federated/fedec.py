r"""FedEC: FedE with an embedding-contrastive local regulariser."""

from __future__ import annotations

from typing import Any

from fedgraph.federated.fede import FedE
from fedgraph.federated.payload import Scalar

CONTRASTIVE_MU = "contrastive-mu"
CONTRASTIVE_TAU = "contrastive-tau"


class FedEC(FedE):
    r"""FedEC from `"Federated Knowledge Graph Embedding with Embedding
    Contrastive Learning"` (Chen et al., 2022; MOON-style), as FedLU's
    experiments run it: FedE whose clients add to their local loss

    .. math::
        \mathcal{L}_{con} = -\mu_{con} \log
        \frac{\exp(\mathrm{sim}(\mathbf{E}^k, \mathbf{E}_t^k) / \tau)}
        {\exp(\mathrm{sim}(\mathbf{E}^k, \mathbf{E}_t^k) / \tau) +
         \exp(\mathrm{sim}(\mathbf{E}^k, \mathbf{E}_{t-1}^{k,\mathrm{local}}) / \tau)}

    where :math:`\mathrm{sim}` is the cosine similarity of matching rows
    averaged over the client's entity table, :math:`\mathbf{E}_t^k` the global
    rows received this round (positive) and
    :math:`\mathbf{E}_{t-1}^{k,\mathrm{local}}` the client's own table from
    the end of its previous local training (negative). FedLU's settings:
    :math:`\tau = 0.2`, :math:`\mu_{con} = 0.3`.

    Args:
        num_entities (int): see :class:`~fedgraph.federated.FedE`.
        entity_dim (int): see :class:`~fedgraph.federated.FedE`.
        contrastive_mu (float, optional): :math:`\mu_{con}`. (default: :obj:`0.3`)
        temperature (float, optional): :math:`\tau`. (default: :obj:`0.2`)
        **kwargs: forwarded to :class:`~fedgraph.federated.FedE`.
    """

    def __init__(
        self,
        num_entities: int,
        entity_dim: int,
        *,
        contrastive_mu: float = 0.3,
        temperature: float = 0.2,
        **kwargs: Any,
    ) -> None:
        super().__init__(num_entities, entity_dim, **kwargs)
        if contrastive_mu < 0:
            raise ValueError(
                f"`contrastive_mu` must be non-negative (got {contrastive_mu})"
            )
        if temperature <= 0:
            raise ValueError(f"`temperature` must be positive (got {temperature})")
        self.contrastive_mu = float(contrastive_mu)
        self.temperature = float(temperature)

    def train_config(self, server_round: int) -> dict[str, Scalar]:
        return {
            **super().train_config(server_round),
            CONTRASTIVE_MU: self.contrastive_mu,
            CONTRASTIVE_TAU: self.temperature,
        }

    def get_params(self) -> dict[str, Any]:
        return {
            **super().get_params(),
            "contrastive_mu": self.contrastive_mu,
            "temperature": self.temperature,
        }


__all__ = ["FedEC", "CONTRASTIVE_MU", "CONTRASTIVE_TAU"]
