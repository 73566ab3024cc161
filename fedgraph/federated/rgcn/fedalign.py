r"""FedAlign: FedAvg on RGCN bases plus a client-side OT basis alignment."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from torch import Tensor

from fedgraph.federated.fedavg import FedAvg
from fedgraph.federated.payload import Payload, Scalar
from fedgraph.federated.rgcn.terms import ALIGN_MU, PEER_PREFIX


class FedAlign(FedAvg):
    r"""FedAlign from "Improving Federated Relational Data Modeling via Basis
    Alignment and Weight Constraint" (Lin, Chen, Chen and Wang; Ant Group):
    FedAvg of the R-GCN bases (weighted by node count)
    whose clients add the mean Sinkhorn OT distance between their bases and
    the other participating clients' bases, per layer (Eq. 10):

    .. math::
        \hat F_k(\mathbf{w}) = F_k(\mathbf{w}) + \frac{\mu}{|P_k|}
        \sum_{j \in P_k} \sum_{l=1}^{L}
        \mathrm{OT}\big(\mathbf{V}_k^{(l)}, \mathbf{V}_j^{(l)}\big).

    The server sends client :math:`k` the global bases and, as ``peer{j}/…``
    arrays, the bases each *other* client :math:`j` of the round uploaded
    last (:math:`P_k`); clients train in parallel, so a peer's latest bases
    are those of its previous upload. Before any upload (round 1) the global
    bases stand in for the peers. With ``lipschitz_lambda`` the clients also
    add the "-L" gradient penalty (Eq. 11), which makes FedAlign-L.

    Args:
        initial_arrays (Mapping[str, Tensor], optional): the initial global
            bases (:obj:`None`: a client's registration, see
            :class:`~fedgraph.federated.FedAvg`).
        mu (float, optional): :math:`\mu`. (default: :obj:`10.0`)
        config (Mapping[str, Scalar], optional): extra config (e.g.
            ``{"local-epochs": 5, "lipschitz-lambda": 10.0}``).
    """

    def __init__(
        self,
        initial_arrays: Mapping[str, Tensor] | None = None,
        *,
        mu: float = 10.0,
        config: Mapping[str, Scalar] | None = None,
    ) -> None:
        super().__init__(initial_arrays, config=config)
        if mu < 0:
            raise ValueError(f"`mu` must be non-negative (got {mu})")
        self.mu = float(mu)
        self.last: dict[int, dict[str, Tensor]] = {}

    def train_config(self, server_round: int) -> dict[str, Scalar]:
        return {**super().train_config(server_round), ALIGN_MU: self.mu}

    def configure_train(
        self, server_round: int, client_ids: Sequence[int]
    ) -> dict[int, Payload]:
        out = super().configure_train(server_round, client_ids)
        for c, payload in out.items():
            peers = [j for j in client_ids if j != c and j in self.last]
            sources = [self.last[j] for j in peers] or [self.arrays]
            for i, arrays in enumerate(sources):
                for key, v in arrays.items():
                    payload.arrays[f"{PEER_PREFIX}{i}/{key}"] = v.clone()
        return out

    def aggregate_train(
        self, server_round: int, replies: Mapping[int, Payload]
    ) -> None:
        super().aggregate_train(server_round, replies)
        for c, p in replies.items():
            self.last[c] = {k: p.arrays[k].detach().clone() for k in self.arrays}

    def state_dict(self) -> dict[str, Any]:
        return {
            **super().state_dict(),
            "last": {c: dict(a) for c, a in self.last.items()},
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict(state)
        self.last = {int(c): dict(a) for c, a in state.get("last", {}).items()}

    def get_params(self) -> dict[str, Any]:
        return {**super().get_params(), "mu": self.mu}


class SyncOnEvaluate:
    r"""Wraps a strategy so that evaluation payloads carry its global arrays:
    each client evaluates its local model with the global (aggregated) bases
    synchronised in, as FedAlign evaluates every method (§5.4). Everything
    else is delegated to the wrapped strategy.

    Args:
        strategy (FedAvg): a strategy holding ``arrays``.
    """

    def __init__(self, strategy: FedAvg) -> None:
        self.strategy = strategy

    def configure_evaluate(
        self, server_round: int, client_ids: Sequence[int], split: str = "valid"
    ) -> dict[int, Payload]:
        out = self.strategy.configure_evaluate(server_round, client_ids, split)
        for p in out.values():
            p.arrays.update({k: v.clone() for k, v in self.strategy.arrays.items()})
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self.strategy, name)

    def __repr__(self) -> str:
        return f"SyncOnEvaluate({self.strategy!r})"


__all__ = ["FedAlign", "SyncOnEvaluate"]
