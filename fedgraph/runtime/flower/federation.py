r"""The data a SuperNode reads: the whole federated KGE dataset the run
config names (its ``data`` key, the simulation's view), or, when the node
config names the node's own client folder (``data-dir``), that folder alone.
Read on a SuperNode to build its client (:mod:`~fedgraph.runtime.flower.client_app`)
and to answer the alignment request (:mod:`~fedgraph.runtime.flower.alignment`).

A node with its own folder holds one organisation's KG: its names, its
triples in its own ids, no global id and no global vocabulary
(:func:`~fedgraph.partition.io.load_client_folder`); it opens nothing else
and aligns with the other nodes by keyed hashes of its names.

The read-only data is cached per process: it never changes during a run, so
a cache can only save reloading it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: node-config key: the node's own client folder (``DIR/clientK`` of a
#: partition, or a copy of it).
DATA_DIR = "data-dir"


@functools.lru_cache(maxsize=2)
def load_federation(data: str) -> Any:
    r"""The :class:`~fedgraph.data.shard.FederatedKG` named by the run
    config's ``data`` (a registered name or a partition folder)."""
    from fedgraph.data import load_dataset
    from fedgraph.data.shard import FederatedKG

    fed = load_dataset(Path(data) if Path(data).is_dir() else data)
    if not isinstance(fed, FederatedKG):
        raise ValueError(
            f"Run-config key `data` must name a federated dataset or partition "
            f"folder (got {data!r}, a {type(fed).__name__}); partition it with "
            "`fedgraph partition DATASET --clients K --out DIR`."
        )
    return fed


@functools.lru_cache(maxsize=2)
def load_own_folder(path: str) -> Any:
    r"""The node's own client folder, read alone
    (:func:`~fedgraph.partition.io.load_client_folder`), with its
    ``META.json``."""
    from fedgraph.partition.io import load_client_folder, read_client_meta

    return load_client_folder(path), read_client_meta(path)


@dataclass(frozen=True)
class NodeData:
    r"""What a node holds: its shard and the sizes it may know.

    Attributes:
        shard (KGShard): the node's client shard.
        num_clients (int): the federation's number of clients.
        num_entities (int): the global vocabulary size (the shard's own
            size when the node holds only its own folder).
        num_relations (int): likewise for relations.
        entity_names (list[str], optional): names indexed by the shard's
            ``entity_ids``.
        relation_names (list[str], optional): names indexed by the shard's
            ``relation_ids``.
        own_folder (bool): whether the node holds only its own folder
            (its ids are its own: keyed-name alignment is required).
    """

    shard: Any
    num_clients: int
    num_entities: int
    num_relations: int
    entity_names: list[str] | None
    relation_names: list[str] | None
    own_folder: bool


def own_data_dir(node_config: Mapping[str, Any]) -> str | None:
    r"""The node config's ``data-dir`` (the node's own client folder), or
    ``None`` when it names none."""
    value = node_config.get(DATA_DIR) if hasattr(node_config, "get") else None
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ValueError(
            f"Node-config key `{DATA_DIR}` must name the node's client folder "
            f"(got {value!r})"
        )
    return value


def check_partition_id(
    node_config: Mapping[str, Any], own: str, client_id: int, num_clients: int
) -> None:
    r"""A node holding its own client folder ``own`` (client ``client_id`` of
    ``num_clients``): its ``partition-id``, when the node config gives one,
    must be that client."""
    from fedgraph.runtime.flower.config import partition_id

    if "partition-id" in node_config:
        cid = partition_id(node_config, num_clients)
        if cid != client_id:
            raise ValueError(
                f"Node-config key `partition-id` is {cid} but `{DATA_DIR}` "
                f"{own} holds client {client_id}"
            )


def node_data(data: str, node_config: Mapping[str, Any]) -> NodeData:
    r"""The node's data: its own client folder when the node config names
    one (``data-dir``; the run config's ``data`` is then never opened), else
    its shard of the run config's ``data``; the node's ``partition-id``, when
    given, must be the folder's client."""
    from fedgraph.runtime.flower.config import partition_id

    own = own_data_dir(node_config)
    if own is None:
        fed = load_federation(data)
        shard = fed.shards[partition_id(node_config, fed.num_clients)]
        return NodeData(
            shard, fed.num_clients, fed.num_entities, fed.num_relations,
            fed.entity_names, fed.relation_names, own_folder=False,
        )  # fmt: skip
    shard, meta = load_own_folder(own)
    num_clients = int(meta["num_clients"])
    check_partition_id(node_config, own, shard.client_id, num_clients)
    return NodeData(
        shard, num_clients, shard.num_entities, shard.num_relations,
        shard.graph.entity_names, shard.graph.relation_names, own_folder=True,
    )  # fmt: skip


__all__ = [
    "DATA_DIR",
    "NodeData",
    "load_federation",
    "load_own_folder",
    "own_data_dir",
    "check_partition_id",
    "node_data",
]
