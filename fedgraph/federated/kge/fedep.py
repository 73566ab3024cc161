r"""FedEP, the personalised FedE baseline of `FedS <https://arxiv.org/abs/2406.13225>`_
(§IV-B); the message layout shared with FedS is in :mod:`fedgraph.federated.kge.feds`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import Tensor

from fedgraph.federated.aggregate import scatter_mean_rows
from fedgraph.federated.kge.fede import ENTITY, FedE
from fedgraph.federated.kge.sparsify import shared_entity_mask
from fedgraph.federated.payload import Payload, PayloadError, Scalar

SIGN = "sign"
PRIORITY = "priority"
#: config key: whether the client must upload all its shared rows this round.
FULL_UPLOAD = "feds-full-upload"
#: config key: the sparsity ratio ``p`` (clients select ``K = floor(p N_c)``).
SPARSITY = "feds-p"


class FedEP(FedE):
    r"""FedEP, the personalised FedE baseline of FedS §IV-B.

    FedE's server (:class:`~fedgraph.federated.FedE`, Eq. 1–4) with the
    clients' *local* tables evaluated after local training, and only the
    shared entities transmitted (an exclusive entity's mean is its own row).
    Each round the client replaces its shared rows by the server's mean,
    trains, and uploads them:

    .. math::
        \mathbf{E}_{t+1}[e] = \frac{1}{|\{c : e \in \mathcal{E}_c\}|}
        \sum_{c :\, e \in \mathcal{E}_c} \mathbf{E}^c_t[e]
        \qquad (e \text{ shared})

    Args:
        num_entities (int): size of the global entity vocabulary.
        entity_dim (int): width of an entity row.
        init_range (float): initial rows are :math:`U(-r, r)`.
        seed (int, optional): seed of the initial table and of tie-breaks.
            (default: :obj:`0`)
        config (Mapping[str, Scalar], optional): sent with every training
            payload.
    """

    def __init__(
        self,
        num_entities: int,
        entity_dim: int,
        *,
        init_range: float,
        seed: int = 0,
        config: Mapping[str, Scalar] | None = None,
    ) -> None:
        super().__init__(
            num_entities,
            entity_dim,
            init_range=init_range,
            seed=seed,
            evaluate_with="local",
            config=config,
        )
        self.shared_ids: dict[int, Tensor] = {}
        self._told: set[int] = set()

    def register(self, registrations: Mapping[int, Payload]) -> None:
        super().register(registrations)
        mask = shared_entity_mask(
            list(self.client_entities.values()), self.num_entities
        )
        self.shared_ids = {
            c: torch.sort(ids[mask[ids]]).values
            for c, ids in self.client_entities.items()
        }

    def is_full_upload(self, server_round: int) -> bool:
        r"""Whether clients upload all shared rows in ``server_round``
        (FedEP: always)."""
        return True

    def train_config(self, server_round: int) -> dict[str, Scalar]:
        return {
            **super().train_config(server_round),
            FULL_UPLOAD: self.is_full_upload(server_round),
        }

    def _full_download(self, c: int) -> Payload:
        return Payload(arrays={ENTITY: self.table[self.shared_ids[c]].clone()})

    def download(self, server_round: int, client_id: int) -> Payload:
        r"""What client ``client_id`` receives in ``server_round`` (FedEP:
        the mean rows of its shared entities)."""
        return self._full_download(client_id)

    def configure_train(
        self, server_round: int, client_ids: Sequence[int]
    ) -> dict[int, Payload]:
        cfg = self.train_config(server_round)
        out = {}
        for c in client_ids:
            c = int(c)
            if c not in self.shared_ids:
                raise PayloadError(f"Client {c} is not registered")
            p = self.download(server_round, c)
            p.config.update(cfg)
            if c not in self._told:  # the shared-id list, sent once
                p.row_ids[ENTITY] = self.shared_ids[c].clone()
                self._told.add(c)
            out[c] = p
        return out

    def _check_reply(self, c: int, p: Payload, full: bool) -> None:
        n = self.shared_ids[c].numel()
        rows = p.arrays.get(ENTITY)
        if rows is None:
            raise PayloadError(f"Client {c} replied without `arrays['{ENTITY}']`")
        if full and rows.size(0) != n:
            raise PayloadError(
                f"Client {c} sent {rows.size(0)} rows in a full upload; it has "
                f"{n} shared entities"
            )
        if not full:
            sign = p.arrays.get(SIGN)
            if sign is None or sign.numel() != n or int(sign.sum()) != rows.size(0):
                raise PayloadError(
                    f"Client {c} sent a sparse upload whose `arrays['{SIGN}']` "
                    f"does not select its {rows.size(0)} rows among {n}"
                )

    def aggregate_full(self, replies: Mapping[int, Payload]) -> None:
        r"""FedE's mean over the clients holding each shared entity."""
        table, weight = scatter_mean_rows(
            [p.arrays[ENTITY] for p in replies.values()],
            [self.shared_ids[int(c)] for c in replies],
            self.num_entities,
        )
        received = weight > 0
        self.table[received] = table[received].to(self.table.dtype)

    def aggregate_train(
        self, server_round: int, replies: Mapping[int, Payload]
    ) -> None:
        if not replies:
            return
        full = self.is_full_upload(server_round)
        for c, p in replies.items():
            self._check_reply(int(c), p, full)
        if full:
            self.aggregate_full(replies)

    def state_dict(self) -> dict[str, Any]:
        return {
            **super().state_dict(),
            "shared_ids": {c: v.clone() for c, v in self.shared_ids.items()},
            "told": sorted(self._told),
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict(state)
        self.shared_ids = {int(c): v.clone() for c, v in state["shared_ids"].items()}
        self._told = set(state["told"])

    def get_params(self) -> dict[str, Any]:
        params = super().get_params()
        params.pop("evaluate_with", None)
        return params


__all__ = ["FedEP", "SIGN", "PRIORITY", "FULL_UPLOAD", "SPARSITY"]
