r"""RDF client shards: what one party holds after partitioning an RDF graph."""

from __future__ import annotations

import json
import os
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from fedgraph.data.io import atomic_torch_save, atomic_write_json
from fedgraph.data.rdf_graph import RDFGraph


@dataclass
class RDFShard:
    r"""One client's share of a federated RDF graph.

    Args:
        client_id (int): the client's index in its :class:`FederatedRDF`.
        graph (RDFGraph): the client's sub-graph in *local* node ids
            ``0 … n_local - 1`` (relation, category and class ids stay global),
            with its own ``train_mask``/``valid_mask``/``test_mask``.
        node_ids (Tensor): ``[n_local]`` local → global node id (sorted).
    """

    client_id: int
    graph: RDFGraph
    node_ids: Tensor

    def __post_init__(self) -> None:
        self.node_ids = torch.as_tensor(self.node_ids, dtype=torch.long)
        if self.node_ids.numel() != self.graph.num_nodes:
            raise ValueError(
                f"Client {self.client_id}: `node_ids` has {self.node_ids.numel()} "
                f"items but the graph has {self.graph.num_nodes} nodes"
            )

    @property
    def num_nodes(self) -> int:
        return self.graph.num_nodes

    @property
    def num_edges(self) -> int:
        return self.graph.num_edges

    def stats(self) -> dict[str, Any]:
        r"""``{"nodes", "edges", "relations", "labelled": {"train", "valid",
        "test"}}`` (``relations``: predicates with at least one edge)."""
        g = self.graph
        return {
            "nodes": g.num_nodes,
            "edges": g.num_edges,
            "relations": int(torch.unique(g.edge_type).numel()),
            "labelled": {
                "train": int(g.train_mask.sum()),
                "valid": int(g.valid_mask.sum()),
                "test": int(g.test_mask.sum()),
            },
        }

    def __repr__(self) -> str:
        return f"RDFShard(client={self.client_id}, {self.graph!r})"


@dataclass
class FederatedRDF:
    r"""A federated RDF graph: client shards over one global node, relation and
    class vocabulary.

    Args:
        shards (list[RDFShard]): one per client, ``shards[i].client_id == i``.
        num_nodes (int): number of nodes of the source graph.
        num_relations (int): number of predicates of the source graph.
        num_classes (int): number of classes.
        meta (dict): provenance (partitioner, arguments, seed, source
            checksum, library version).
    """

    shards: list[RDFShard]
    num_nodes: int
    num_relations: int
    num_classes: int
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def num_clients(self) -> int:
        return len(self.shards)

    def __len__(self) -> int:
        return len(self.shards)

    def __getitem__(self, i: int) -> RDFShard:
        return self.shards[i]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.shards)

    def stats(self) -> dict[str, Any]:
        r"""Per-client statistics plus the mean and (sample) standard deviation
        of nodes and edges over clients, as FedAlign's Table 3 reports them."""
        clients = [s.stats() for s in self.shards]
        out: dict[str, Any] = {"clients": clients}
        for key in ("nodes", "edges"):
            vals = [c[key] for c in clients]
            out[key] = {
                "mean": statistics.fmean(vals),
                "std": statistics.stdev(vals) if len(vals) > 1 else 0.0,
            }
        return out

    def save(self, path: str | os.PathLike[str]) -> None:
        r"""Writes ``path/clientK/graph.pt`` (+ ``node_ids``) and
        ``path/META.json``; every file is written atomically and ``META.json``
        last, so a folder without it is a partial write."""
        path = Path(path)
        for s in self.shards:
            folder = path / f"client{s.client_id}"
            s.graph.save(folder / "graph.pt")
            atomic_torch_save(s.node_ids, folder / "node_ids.pt")
        meta = dict(
            self.meta,
            kind="rdf",
            num_clients=self.num_clients,
            num_nodes=self.num_nodes,
            num_relations=self.num_relations,
            num_classes=self.num_classes,
        )
        atomic_write_json(path / "META.json", meta, indent=2, sort_keys=True)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> FederatedRDF:
        r"""Reads a folder written by :meth:`save`.

        Raises:
            ValueError: if ``META.json`` or a client's files are missing or
                unreadable (a corrupt or partial folder).
        """
        path = Path(path)
        try:
            meta = json.loads((path / "META.json").read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(
                f"'{path}' is not a complete RDF partition: {exc}"
            ) from exc
        num_clients = int(meta["num_clients"])
        extra = sorted(
            d.name
            for d in path.glob("client*")
            if d.is_dir() and d.name[6:].isdigit() and int(d.name[6:]) >= num_clients
        )
        if extra:
            raise ValueError(
                f"`{path}`: META.json lists {num_clients} clients (`num_clients`) "
                f"but the folder also holds {', '.join(e + '/' for e in extra)}"
            )
        shards = []
        for i in range(num_clients):
            folder = path / f"client{i}"
            try:
                graph = RDFGraph.load(folder / "graph.pt")
                node_ids = torch.load(folder / "node_ids.pt", weights_only=True)
            except Exception as exc:  # noqa: BLE001 - reported with the path
                raise ValueError(f"Client folder '{folder}' is corrupt: {exc}") from exc
            shards.append(RDFShard(i, graph, node_ids))
        return cls(
            shards, meta["num_nodes"], meta["num_relations"], meta["num_classes"], meta
        )

    def __repr__(self) -> str:
        return (
            f"FederatedRDF(clients={self.num_clients}, nodes={self.num_nodes}, "
            f"relations={self.num_relations}, classes={self.num_classes})"
        )


__all__ = ["RDFShard", "FederatedRDF"]


# ----------------------------------------------- the shared partition format
def _write_rdf(fed: FederatedRDF, folder: Path) -> dict[str, Any]:
    for s in fed.shards:
        s.graph.save(folder / f"client{s.client_id}" / "graph.pt")
        torch.save(s.node_ids, folder / f"client{s.client_id}" / "node_ids.pt")
    return {
        "num_nodes": fed.num_nodes,
        "num_relations": fed.num_relations,
        "num_classes": fed.num_classes,
        "clients": [
            {"dir": f"client{s.client_id}", "nodes": s.num_nodes, "edges": s.num_edges}
            for s in fed.shards
        ],
    }


def _read_rdf(folder: Path, meta: dict[str, Any]) -> FederatedRDF:
    from fedgraph.partition.io import PartitionFormatError

    shards = []
    for i, c in enumerate(meta["clients"]):
        cdir = folder / c["dir"]
        try:
            shard = RDFShard(
                i,
                RDFGraph.load(cdir / "graph.pt"),
                torch.load(cdir / "node_ids.pt", weights_only=True),
            )
        except Exception as exc:  # noqa: BLE001 - reported with the folder
            raise PartitionFormatError(f"{cdir}: {exc}") from exc
        if (shard.num_nodes, shard.num_edges) != (c["nodes"], c["edges"]):
            raise PartitionFormatError(f"{cdir}: sizes differ from META.json")
        shards.append(shard)
    keep = (
        "num_nodes",
        "num_relations",
        "num_classes",
        "clients",
        "files",
        "format",
        "format_version",
        "kind",
    )
    return FederatedRDF(
        shards,
        meta["num_nodes"],
        meta["num_relations"],
        meta["num_classes"],
        {k: v for k, v in meta.items() if k not in keep},
    )


def _describe_rdf(fed: FederatedRDF) -> dict[str, Any]:
    return fed.stats()


def _register() -> None:
    from fedgraph.partition.io import PartitionKind, register_kind
    from fedgraph.partition.stats import register_describer

    register_kind(PartitionKind("rdf", FederatedRDF, _write_rdf, _read_rdf))
    register_describer(FederatedRDF, _describe_rdf)


_register()
