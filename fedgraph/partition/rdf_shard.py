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

from fedgraph.data.io import atomic_torch_save, atomic_write_json, atomic_write_text
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
        r"""Writes each client's own folder (:func:`write_rdf_client`), the
        simulation's view (``path/relations.txt``, ``path/ids/clientK/``)
        and ``path/META.json``; every file is written atomically and
        ``META.json`` last, so a folder without it is a partial write."""
        path = Path(path)
        write_rdf_clients(self, path)
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
            try:
                shards.append(read_rdf_shard(path, i))
            except Exception as exc:  # noqa: BLE001 - reported with the path
                raise ValueError(
                    f"Client folder '{path / f'client{i}'}' is corrupt: {exc}"
                ) from exc
        return cls(
            shards, meta["num_nodes"], meta["num_relations"], meta["num_classes"], meta
        )

    def __repr__(self) -> str:
        return (
            f"FederatedRDF(clients={self.num_clients}, nodes={self.num_nodes}, "
            f"relations={self.num_relations}, classes={self.num_classes})"
        )


# ------------------------------------------------- a client's own folder
def own_graph(graph: RDFGraph) -> tuple[RDFGraph, Tensor]:
    r"""``graph`` with only the predicates its statements use, in their own
    ids (the order of the global ids, so of the sorted predicate URIs, which
    is also the sorted order of the client's own names), and ``[R_own]`` the
    global id of each."""
    used = torch.unique(graph.edge_type)
    local = torch.full((graph.num_relations,), -1, dtype=torch.long)
    local[used] = torch.arange(used.numel())
    d = graph.to_dict()
    d["edge_type"] = local[graph.edge_type]
    d["relation_names"] = [graph.relation_names[r] for r in used.tolist()]
    return RDFGraph.from_dict(d), used


def own_shard(shard: RDFShard) -> RDFShard:
    r"""``shard`` as its organisation holds it: its graph with only its own
    predicates (:func:`own_graph`)."""
    return RDFShard(shard.client_id, own_graph(shard.graph)[0], shard.node_ids)


def write_rdf_clients(fed: FederatedRDF, path: Path) -> list[dict[str, Any]]:
    r"""Writes every client's own folder ``path/clientK/`` (``graph.pt``: its
    nodes and its own predicates, nothing global; ``META.json``: the client
    format of :mod:`fedgraph.partition.io` with its checksum) and the
    simulation's view: ``path/relations.txt`` (the global predicates) and
    ``path/ids/clientK/`` (``node_ids.pt``, ``relation_ids.pt``: the global
    id of each local node and predicate). Returns each client's entry of
    the partition's ``clients`` list."""
    from fedgraph.partition.io import write_client_meta

    names = fed.shards[0].graph.relation_names if fed.shards else []
    atomic_write_text(path / "relations.txt", "".join(f"{n}\n" for n in names))
    entries = []
    for s in fed.shards:
        cdir, ids = path / f"client{s.client_id}", path / "ids" / f"client{s.client_id}"
        graph, relation_ids = own_graph(s.graph)
        graph.save(cdir / "graph.pt")
        atomic_torch_save(s.node_ids, ids / "node_ids.pt")
        atomic_torch_save(relation_ids, ids / "relation_ids.pt")
        entry = {"dir": cdir.name, "nodes": s.num_nodes, "edges": s.num_edges}
        write_client_meta(
            cdir, s.client_id, fed.num_clients, fed.meta, kind="rdf",
            nodes=s.num_nodes, edges=s.num_edges, num_relations=graph.num_relations,
            num_classes=graph.num_classes, splits=s.stats()["labelled"],
        )  # fmt: skip
        entries.append(entry)
    return entries


def read_rdf_shard(path: Path, i: int) -> RDFShard:
    r"""Client ``i`` of the partition folder ``path`` in global ids: its own
    folder mapped back through ``ids/client{i}/`` and ``relations.txt``."""
    cdir, ids = path / f"client{i}", path / "ids" / f"client{i}"
    if (cdir / "node_ids.pt").exists():
        raise ValueError(
            f"`{cdir}` holds global node ids (`node_ids.pt`): an RDF partition "
            "of an older fedgraph; write it again with `fedgraph partition`"
        )
    graph = RDFGraph.load(cdir / "graph.pt")
    relation_ids = torch.load(ids / "relation_ids.pt", weights_only=True)
    d = graph.to_dict()
    d["edge_type"] = relation_ids[graph.edge_type]
    d["relation_names"] = (path / "relations.txt").read_text().split("\n")[:-1]
    node_ids = torch.load(ids / "node_ids.pt", weights_only=True)
    return RDFShard(i, RDFGraph.from_dict(d), node_ids)


def load_rdf_client_folder(path: str | os.PathLike[str]) -> RDFShard:
    r"""One organisation's RDF client folder, read alone: its shard with its
    own nodes and predicates (``node_ids`` maps each local node to itself:
    the client knows no global id), validated by the folder's own
    ``META.json`` (format, version, checksum, sizes); the partition around
    it is never opened.

    Args:
        path (str or PathLike): the client folder (``DIR/clientK`` of an RDF
            partition, or a copy of it).
    """
    from fedgraph.partition.io import PartitionFormatError, read_client_meta

    path = Path(path)
    meta = read_client_meta(path)
    if meta.get("kind") != "rdf":
        raise PartitionFormatError(
            f"`{path}` is not an RDF client folder (`kind` {meta.get('kind')!r}, "
            "expected 'rdf')"
        )
    try:
        graph = RDFGraph.load(path / "graph.pt")
    except Exception as exc:  # noqa: BLE001 - reported with the folder
        raise PartitionFormatError(f"{path / 'graph.pt'}: {exc}") from exc
    if (graph.num_nodes, graph.num_edges) != (meta.get("nodes"), meta.get("edges")):
        raise PartitionFormatError(f"{path}: sizes differ from META.json")
    return RDFShard(int(meta["client"]), graph, torch.arange(graph.num_nodes))


__all__ = [
    "RDFShard",
    "FederatedRDF",
    "own_graph",
    "own_shard",
    "write_rdf_clients",
    "read_rdf_shard",
    "load_rdf_client_folder",
]


# ----------------------------------------------- the shared partition format
def _write_rdf(fed: FederatedRDF, folder: Path) -> dict[str, Any]:
    return {
        "num_nodes": fed.num_nodes,
        "num_relations": fed.num_relations,
        "num_classes": fed.num_classes,
        "clients": write_rdf_clients(fed, folder),
    }


def _read_rdf(folder: Path, meta: dict[str, Any]) -> FederatedRDF:
    from fedgraph.partition.io import PartitionFormatError

    shards = []
    for i, c in enumerate(meta["clients"]):
        try:
            shard = read_rdf_shard(folder, i)
        except Exception as exc:  # noqa: BLE001 - reported with the folder
            raise PartitionFormatError(f"{folder / c['dir']}: {exc}") from exc
        if (shard.num_nodes, shard.num_edges) != (c["nodes"], c["edges"]):
            raise PartitionFormatError(
                f"{folder / c['dir']}: sizes differ from META.json"
            )
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
