r"""FedE: entity-wise federated averaging of KG embeddings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import Tensor

from fedgraph.eval.metrics import LinkPredState
from fedgraph.eval.protocol import MODELS_SCORED
from fedgraph.federated.aggregate import scatter_mean_rows
from fedgraph.federated.fedavg import FedAvg
from fedgraph.federated.payload import Payload, PayloadError, Scalar

ENTITY = "entity"


class FedE(FedAvg):
    r"""FedE from `"FedE: Embedding Knowledge Graphs in Federated Setting"
    <https://arxiv.org/abs/2010.12882>`_ (Chen et al., IJCKG 2021).

    The server keeps the global entity table :math:`\mathbf{E}_t`; client
    :math:`c` registers the global ids of its entities once (the permutation
    matrix :math:`\mathbf{P}_c` and existence vector :math:`\mathbf{v}_c`),
    receives its rows, trains locally for some epochs and sends its rows back
    (relation embeddings and triples never leave the client):

    .. math::
        \mathbf{E}^c_t = \mathbf{P}_c \mathbf{E}_t, \qquad
        \mathbf{E}_{t+1} = \left(\mathbb{1} \oslash \sum_{c \in K_t}
        \mathbf{v}_c\right) \otimes \sum_{c \in K_t} \mathbf{P}_c^\top
        \mathbf{E}^c_t

    (FedE Eq. 1–4; the plain mean over the participating clients that hold
    each entity, as FedE's code does; rows no participant holds keep their
    value).

    FedE is :class:`~fedgraph.federated.FedAvg` over one shared tensor,
    ``arrays["entity"]`` (:attr:`table`), with an entity index: each client
    receives and returns only its rows, averaged row-wise; the aggregated rows
    go through the same server-update hook
    (:meth:`~fedgraph.federated.FedAvg.server_update`, called with the
    received rows' ``index``), which server optimisers override.

    Args:
        num_entities (int): size of the global entity vocabulary.
        entity_dim (int): width of an entity row (``2 * dim`` for complex
            models).
        init_range (float): rows start i.i.d. :math:`U(-r, r)` (the KGE
            models use :math:`r = (\gamma + \epsilon) / \mathrm{dim}`).
        seed (int, optional): seed of the initial table. (default: :obj:`0`)
        evaluate_with (str, optional): ``"local"``: clients score their own
            current tables (FedLU's protocol); ``"global"``: the server sends
            each client its rows of :math:`\mathbf{E}_t` to score with (FedE's
            protocol). (default: :obj:`"local"`)
        config (Mapping[str, Scalar], optional): sent with every training
            payload. (default: :obj:`None`)
    """

    def __init__(
        self,
        num_entities: int,
        entity_dim: int,
        *,
        init_range: float,
        seed: int = 0,
        evaluate_with: str = "local",
        config: Mapping[str, Scalar] | None = None,
    ) -> None:
        if num_entities < 1 or entity_dim < 1:
            raise ValueError(
                f"`num_entities` and `entity_dim` must be positive (got "
                f"{num_entities} and {entity_dim})"
            )
        if evaluate_with not in MODELS_SCORED:
            raise ValueError(
                f"`evaluate_with` must be one of {MODELS_SCORED} (got "
                f"{evaluate_with!r})"
            )
        self.num_entities = int(num_entities)
        self.entity_dim = int(entity_dim)
        self.init_range = float(init_range)
        self.seed = int(seed)
        self.evaluate_with = evaluate_with
        gen = torch.Generator().manual_seed(self.seed)
        table = (
            torch.rand(self.num_entities, self.entity_dim, generator=gen) * 2 - 1
        ) * self.init_range
        super().__init__({ENTITY: table}, config=config)
        self.client_entities: dict[int, Tensor] = {}

    @property
    def table(self) -> Tensor:
        r"""``[num_entities, entity_dim]`` the global entity table
        :math:`\mathbf{E}_t` (``arrays["entity"]``)."""
        return self.arrays[ENTITY]

    @table.setter
    def table(self, value: Tensor) -> None:
        self.arrays[ENTITY] = value

    # ---------------------------------------------------------------- setup
    def register(self, registrations: Mapping[int, Payload]) -> None:
        for c, p in registrations.items():
            if ENTITY not in p.row_ids:
                raise PayloadError(
                    f"Client {c} registered without `row_ids['{ENTITY}']`; FedE "
                    "needs the global ids of each client's entities."
                )
            ids = p.row_ids[ENTITY].long()
            if ids.numel() and int(ids.max()) >= self.num_entities:
                raise PayloadError(
                    f"Client {c} registered entity id {int(ids.max())} outside "
                    f"[0, {self.num_entities})"
                )
            self.client_entities[int(c)] = ids.clone()

    def _rows_for(self, client_id: int) -> tuple[Tensor, Tensor]:
        if client_id not in self.client_entities:
            raise PayloadError(
                f"Client {client_id} is not registered (registered: "
                f"{sorted(self.client_entities)})"
            )
        ids = self.client_entities[client_id]
        return self.table[ids].clone(), ids.clone()

    # ---------------------------------------------------------------- train
    def configure_train(
        self, server_round: int, client_ids: Sequence[int]
    ) -> dict[int, Payload]:
        cfg = self.train_config(server_round)
        out = {}
        for c in client_ids:
            rows, ids = self._rows_for(int(c))
            out[c] = Payload(
                arrays={ENTITY: rows}, row_ids={ENTITY: ids}, config=dict(cfg)
            )
        return out

    def aggregation_weights(
        self, replies: Mapping[int, Payload]
    ) -> list[float | Tensor] | None:
        r"""Per-client (or per-row) weights of the entity mean (FedE: ``None``,
        the plain mean)."""
        return None

    def aggregate_train(
        self, server_round: int, replies: Mapping[int, Payload]
    ) -> None:
        if not replies:
            return
        for c, p in replies.items():
            if ENTITY not in p.arrays or ENTITY not in p.row_ids:
                raise PayloadError(
                    f"Client {c} replied without `arrays['{ENTITY}']` and its "
                    f"`row_ids` in round {server_round}"
                )
        table, weight = scatter_mean_rows(
            [p.arrays[ENTITY] for p in replies.values()],
            [p.row_ids[ENTITY] for p in replies.values()],
            self.num_entities,
            weights=self.aggregation_weights(replies),
        )
        received = (weight > 0).nonzero().squeeze(1)
        self.server_update(server_round, ENTITY, table[received], received)

    # ------------------------------------------------------------- evaluate
    def configure_evaluate(
        self, server_round: int, client_ids: Sequence[int], split: str = "valid"
    ) -> dict[int, Payload]:
        if self.evaluate_with == "local":
            return super().configure_evaluate(server_round, client_ids, split)
        out = {}
        for c in client_ids:
            rows, ids = self._rows_for(int(c))
            out[c] = Payload(
                arrays={ENTITY: rows}, row_ids={ENTITY: ids}, config={"split": split}
            )
        return out

    def aggregate_evaluate(
        self, server_round: int, replies: Mapping[int, Payload]
    ) -> dict[str, float]:
        r"""Merges the clients' :class:`~fedgraph.eval.LinkPredState` sums
        (``"head/count"``, ``"tail/rr"``, …): the exact query-weighted
        metrics of all clients (FedLU's "weighted average")."""
        states = [
            LinkPredState.from_dict({k: v for k, v in p.metrics.items() if "/" in k})
            for p in replies.values()
        ]
        return LinkPredState.merged(states).compute() if states else {}

    # ---------------------------------------------------------------- state
    def state_dict(self) -> dict[str, Any]:
        return {
            "table": self.table.clone(),
            "client_entities": {c: v.clone() for c, v in self.client_entities.items()},
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.table = state["table"].clone()
        self.client_entities = {
            int(c): v.clone() for c, v in state["client_entities"].items()
        }

    def get_params(self) -> dict[str, Any]:
        return {
            "num_entities": self.num_entities,
            "entity_dim": self.entity_dim,
            "init_range": self.init_range,
            "seed": self.seed,
            "evaluate_with": self.evaluate_with,
            **({"config": self.config} if self.config else {}),
        }


__all__ = ["FedE", "ENTITY"]
