r"""The knowledge-graph type every KG loader, partitioner and trainer shares."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import HeteroData

from fedgraph.data.io import atomic_torch_save
from fedgraph.typing import SPLITS, Triples
from fedgraph.validate import check_instance, check_integer, check_triples

ENTITY = "entity"


class KnowledgeGraph:
    r"""A knowledge graph with labelled triple splits, backed by PyG
    :class:`~torch_geometric.data.HeteroData`.

    Ids are dense: entities ``0 … num_entities - 1`` and relations
    ``0 … num_relations - 1``, assigned over *all* splits (as PyG's
    ``FB15k_237``). Triples are ``[n, 3]`` long tensors in
    ``(head, relation, tail)`` order.

    The backing :attr:`data` has one node type ``"entity"`` and one edge type
    ``("entity", relation_name, "entity")`` per relation whose store holds
    ``edge_index`` (all splits) and ``split`` (``0`` train, ``1`` valid,
    ``2`` test, ``3 …`` any extra split, in :attr:`split_names` order). Its
    global store holds the homogeneous view used by KGE code: ``edge_index``
    ``[2, E]``, ``edge_type`` ``[E]`` and ``split`` ``[E]``.

    Args:
        triples (Mapping[str, Tensor]): split name → ``[n, 3]`` triples. The
            splits ``"train"``, ``"valid"`` and ``"test"`` come first in this
            order when present; any other split (e.g. ``"unlearn"``) follows.
        num_entities (int): number of entities.
        num_relations (int): number of relations.
        entity_names (Sequence[str], optional): name of each entity id.
        relation_names (Sequence[str], optional): name of each relation id.
        name (str, optional): the dataset's name. (default: :obj:`""`)

    Raises:
        TypeError: if a split holds floats (never truncated to ids) or a
            count is not an integer.
        ValueError: if a split is not ``[n, 3]`` or holds an id out of range.
    """

    def __init__(
        self,
        triples: Mapping[str, Tensor],
        num_entities: int,
        num_relations: int,
        entity_names: Sequence[str] | None = None,
        relation_names: Sequence[str] | None = None,
        name: str = "",
    ) -> None:
        self.name = name
        self.num_entities = check_integer(num_entities, "num_entities", low=0)
        self.num_relations = check_integer(num_relations, "num_relations", low=0)
        if entity_names is not None and len(entity_names) != self.num_entities:
            raise ValueError(
                f"`entity_names` must have `num_entities`={self.num_entities} "
                f"items (got {len(entity_names)})"
            )
        if relation_names is not None and len(relation_names) != self.num_relations:
            raise ValueError(
                f"`relation_names` must have `num_relations`={self.num_relations} "
                f"items (got {len(relation_names)})"
            )
        self.entity_names = list(entity_names) if entity_names is not None else None
        self.relation_names = (
            list(relation_names) if relation_names is not None else None
        )
        check_instance(triples, "triples", Mapping)
        order = [s for s in SPLITS if s in triples]
        order += [s for s in triples if s not in SPLITS]
        self.split_names: list[str] = order
        self._triples: dict[str, Tensor] = {}
        for split in order:
            t = check_triples(  # float ids are refused, never truncated
                triples[split],
                f"triples['{split}']",
                num_entities=self.num_entities,
                num_relations=self.num_relations,
            )
            self._triples[split] = t.contiguous()

    # ------------------------------------------------------------------ views
    def triples(self, split: str = "train") -> Triples:
        r"""The ``[n, 3]`` ``(head, relation, tail)`` triples of ``split``."""
        if split not in self._triples:
            raise KeyError(f"Unknown split '{split}' (available: {self.split_names})")
        return self._triples[split]

    def all_triples(self, splits: Sequence[str] | None = None) -> Triples:
        r"""The triples of ``splits`` (default: every split), concatenated."""
        splits = self.split_names if splits is None else list(splits)
        return torch.cat([self.triples(s) for s in splits], dim=0)

    def num_triples(self, split: str | None = None) -> int:
        r"""Number of triples of ``split`` (default: of every split)."""
        if split is None:
            return sum(int(t.size(0)) for t in self._triples.values())
        return int(self.triples(split).size(0))

    def edge_index(self, split: str = "train") -> Tensor:
        r"""The homogeneous ``[2, n]`` edge index (head → tail) of ``split``."""
        return self.triples(split)[:, [0, 2]].t().contiguous()

    def edge_type(self, split: str = "train") -> Tensor:
        r"""The ``[n]`` relation ids of ``split`` (aligned with :meth:`edge_index`)."""
        return self.triples(split)[:, 1].contiguous()

    @cached_property
    def entity_to_id(self) -> dict[str, int]:
        r"""Entity name → id (needs :attr:`entity_names`)."""
        if self.entity_names is None:
            raise ValueError(f"{self!r} has no entity names")
        return {n: i for i, n in enumerate(self.entity_names)}

    @cached_property
    def relation_to_id(self) -> dict[str, int]:
        r"""Relation name → id (needs :attr:`relation_names`)."""
        if self.relation_names is None:
            raise ValueError(f"{self!r} has no relation names")
        return {n: i for i, n in enumerate(self.relation_names)}

    @cached_property
    def data(self) -> HeteroData:
        r"""The backing :class:`~torch_geometric.data.HeteroData` (built once)."""
        data = HeteroData()
        data[ENTITY].num_nodes = self.num_entities
        all_t = self.all_triples()
        split = (
            torch.cat(
                [
                    torch.full((self.num_triples(s),), i, dtype=torch.uint8)
                    for i, s in enumerate(self.split_names)
                ]
            )
            if self.split_names
            else torch.empty(0, dtype=torch.uint8)
        )
        data.edge_index = all_t[:, [0, 2]].t().contiguous()
        data.edge_type = all_t[:, 1].contiguous()
        data.split = split
        data.split_names = list(self.split_names)
        # Group by relation with one stable sort, then slice per relation.
        order = torch.sort(all_t[:, 1], stable=True).indices
        counts = torch.bincount(all_t[:, 1], minlength=self.num_relations).tolist()
        sorted_t, sorted_split = all_t[order], split[order]
        offset = 0
        for r, c in enumerate(counts):
            rel_name = self.relation_names[r] if self.relation_names else str(r)
            store = data[ENTITY, rel_name, ENTITY]
            chunk = sorted_t[offset : offset + c]
            store.edge_index = chunk[:, [0, 2]].t().contiguous()
            store.split = sorted_split[offset : offset + c]
            offset += c
        return data

    # ------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        r"""A plain, ``torch.save``-able representation."""
        return {
            "name": self.name,
            "num_entities": self.num_entities,
            "num_relations": self.num_relations,
            "entity_names": self.entity_names,
            "relation_names": self.relation_names,
            "triples": {s: self._triples[s] for s in self.split_names},
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> KnowledgeGraph:
        r"""Inverse of :meth:`to_dict`."""
        return cls(
            d["triples"],
            num_entities=d["num_entities"],
            num_relations=d["num_relations"],
            entity_names=d.get("entity_names"),
            relation_names=d.get("relation_names"),
            name=d.get("name", ""),
        )

    def save(self, path: str | os.PathLike[str]) -> None:
        r"""Writes the graph to ``path`` atomically (temp file, then rename)."""
        atomic_torch_save(self.to_dict(), path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> KnowledgeGraph:
        r"""Reads a graph written by :meth:`save`."""
        return cls.from_dict(torch.load(path, weights_only=True))

    # ----------------------------------------------------------------- dunder
    def stats(self) -> dict[str, Any]:
        r"""``{"entities", "relations", "triples": {split: n}}``."""
        return {
            "entities": self.num_entities,
            "relations": self.num_relations,
            "triples": {s: self.num_triples(s) for s in self.split_names},
        }

    def __repr__(self) -> str:
        splits = ", ".join(f"{s}={self.num_triples(s)}" for s in self.split_names)
        name = f"'{self.name}', " if self.name else ""
        return (
            f"{self.__class__.__name__}({name}entities={self.num_entities}, "
            f"relations={self.num_relations}, {splits})"
        )


__all__ = ["KnowledgeGraph", "ENTITY"]
