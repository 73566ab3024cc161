r"""The RDF entity-classification graph type (AIFB, MUTAG, BGS, AM)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import Data, HeteroData

from fedgraph.data.io import atomic_torch_save

MASKS = ("train_mask", "valid_mask", "test_mask")


class RDFGraph:
    r"""An RDF graph for entity classification, backed by PyG
    :class:`~torch_geometric.data.HeteroData`.

    Every subject and object of the RDF graph is a node (URIs, literals and
    blank nodes, as PyG's ``Entities`` counts them); every distinct
    ``(subject, predicate, object)`` statement is one directed edge
    ``subject → object`` typed by its predicate. Node ids follow the sorted
    N-Triples spelling of the terms (``<uri>``, ``"literal"^^<type>``,
    ``_:label``) and relation ids the sorted predicate URIs, so they are the
    same on every run.

    Two views are offered:

    * :attr:`data` (typed view): one node type per *category* (the rule of
      DGL's RDF loaders, see ``docs/rdf.md``) holding ``node_id`` (global id),
      ``y`` and the masks; one edge type
      ``(src_category, predicate, dst_category)`` per combination present.
    * :meth:`homogeneous` (what :class:`~torch_geometric.nn.conv.RGCNConv`
      wants): ``edge_index`` with every statement in both directions,
      ``edge_type`` :math:`2r` for ``s → o`` and :math:`2r + 1` for its
      inverse (as PyG's ``Entities``), ``num_nodes`` and ``node_type``.

    Args:
        edge_index (Tensor): ``[2, E]`` subject → object node ids.
        edge_type (Tensor): ``[E]`` predicate ids.
        node_type (Tensor): ``[N]`` category id of each node.
        y (Tensor): ``[N]`` class id, ``-1`` for unlabelled nodes.
        masks (Mapping[str, Tensor]): ``train_mask``, ``valid_mask`` and
            ``test_mask``, each ``[N]`` boolean (disjoint).
        node_names (Sequence[str]): N-Triples spelling of each node.
        relation_names (Sequence[str]): URI of each predicate.
        node_type_names (Sequence[str]): name of each category.
        class_names (Sequence[str]): name of each class.
        core_types (Sequence[str], optional): the categories DGL's loader keeps
            (the others, e.g. ``SCHEMA`` or ``_BNode`` for AIFB, are nodes DGL
            drops); the type-sampling partitioner draws from these.
            (default: all categories)
        name (str, optional): dataset name. (default: :obj:`""`)
    """

    def __init__(
        self,
        edge_index: Tensor,
        edge_type: Tensor,
        node_type: Tensor,
        y: Tensor,
        masks: Mapping[str, Tensor],
        node_names: Sequence[str],
        relation_names: Sequence[str],
        node_type_names: Sequence[str],
        class_names: Sequence[str],
        core_types: Sequence[str] | None = None,
        name: str = "",
    ) -> None:
        self.name = name
        self.edge_index = torch.as_tensor(edge_index, dtype=torch.long)
        self.edge_type = torch.as_tensor(edge_type, dtype=torch.long)
        self.node_type = torch.as_tensor(node_type, dtype=torch.long)
        self.y = torch.as_tensor(y, dtype=torch.long)
        self.node_names = list(node_names)
        self.relation_names = list(relation_names)
        self.node_type_names = list(node_type_names)
        self.class_names = list(class_names)
        self.core_types = list(core_types or node_type_names)
        self._check_shapes()
        self.masks = self._checked_masks(masks)

    def _check_shapes(self) -> None:
        r"""Edges, node types and labels must fit the nodes and categories."""
        n = len(self.node_names)
        if self.edge_index.dim() != 2 or self.edge_index.size(0) != 2:
            raise ValueError(
                f"`edge_index` must have shape [2, E] (got {tuple(self.edge_index.shape)})"
            )
        if self.edge_type.numel() != self.edge_index.size(1):
            raise ValueError(
                f"`edge_type` must have one entry per edge "
                f"(got {self.edge_type.numel()} for {self.edge_index.size(1)} edges)"
            )
        if self.edge_index.numel() and int(self.edge_index.max()) >= n:
            raise ValueError(
                f"`edge_index` names node {int(self.edge_index.max())} but only "
                f"{n} `node_names` were given"
            )
        for key, t in (("node_type", self.node_type), ("y", self.y)):
            if t.numel() != n:
                raise ValueError(f"`{key}` must have {n} entries (got {t.numel()})")
        unknown = set(self.core_types) - set(self.node_type_names)
        if unknown:
            raise ValueError(f"`core_types` names unknown categories {sorted(unknown)}")

    def _checked_masks(self, masks: Mapping[str, Tensor]) -> dict[str, Tensor]:
        r"""The split masks (missing ones empty): one entry per node, labelled
        nodes only, disjoint."""
        n = len(self.node_names)
        out: dict[str, Tensor] = {}
        for key in MASKS:
            m = masks.get(key, torch.zeros(n, dtype=torch.bool))
            m = torch.as_tensor(m, dtype=torch.bool)
            if m.numel() != n:
                raise ValueError(f"`{key}` must have {n} entries (got {m.numel()})")
            if bool((self.y[m] < 0).any()):
                raise ValueError(f"`{key}` selects a node without a label")
            out[key] = m
        overlap = (
            out["train_mask"].int() + out["valid_mask"].int() + out["test_mask"].int()
        )
        if bool((overlap > 1).any()):
            raise ValueError(
                "`train_mask`, `valid_mask` and `test_mask` must be disjoint"
            )
        return out

    # ---------------------------------------------------------------- sizes
    @property
    def num_nodes(self) -> int:
        return len(self.node_names)

    @property
    def num_edges(self) -> int:
        r"""Number of RDF statements (inverse edges not counted)."""
        return int(self.edge_index.size(1))

    @property
    def num_relations(self) -> int:
        r"""Number of predicates (the homogeneous view has twice as many)."""
        return len(self.relation_names)

    @property
    def num_classes(self) -> int:
        return len(self.class_names)

    @property
    def train_mask(self) -> Tensor:
        return self.masks["train_mask"]

    @property
    def valid_mask(self) -> Tensor:
        return self.masks["valid_mask"]

    @property
    def test_mask(self) -> Tensor:
        return self.masks["test_mask"]

    @property
    def labelled_mask(self) -> Tensor:
        return self.y >= 0

    # ---------------------------------------------------------------- views
    def homogeneous(self) -> Data:
        r"""The homogeneous view with inverse edges (PyG ``Entities`` layout).

        Returns:
            Data: ``edge_index`` ``[2, 2E]`` (statements, then their inverses),
            ``edge_type`` ``[2E]`` (:math:`2r`, then :math:`2r + 1`),
            ``num_nodes``, ``node_type``, ``y`` and the three masks.
        """
        ei = self.edge_index
        edge_index = torch.cat([ei, ei.flip(0)], dim=1)
        edge_type = torch.cat([2 * self.edge_type, 2 * self.edge_type + 1])
        return Data(
            edge_index=edge_index,
            edge_type=edge_type,
            num_nodes=self.num_nodes,
            node_type=self.node_type,
            y=self.y,
            **self.masks,
        )

    @cached_property
    def data(self) -> HeteroData:
        r"""The typed view (built once); see the class docstring."""
        data = HeteroData()
        num_types = len(self.node_type_names)
        order = torch.sort(self.node_type, stable=True).indices
        counts = torch.bincount(self.node_type, minlength=num_types)
        local = torch.empty_like(self.node_type)
        local[order] = torch.cat([torch.arange(int(c)) for c in counts.tolist()])
        offset = 0
        for t, name in enumerate(self.node_type_names):
            ids = order[offset : offset + int(counts[t])]
            offset += int(counts[t])
            store = data[name]
            store.num_nodes = ids.numel()
            store.node_id = ids
            store.y = self.y[ids]
            for key, m in self.masks.items():
                store[key] = m[ids]
        src, dst = self.edge_index
        st, dt = self.node_type[src], self.node_type[dst]
        key = (st * self.num_relations + self.edge_type) * num_types + dt
        uniq, inv = torch.unique(key, return_inverse=True)
        perm = torch.sort(inv, stable=True).indices
        sizes = torch.bincount(inv, minlength=uniq.numel()).tolist()
        offset = 0
        for k, size in zip(uniq.tolist(), sizes, strict=True):
            idx = perm[offset : offset + size]
            offset += size
            d, rest = k % num_types, k // num_types
            r, s = rest % self.num_relations, rest // self.num_relations
            edge_key = (
                self.node_type_names[s],
                self.relation_names[r],
                self.node_type_names[d],
            )
            data[edge_key].edge_index = torch.stack([local[src[idx]], local[dst[idx]]])
        return data

    def category_counts(self) -> dict[str, int]:
        r"""Number of nodes of each category."""
        counts = torch.bincount(self.node_type, minlength=len(self.node_type_names))
        return dict(zip(self.node_type_names, counts.tolist(), strict=True))

    @property
    def target_types(self) -> list[str]:
        r"""The categories of the labelled nodes (one for AIFB/MUTAG)."""
        ids = torch.unique(self.node_type[self.labelled_mask]).tolist()
        return [self.node_type_names[i] for i in ids]

    # ------------------------------------------------------------- subgraphs
    def subgraph(
        self, node_ids: Tensor, masks: Mapping[str, Tensor] | None = None
    ) -> RDFGraph:
        r"""The sub-graph induced by ``node_ids`` (an edge is kept when both its
        ends are kept), in local ids ``0 … len(node_ids) - 1`` following the
        sorted global ids. Relation, category and class vocabularies are kept
        global.

        Args:
            node_ids (Tensor): global ids of the nodes to keep.
            masks (Mapping[str, Tensor], optional): masks over the *global*
                nodes to use instead of this graph's (e.g. to give a client only
                its share of the training nodes). (default: :obj:`None`)
        """
        node_ids = torch.unique(torch.as_tensor(node_ids, dtype=torch.long))
        keep = torch.zeros(self.num_nodes, dtype=torch.bool)
        keep[node_ids] = True
        remap = torch.full((self.num_nodes,), -1, dtype=torch.long)
        remap[node_ids] = torch.arange(node_ids.numel())
        emask = keep[self.edge_index[0]] & keep[self.edge_index[1]]
        masks = self.masks if masks is None else masks
        return RDFGraph(
            remap[self.edge_index[:, emask]],
            self.edge_type[emask],
            self.node_type[node_ids],
            self.y[node_ids],
            {
                k: torch.as_tensor(masks[k], dtype=torch.bool)[node_ids]
                for k in MASKS
                if k in masks
            },
            [self.node_names[i] for i in node_ids.tolist()],
            self.relation_names,
            self.node_type_names,
            self.class_names,
            core_types=self.core_types,
            name=self.name,
        )

    def with_valid_split(self, valid_ratio: float, seed: int = 0) -> RDFGraph:
        r"""A copy whose ``valid_mask`` holds ``round(valid_ratio * n_train)``
        training nodes drawn with ``seed`` (taken out of ``train_mask``). The
        current validation nodes are first returned to training."""
        if not 0.0 <= valid_ratio < 1.0:
            raise ValueError(f"`valid_ratio` must be in [0, 1) (got {valid_ratio})")
        pool = (self.train_mask | self.valid_mask).nonzero().view(-1)
        g = torch.Generator().manual_seed(seed)
        n_valid = round(valid_ratio * pool.numel())
        chosen = pool[torch.randperm(pool.numel(), generator=g)[:n_valid]]
        valid = torch.zeros(self.num_nodes, dtype=torch.bool)
        valid[chosen] = True
        train = torch.zeros(self.num_nodes, dtype=torch.bool)
        train[pool] = True
        train &= ~valid
        d = self.to_dict()
        d["masks"] = {
            "train_mask": train,
            "valid_mask": valid,
            "test_mask": self.test_mask,
        }
        return RDFGraph.from_dict(d)

    # ----------------------------------------------------------- persistence
    def to_dict(self) -> dict[str, Any]:
        r"""A plain, ``torch.save``-able representation."""
        return {
            "name": self.name,
            "edge_index": self.edge_index,
            "edge_type": self.edge_type,
            "node_type": self.node_type,
            "y": self.y,
            "masks": dict(self.masks),
            "node_names": self.node_names,
            "relation_names": self.relation_names,
            "node_type_names": self.node_type_names,
            "class_names": self.class_names,
            "core_types": self.core_types,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RDFGraph:
        r"""Inverse of :meth:`to_dict`."""
        return cls(
            d["edge_index"],
            d["edge_type"],
            d["node_type"],
            d["y"],
            d["masks"],
            d["node_names"],
            d["relation_names"],
            d["node_type_names"],
            d["class_names"],
            core_types=d.get("core_types"),
            name=d.get("name", ""),
        )

    def save(self, path: str | os.PathLike[str]) -> None:
        r"""Writes the graph to ``path`` atomically (temp file, then rename)."""
        atomic_torch_save(self.to_dict(), path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> RDFGraph:
        r"""Reads a graph written by :meth:`save`."""
        return cls.from_dict(torch.load(path, weights_only=True))

    def checksum(self) -> str:
        r"""SHA-256 of the graph's content (edges, labels, masks, names)."""
        h = hashlib.sha256()
        for t in (
            self.edge_index,
            self.edge_type,
            self.node_type,
            self.y,
            *(self.masks[k] for k in MASKS),
        ):
            h.update(t.contiguous().numpy().tobytes())
        for names in (
            self.node_names,
            self.relation_names,
            self.node_type_names,
            self.class_names,
        ):
            h.update("\n".join(names).encode())
            h.update(b"\0")
        return h.hexdigest()

    def stats(self) -> dict[str, Any]:
        r"""``{"nodes", "triples", "predicates", "classes", "labelled":
        {"train", "valid", "test"}, "categories": {name: count}}``."""
        return {
            "nodes": self.num_nodes,
            "triples": self.num_edges,
            "predicates": self.num_relations,
            "classes": self.num_classes,
            "labelled": {
                "train": int(self.train_mask.sum()),
                "valid": int(self.valid_mask.sum()),
                "test": int(self.test_mask.sum()),
            },
            "categories": self.category_counts(),
        }

    def __repr__(self) -> str:
        name = f"'{self.name}', " if self.name else ""
        return (
            f"{self.__class__.__name__}({name}nodes={self.num_nodes}, "
            f"triples={self.num_edges}, predicates={self.num_relations}, "
            f"classes={self.num_classes}, train={int(self.train_mask.sum())}, "
            f"valid={int(self.valid_mask.sum())}, test={int(self.test_mask.sum())})"
        )


__all__ = ["RDFGraph", "MASKS"]
