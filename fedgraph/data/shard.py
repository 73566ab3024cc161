r"""Client shards: what one party holds after partitioning."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from fedgraph.data.knowledge_graph import KnowledgeGraph


@dataclass
class KGShard:
    r"""One client's share of a federated knowledge graph.

    Args:
        client_id (int): the client's index in its :class:`FederatedKG`.
        graph (KnowledgeGraph): the client's triples in *local* ids
            (entities ``0 … n_local - 1``, relations ``0 … r_local - 1``)
            with its own train/valid/test (and optional extra) splits.
        entity_ids (Tensor): ``[n_local]`` local → global entity id.
        relation_ids (Tensor): ``[r_local]`` local → global relation id.
    """

    client_id: int
    graph: KnowledgeGraph
    entity_ids: Tensor
    relation_ids: Tensor

    def __post_init__(self) -> None:
        self.entity_ids = torch.as_tensor(self.entity_ids, dtype=torch.long)
        self.relation_ids = torch.as_tensor(self.relation_ids, dtype=torch.long)
        if self.entity_ids.numel() != self.graph.num_entities:
            raise ValueError(
                f"Client {self.client_id}: `entity_ids` has "
                f"{self.entity_ids.numel()} items but the graph has "
                f"{self.graph.num_entities} entities"
            )
        if self.relation_ids.numel() != self.graph.num_relations:
            raise ValueError(
                f"Client {self.client_id}: `relation_ids` has "
                f"{self.relation_ids.numel()} items but the graph has "
                f"{self.graph.num_relations} relations"
            )

    @property
    def num_entities(self) -> int:
        return self.graph.num_entities

    @property
    def num_relations(self) -> int:
        return self.graph.num_relations

    def global_triples(self, split: str = "train") -> Tensor:
        r"""``split``'s triples mapped to global entity and relation ids."""
        t = self.graph.triples(split)
        return torch.stack(
            [
                self.entity_ids[t[:, 0]],
                self.relation_ids[t[:, 1]],
                self.entity_ids[t[:, 2]],
            ],
            dim=1,
        )

    def __repr__(self) -> str:
        return f"KGShard(client={self.client_id}, {self.graph!r})"


@dataclass
class FederatedKG:
    r"""A federated knowledge graph: a list of client shards over one global
    entity (and relation) vocabulary.

    Args:
        shards (list[KGShard]): one shard per client, ``shards[i].client_id == i``.
        num_entities (int): size of the global entity vocabulary.
        num_relations (int): size of the global relation vocabulary.
        entity_names (list[str], optional): global entity names.
        relation_names (list[str], optional): global relation names.
        meta (dict): provenance: partitioner, its arguments, seed, source
            checksum, library version.
    """

    shards: list[KGShard]
    num_entities: int
    num_relations: int
    entity_names: list[str] | None = None
    relation_names: list[str] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def num_clients(self) -> int:
        return len(self.shards)

    def __len__(self) -> int:
        return len(self.shards)

    def __getitem__(self, i: int) -> KGShard:
        return self.shards[i]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.shards)

    def __repr__(self) -> str:
        return (
            f"FederatedKG(clients={self.num_clients}, "
            f"entities={self.num_entities}, relations={self.num_relations})"
        )


__all__ = ["KGShard", "FederatedKG"]
