r"""FedEP and FedS: personalised FedE, and its communication-efficient
entity-wise top-K sparsification (`FedS <https://arxiv.org/abs/2406.13225>`_).

Message layout (every tensor below is counted by the ledger: sign vectors and
priorities are *parameters* too, as in FedS Eq. 5; the sign vector is sent as
``torch.bool``, one byte per entry, and the priorities as ``torch.int16``):

* first download to a client: ``row_ids["entity"]`` = the global ids of its
  *shared* entities (held by at least one other client), ascending; every
  per-client vector is over this list, of length :math:`N_c`. Exclusive
  entities are never transmitted.
* full download: ``arrays["entity"]`` ``[N_c, D]`` = the mean of the last
  full uploads (FedE Eq. 3); the client replaces its rows.
* sparse download: ``arrays["entity"]`` ``[K', D]`` = the sums
  :math:`\mathbf{A}` over the other clients' uploads, ``arrays["priority"]``
  ``[K']`` = :math:`\mathbf{P}`, ``arrays["sign"]`` ``[N_c]``; the client
  applies :math:`\mathbf{E} \leftarrow (\mathbf{A} + \mathbf{E}) /
  (1 + \mathbf{P})` (FedS Eq. 4).
* full upload: ``arrays["entity"]`` ``[N_c, D]``; sparse upload:
  ``arrays["entity"]`` ``[K, D]`` and ``arrays["sign"]`` ``[N_c]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from fedgraph.federated.kge.fede import ENTITY
from fedgraph.federated.kge.fedep import FULL_UPLOAD, PRIORITY, SIGN, SPARSITY, FedEP
from fedgraph.federated.kge.sparsify import (
    downstream_select,
    is_sync_round,
    num_selected,
    personalised_aggregate,
)
from fedgraph.federated.payload import Payload, Scalar


class FedS(FedEP):
    r"""FedS: entity-wise top-K sparsification with personalised aggregation
    and intermittent synchronisation (FedS §III), on top of :class:`FedEP`.

    * Upstream (FedS §III-C): in a sparse round each client uploads the
      :math:`K_c = \lfloor p N_c \rfloor` shared rows that changed most since
      their last upload (:math:`1 - \cos`) and its 0/1 sign vector.
    * Downstream (§III-D): for each client, the server sums the *other*
      clients' uploads per entity (:math:`\mathbf{A}`, Eq. 3), ranks its
      entities by upload count :math:`\mathbf{P}` (random tie-break) and
      sends the top :math:`K_c` with their priorities and a sign vector; the
      client applies

      .. math::
          \mathbf{E}^{t+1}_{c_e} = \frac{\mathbf{A}^t_{c_e} +
          \mathbf{E}^t_{c_e}}{1 + \mathbf{P}^t_{c_e}} \qquad \text{(Eq. 4)}

    * Intermittent synchronisation (§III-E): every ``sync_interval + 1``
      rounds (rounds ``1, s + 2, …``), a full FedEP exchange
      (:func:`~fedgraph.federated.kge.sparsify.is_sync_round`).

    A sparse round's uploads are answered by the *next* round's downloads.
    FedS assumes every client takes part in every round (as the paper); with a
    client fraction below one, a client receives the personalised download
    computed when it last could, on its next participation.

    Args:
        num_entities (int): size of the global entity vocabulary.
        entity_dim (int): width of an entity row.
        init_range (float): initial rows are :math:`U(-r, r)`.
        p (float, optional): sparsity ratio. (default: :obj:`0.4`)
        sync_interval (int, optional): sparse rounds between two full
            synchronisations, :math:`s`. (default: :obj:`4`)
        seed (int, optional): seed of the initial table and of the downstream
            tie-breaks. (default: :obj:`0`)
        config (Mapping[str, Scalar], optional): sent with every training
            payload.
    """

    def __init__(
        self,
        num_entities: int,
        entity_dim: int,
        *,
        init_range: float,
        p: float = 0.4,
        sync_interval: int = 4,
        seed: int = 0,
        config: Mapping[str, Scalar] | None = None,
    ) -> None:
        num_selected(1, p)  # validates p
        if sync_interval < 0:
            raise ValueError(f"`sync_interval` must be >= 0 (got {sync_interval})")
        super().__init__(
            num_entities, entity_dim, init_range=init_range, seed=seed, config=config
        )
        self.p = float(p)
        self.sync_interval = int(sync_interval)
        self.generator = torch.Generator().manual_seed(self.seed + 1)
        self._pending: dict[int, Payload] = {}

    def is_full_upload(self, server_round: int) -> bool:
        return is_sync_round(server_round, self.sync_interval)

    def train_config(self, server_round: int) -> dict[str, Scalar]:
        return {**super().train_config(server_round), SPARSITY: self.p}

    def download(self, server_round: int, client_id: int) -> Payload:
        if server_round > 1 and not self.is_full_upload(server_round - 1):
            if client_id in self._pending:
                return self._pending.pop(client_id)
            n = self.shared_ids[client_id].numel()  # nothing computed for it yet
            return Payload(
                arrays={
                    ENTITY: self.table.new_zeros(0, self.entity_dim),
                    PRIORITY: torch.zeros(0, dtype=torch.int16),
                    SIGN: torch.zeros(n, dtype=torch.bool),
                }
            )
        return self._full_download(client_id)

    def aggregate_train(
        self, server_round: int, replies: Mapping[int, Payload]
    ) -> None:
        super().aggregate_train(server_round, replies)
        if not replies or self.is_full_upload(server_round):
            self._pending.clear()
            return
        total = self.table.new_zeros(self.num_entities, self.entity_dim)
        count = torch.zeros(self.num_entities, dtype=torch.long)
        own: dict[int, tuple[Tensor, Tensor]] = {}
        for c, p in replies.items():
            c = int(c)
            sign = p.arrays[SIGN].bool()
            ids = self.shared_ids[c][sign]
            total.index_add_(0, ids, p.arrays[ENTITY].to(total.dtype))
            count.index_add_(0, ids, torch.ones_like(ids))
            own[c] = (p.arrays[ENTITY], sign)
        self._pending = {}
        for c in sorted(self.shared_ids):  # every client, in a fixed order
            ids = self.shared_ids[c]
            vals, sign = own.get(
                c,
                (
                    total.new_zeros(0, self.entity_dim),
                    torch.zeros(ids.numel(), dtype=torch.bool),
                ),
            )
            agg, prio = personalised_aggregate(total, count, ids, vals, sign)
            sel = downstream_select(prio, self.p, self.generator)
            self._pending[c] = Payload(
                arrays={
                    ENTITY: agg[sel].clone(),
                    PRIORITY: prio[sel].to(torch.int16),
                    SIGN: sel,
                }
            )

    def state_dict(self) -> dict[str, Any]:
        return {
            **super().state_dict(),
            "generator": self.generator.get_state(),
            "pending": {c: p.to_dict() for c, p in self._pending.items()},
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict(state)
        self.generator.set_state(state["generator"])
        self._pending = {
            int(c): Payload.from_dict(d) for c, d in state["pending"].items()
        }

    def get_params(self) -> dict[str, Any]:
        return {
            **super().get_params(),
            "p": self.p,
            "sync_interval": self.sync_interval,
        }


__all__ = ["FedEP", "FedS", "SIGN", "PRIORITY", "FULL_UPLOAD", "SPARSITY"]
