r"""The client side of FedEP and FedS (`FedS <https://arxiv.org/abs/2406.13225>`_
§III, §IV-B); see :mod:`fedgraph.federated.kge.feds` for the message layout."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from fedgraph.data.io import cpu_copy
from fedgraph.federated.kge.client import KGEClient
from fedgraph.federated.kge.fede import ENTITY
from fedgraph.federated.kge.feds import FULL_UPLOAD, PRIORITY, SIGN, SPARSITY
from fedgraph.federated.kge.sparsify import personalised_update, upstream_select
from fedgraph.federated.payload import Payload, PayloadError


class FedSClient(KGEClient):
    r"""A personalised KGE client for :class:`~fedgraph.federated.FedEP` and
    :class:`~fedgraph.federated.FedS`.

    It keeps its own full entity table (evaluated as is: the personalised
    model). On a full download it replaces its shared rows by the server's
    means; on a sparse one it applies FedS Eq. (4),
    :math:`\mathbf{E} \leftarrow (\mathbf{A} + \mathbf{E}) / (1 + \mathbf{P})`,
    to the received rows only. After ``local_epochs`` of training it uploads
    all shared rows (full rounds) or the top
    :math:`K = \lfloor p N_c \rfloor` rows by change since their last upload,
    :math:`1 - \cos(\mathbf{E}^t_c, \mathbf{E}^h_c)`, with the sign vector
    (FedS Eqs. 1–2), and records them as last uploaded (:math:`\mathbf{E}^h`,
    initialised with the first received rows).

    Args: as :class:`~fedgraph.federated.kge.client.KGEClient`.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.shared_index: Tensor | None = None  # local ids of the shared entities
        self.history: Tensor | None = None

    def _receive(self, payload: Payload) -> None:
        if ENTITY in payload.row_ids:
            self.shared_index = self._local_index(ENTITY, payload).to(self.device)
        if self.shared_index is None:
            raise PayloadError(
                f"Client {self.client_id} received rows before the list of its "
                "shared entities"
            )
        idx = self.shared_index
        with torch.no_grad():
            if SIGN in payload.arrays:
                sign = payload.arrays[SIGN].bool().to(self.device)
                if sign.numel() != idx.numel():
                    raise PayloadError(
                        f"Client {self.client_id}: sign vector of {sign.numel()} "
                        f"entries for {idx.numel()} shared entities"
                    )
                self.table[idx] = personalised_update(
                    self.table[idx],
                    self._on_device(payload.arrays[ENTITY]),
                    payload.arrays[PRIORITY].to(self.device),
                    sign,
                )
            elif ENTITY in payload.arrays:
                rows = payload.arrays[ENTITY]
                if rows.size(0) != idx.numel():
                    raise PayloadError(
                        f"Client {self.client_id}: full download of {rows.size(0)} "
                        f"rows for {idx.numel()} shared entities"
                    )
                self.table[idx] = self._on_device(rows)
        if self.history is None:
            self.history = self.table.detach()[idx].clone()

    def fit(self, payload: Payload) -> Payload:
        self._receive(payload)
        if self.reset_optimizer:
            self.optimizer = self._new_optimizer()
        mean_loss = self._train_local()
        assert self.shared_index is not None and self.history is not None
        current = self.table.detach()[self.shared_index].clone()
        metrics = {"count": 1, "loss_sum": mean_loss}
        if bool(payload.config.get(FULL_UPLOAD, True)):
            self.history = current.clone()
            arrays = {ENTITY: cpu_copy(current)}
        else:
            sign = upstream_select(
                current, self.history, float(payload.config[SPARSITY])
            )
            self.history[sign] = current[sign]
            arrays = {ENTITY: cpu_copy(current[sign]), SIGN: cpu_copy(sign)}
        return Payload(
            arrays=arrays, metrics=metrics, num_examples=int(self.train_triples.size(0))
        )

    def state_dict(self) -> dict[str, Any]:
        return {
            **super().state_dict(),
            "shared_index": cpu_copy(self.shared_index),
            "history": None if self.history is None else cpu_copy(self.history),
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict(state)
        index = state["shared_index"]
        self.shared_index = None if index is None else index.to(self.device)
        hist = state["history"]
        self.history = None if hist is None else self._on_device(hist)


__all__ = ["FedSClient"]
