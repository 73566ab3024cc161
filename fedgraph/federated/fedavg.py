r"""FedAvg over shared tensors (task-agnostic)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from torch import Tensor

from fedgraph.federated.aggregate import weighted_mean
from fedgraph.federated.base import Strategy
from fedgraph.federated.payload import Payload, PayloadError, Scalar


class FedAvg(Strategy):
    r"""Federated averaging of shared tensors (`McMahan et al., 2017
    <https://arxiv.org/abs/1602.05629>`_).

    .. math::
        \mathbf{w}_{t+1} = \sum_{k \in K_t} \frac{n_k}{\sum_{j \in K_t} n_j}
        \mathbf{w}^k_{t}

    with :math:`n_k` the reply's ``num_examples``. Every key of
    :attr:`arrays` is sent to every sampled client and averaged back; a client
    keeps any other parameter (e.g. RGCN relation coefficients) local. Used
    as is by the RGCN side, where the shared tensors are the bases.

    Args:
        initial_arrays (Mapping[str, Tensor], optional): the initial global
            tensors; :obj:`None`: the arrays of the lowest-id client whose
            registration payload carries some (e.g. one
            :class:`~fedgraph.federated.rgcn.client.RGCNClient` built with
            ``share_initial=True``), so that the server needs no client's data
            and the transfer is counted like any payload. (default:
            :obj:`None`)
        config (Mapping[str, Scalar], optional): sent with every training
            payload (e.g. ``{"local-epochs": 5}``). (default: :obj:`None`)
    """

    def __init__(
        self,
        initial_arrays: Mapping[str, Tensor] | None = None,
        *,
        config: Mapping[str, Scalar] | None = None,
    ) -> None:
        if initial_arrays is not None and not initial_arrays:
            raise ValueError(
                "`initial_arrays` must hold at least one tensor (got none)"
            )
        self.arrays: dict[str, Tensor] = {
            k: v.detach().clone() for k, v in (initial_arrays or {}).items()
        }
        self.config: dict[str, Scalar] = dict(config or {})

    def register(self, registrations: Mapping[int, Payload]) -> None:
        r"""Takes the initial global tensors from the lowest-id registration
        that carries arrays, when none were given to the constructor."""
        if self.arrays:
            return
        for c in sorted(registrations):
            if registrations[c].arrays:
                self.arrays = {
                    k: v.detach().clone() for k, v in registrations[c].arrays.items()
                }
                return
        raise PayloadError(
            f"{type(self).__name__} has no initial arrays: no client registered "
            "any (give `initial_arrays`, or let one client send its initial "
            "tensors when it registers)"
        )

    def train_config(self, server_round: int) -> dict[str, Scalar]:
        r"""The config sent with round ``server_round``'s training payloads
        (subclasses extend it and call ``super()``)."""
        return {**self.config, "server-round": int(server_round)}

    def configure_train(
        self, server_round: int, client_ids: Sequence[int]
    ) -> dict[int, Payload]:
        cfg = self.train_config(server_round)
        return {
            c: Payload(
                arrays={k: v.clone() for k, v in self.arrays.items()}, config=dict(cfg)
            )
            for c in client_ids
        }

    def aggregate_train(
        self, server_round: int, replies: Mapping[int, Payload]
    ) -> None:
        if not replies:
            return
        for c, p in replies.items():
            missing = set(self.arrays) - set(p.arrays)
            if missing:
                raise PayloadError(
                    f"Client {c} replied without {len(missing)} shared arrays "
                    f"(e.g. {sorted(missing)[:3]}) in round {server_round}; "
                    "skipping aggregation is not safe."
                )
        weights = self.client_weights(replies)
        for key in list(self.arrays):
            aggregated = weighted_mean(
                [p.arrays[key] for p in replies.values()], weights
            )
            self.server_update(server_round, key, aggregated)

    def server_update(
        self,
        server_round: int,
        key: str,
        aggregated: Tensor,
        index: Tensor | None = None,
    ) -> None:
        r"""The server-side update hook, called after aggregation with the
        aggregate of ``arrays[key]`` (only its rows ``index`` when given:
        the rows some participant sent this round, e.g. FedE's entity rows).

        The default writes the aggregate (FedAvg). A server optimiser
        overrides it with :math:`\mathbf{x} \leftarrow \mathbf{x} +
        \eta\,\mathrm{opt}(\Delta)` on the pseudo-gradient
        :math:`\Delta = \text{aggregated} - \mathbf{x}` (Reddi et al. 2021),
        keeping its own state in :meth:`state_dict`.

        Args:
            server_round (int): the round.
            key (str): the shared tensor.
            aggregated (Tensor): the aggregate (``[len(index), …]`` rows when
                ``index`` is given).
            index (Tensor, optional): ``[k]`` row positions of ``aggregated``
                in ``arrays[key]``. (default: :obj:`None`: the whole tensor)
        """
        if index is None:
            self.arrays[key] = aggregated
        else:
            current = self.arrays[key]
            current[index] = aggregated.to(current.dtype)

    def client_weights(self, replies: Mapping[int, Payload]) -> list[float]:
        r"""The averaging weight of each reply (in ``replies`` order): its
        ``num_examples`` (equal weights when all are zero)."""
        weights = [float(max(int(p.num_examples), 0)) for p in replies.values()]
        return weights if sum(weights) > 0 else [1.0] * len(weights)

    def state_dict(self) -> dict[str, Any]:
        return {"arrays": {k: v.clone() for k, v in self.arrays.items()}}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.arrays = {k: v.clone() for k, v in state["arrays"].items()}

    def get_params(self) -> dict[str, Any]:
        return {
            "arrays": sorted(self.arrays),
            **({"config": self.config} if self.config else {}),
        }


__all__ = ["FedAvg"]
