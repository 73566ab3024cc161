r"""FedR: federated KG embedding by relation-embedding aggregation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import Tensor

from fedgraph.data.io import cpu_copy
from fedgraph.federated.algorithms import Algorithm
from fedgraph.federated.kge.client import KGEClient
from fedgraph.federated.kge.fede import ENTITY, FedE
from fedgraph.federated.payload import Payload, PayloadError, Scalar

RELATION = "relation"


def _rename(p: Payload, old: str, new: str) -> Payload:
    return Payload(
        arrays={(new if k == old else k): v for k, v in p.arrays.items()},
        row_ids={(new if k == old else k): v for k, v in p.row_ids.items()},
        config=dict(p.config),
        metrics=dict(p.metrics),
        num_examples=p.num_examples,
    )


class FedR(FedE):
    r"""FedR from `"Efficient Federated Learning on Knowledge Graphs via
    Privacy-preserving Relation Embedding Aggregation"
    <https://aclanthology.org/2022.findings-emnlp.43>`_ (Zhang et al.,
    Findings of EMNLP 2022).

    The server keeps a global *relation* table; each client registers the
    global ids of its relations, receives their rows, trains locally and
    sends its relation rows back; the server averages each relation over the
    clients that hold it (FedE's rule, applied to relations). Entity
    embeddings never leave the clients, so the server holds no entity rows
    to attack. (The paper hides the relation ids and rows further with
    private set union and secure aggregation; here the relation rows travel
    in the clear unless DP is switched on.) Clients evaluate their own models.

    Args:
        num_relations (int): size of the global relation vocabulary.
        relation_dim (int): width of a relation row.
        init_range (float): rows start i.i.d. :math:`U(-r, r)`.
        seed (int, optional): seed of the initial table. (default: :obj:`0`)
        config (Mapping[str, Scalar], optional): sent with every payload.
    """

    def __init__(
        self,
        num_relations: int,
        relation_dim: int,
        *,
        init_range: float,
        seed: int = 0,
        config: Mapping[str, Scalar] | None = None,
    ) -> None:
        if num_relations < 0:
            raise ValueError(
                f"`num_relations` must be non-negative (got {num_relations})"
            )
        # 0: a server that does not know the vocabulary sizes it from the
        # registrations (the rows of a seeded table do not depend on its size)
        super().__init__(
            max(int(num_relations), 1),
            relation_dim,
            init_range=init_range,
            seed=seed,
            config=config,
        )

    def _grow(self, size: int) -> None:
        gen = torch.Generator().manual_seed(self.seed)
        table = (
            torch.rand(size, self.entity_dim, generator=gen) * 2 - 1
        ) * self.init_range
        table[: self.num_entities] = self.table
        self.table, self.num_entities = table, int(size)

    def register(self, registrations: Mapping[int, Payload]) -> None:
        for c, p in registrations.items():
            if RELATION not in p.row_ids:
                raise PayloadError(
                    f"Client {c} registered without `row_ids['{RELATION}']`"
                )
        ids = [p.row_ids[RELATION] for p in registrations.values()]
        needed = int(torch.cat(ids).max()) + 1 if ids and sum(map(len, ids)) else 0
        if needed > self.num_entities:
            self._grow(needed)
        super().register(
            {c: _rename(p, RELATION, ENTITY) for c, p in registrations.items()}
        )

    def configure_train(
        self, server_round: int, client_ids: Sequence[int]
    ) -> dict[int, Payload]:
        out = super().configure_train(server_round, client_ids)
        return {c: _rename(p, ENTITY, RELATION) for c, p in out.items()}

    def aggregate_train(
        self, server_round: int, replies: Mapping[int, Payload]
    ) -> None:
        super().aggregate_train(
            server_round, {c: _rename(p, RELATION, ENTITY) for c, p in replies.items()}
        )

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict(state)
        self.num_entities = int(self.table.size(0))  # sized at registration

    def get_params(self) -> dict[str, Any]:
        params = super().get_params()
        params.pop("evaluate_with", None)
        return {
            "num_relations": params.pop("num_entities"),
            "relation_dim": params.pop("entity_dim"),
            **params,
        }


class FedRClient(KGEClient):
    r"""A :class:`~fedgraph.federated.kge.client.KGEClient` that exchanges
    its relation rows (keyed by global relation id) instead of its entity
    rows."""

    def _relation_positions(self, ids: Tensor) -> Tensor:
        rel = self.shard.relation_ids.long()
        order = torch.argsort(rel)
        pos = torch.searchsorted(rel[order], ids).clamp_max(rel.numel() - 1)
        if not torch.equal(rel[order][pos], ids):
            raise PayloadError(
                f"Client {self.client_id} received rows for relations it does not hold"
            )
        return order[pos]

    def register(self) -> Payload:
        return Payload(row_ids={RELATION: self.shard.relation_ids.clone()})

    def fit(self, payload: Payload) -> Payload:
        if RELATION in payload.arrays:
            idx = self._relation_positions(payload.row_ids[RELATION].long())
            w = self.model.relation_embedding.weight
            with torch.no_grad():
                w[idx.to(w.device)] = payload.arrays[RELATION].to(w.device, w.dtype)
        if self.reset_optimizer:
            self.optimizer = self._new_optimizer()
        mean_loss = self._train_local()
        return Payload(
            arrays={RELATION: cpu_copy(self.model.relation_embedding.weight)},
            row_ids={RELATION: self.shard.relation_ids.clone()},
            metrics={"count": 1, "loss_sum": mean_loss},
            num_examples=int(self.train_triples.size(0)),
        )


def build_fedr(fed: Any, s: Any, x: object = None) -> tuple[FedR, dict[int, Any]]:
    r"""The ``fedr`` builder (no settings of its own)."""
    from fedgraph.federated.kge.setup import build_clients
    from fedgraph.models.kge import resolve_model

    if s.evaluate_with != "local":
        raise ValueError(
            "FedR clients evaluate their own models (`evaluate_with='local'`)"
        )
    probe = resolve_model(s.model, 1, 1, s.dim, gamma=s.gamma, **s.model_kwargs)
    strategy = FedR(
        fed.num_relations,
        probe.relation_embedding.weight.size(1),
        init_range=probe.embedding_range,
        seed=s.seed,
    )
    return strategy, build_clients(fed, s, cls=FedRClient)


ALGORITHMS = [
    Algorithm(
        "fedr",
        "kge",
        "relation-embedding aggregation; entity rows never leave the clients",
        build_fedr,
        reference="https://aclanthology.org/2022.findings-emnlp.43",
    )
]

__all__ = ["FedR", "FedRClient", "RELATION", "build_fedr", "ALGORITHMS"]
