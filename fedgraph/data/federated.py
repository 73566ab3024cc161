r"""The federated layout of per-client folders → :class:`FederatedKG`.

Layout (the FedLU partitions)::

    PART/client0/{train,valid,test}.txt [unlearn.txt]
    PART/client1/...

(folders named ``K`` instead of ``clientK``, as in FedLU's own repository,
are accepted too). A folder with a ``META.json`` is a partition saved by
:func:`fedgraph.partition.save_partition` and is read by
:func:`fedgraph.partition.load_partition` instead. Files are labelled triple files; an ``unlearn.txt`` is
kept as an extra split ``"unlearn"``.

**Id policy.** The *global* vocabulary is built over all clients in
first-seen order: clients by index, and in each client the splits
``train, valid, test, unlearn``, lines in file order, head before tail.
*Local* ids of a client are the ranks of its global ids, so
``shard.entity_ids`` (local → global) is strictly increasing and a global id
is found with ``torch.searchsorted``. The same holds for relations.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import torch

from fedgraph.data.io import factorize
from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.data.shard import FederatedKG, KGShard
from fedgraph.data.triples import (
    Duplicates,
    flag_eval_in_train,
    handle_duplicates,
    order_splits,
    read_labeled_triples,
)
from fedgraph.typing import SPLITS

EXTRA_SPLITS = ("unlearn",)
_CLIENT = re.compile(r"^(?:client)?(\d+)$")
#: a published layout's folder named by its client count (FedLU's ``C3``,
#: ``R10``, ``C5FL``): exactly that many client folders
_NAMED_COUNT = re.compile(r"^[CR](\d+)(?:FL)?$")


def client_folders(path: str | os.PathLike[str]) -> list[Path]:
    r"""The client folders of ``path`` ordered by index; validates that the
    indices are ``0 … K-1`` (a missing one is named), with ``K`` the count in
    the folder's name for FedLU's layouts (``C3``, ``R10``: a deleted last
    client is caught too)."""
    path = Path(path)
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such federated partition folder")
    found: dict[int, Path] = {}
    for child in path.iterdir():
        m = _CLIENT.match(child.name)
        if child.is_dir() and m:
            idx = int(m.group(1))
            if idx in found:
                raise ValueError(
                    f"{path}: two folders for client {idx} "
                    f"({found[idx].name}, {child.name})"
                )
            found[idx] = child
    if not found:
        raise FileNotFoundError(
            f"{path}: no client folders (expected client0/, client1/, …)"
        )
    named = _NAMED_COUNT.match(path.name)
    expected = int(named.group(1)) if named else max(found) + 1
    missing = [i for i in range(expected) if i not in found]
    if missing:
        what = ", ".join(f"client{i}/" for i in missing[:5])
        what += " …" if len(missing) > 5 else ""
        by = f" by the folder's name {path.name!r}" if named else ""
        raise ValueError(
            f"{path}: client folders must be client0/ … client{expected - 1}/ "
            f"({expected} clients{by}); missing {what}"
        )
    if len(found) != expected:
        raise ValueError(
            f"{path}: the folder's name says {expected} clients but it holds "
            f"{len(found)} client folders"
        )
    return [found[i] for i in range(expected)]


def client_files(folder: Path) -> dict[str, Path]:
    r"""``split → file`` for one client folder (``train/valid/test`` required)."""
    files = {s: folder / f"{s}.txt" for s in SPLITS}
    missing = [p.name for p in files.values() if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"{folder}: missing {', '.join(missing)}")
    for extra in EXTRA_SPLITS:
        if (folder / f"{extra}.txt").is_file():
            files[extra] = folder / f"{extra}.txt"
    return files


def _client_shard(
    k: int,
    glob: np.ndarray,
    spans: list[tuple[str, int, int]],
    entity_names: Any,
    relation_names: Any,
    files: dict[str, Path],
    name: str,
    duplicates: Duplicates,
) -> KGShard:
    r"""Client ``k``'s shard: its rows ``glob[a:b]`` of each split's span
    (global ids) renumbered to local ids, duplicates handled per split."""
    rows = np.concatenate([glob[a:b] for _, a, b in spans])
    ent_ids, ent_local = np.unique(rows[:, [0, 2]], return_inverse=True)
    rel_ids, rel_local = np.unique(rows[:, 1], return_inverse=True)
    ent_local = ent_local.reshape(-1, 2)
    local = np.stack([ent_local[:, 0], rel_local.reshape(-1), ent_local[:, 1]], axis=1)
    flag_eval_in_train({s: glob[a:b] for s, a, b in spans}, files)
    triples, start = {}, 0
    for s, a, b in spans:
        part = local[start : start + (b - a)]
        start += b - a
        triples[s] = handle_duplicates(part, duplicates, path=files[s])
    graph = KnowledgeGraph(
        {s: torch.from_numpy(t) for s, t in triples.items()},
        num_entities=len(ent_ids),
        num_relations=len(rel_ids),
        entity_names=[entity_names[i] for i in ent_ids.tolist()],
        relation_names=[relation_names[i] for i in rel_ids.tolist()],
        name=f"{name}/client{k}",
    )
    return KGShard(
        client_id=k,
        graph=graph,
        entity_ids=torch.from_numpy(ent_ids),
        relation_ids=torch.from_numpy(rel_ids),
    )


def load_federated_folder(
    path: str | os.PathLike[str],
    *,
    name: str = "",
    duplicates: Duplicates = "keep",
) -> FederatedKG:
    r"""Reads a folder of per-client triple folders into a :class:`FederatedKG`.

    Args:
        path (str or Path): the partition folder (e.g.
            ``$FEDGRAPH_DATA/fedlu-fb15k-237/C3``).
        name (str, optional): a name for the client graphs and ``meta``.
        duplicates (str, optional): duplicate policy within a client's split,
            see :mod:`fedgraph.data.triples`. (default: :obj:`"keep"`)

    Returns:
        FederatedKG: one :class:`KGShard` per client with local ids, the
        ``entity_ids``/``relation_ids`` maps into the global vocabulary, and
        splits ``train``, ``valid``, ``test`` (+ ``unlearn`` when present).
    """
    path = Path(path)
    if (path / "META.json").is_file():
        # A partition saved by fedgraph (local integer ids + id maps): its
        # own reader; reading its files as names would merge unrelated ids.
        from fedgraph.partition.io import load_partition

        return load_partition(path)
    name = name or path.name
    folders = client_folders(path)
    files = [client_files(f) for f in folders]
    # One flat list of (client, split, names) in the id-policy order.
    parts = [
        (k, s, read_labeled_triples(fs[s]))
        for k, fs in enumerate(files)
        for s in order_splits(fs)
    ]
    stacked = np.concatenate([p[2] for p in parts])
    ent, entity_names = factorize(stacked[:, [0, 2]].reshape(-1))
    rel, relation_names = factorize(stacked[:, 1])
    glob = np.stack([ent[0::2], rel, ent[1::2]], axis=1)

    shards, offset = [], 0
    bounds: list[list[tuple[str, int, int]]] = [[] for _ in folders]
    for k, s, names in parts:
        bounds[k].append((s, offset, offset + len(names)))
        offset += len(names)
    for k, spans in enumerate(bounds):
        shards.append(
            _client_shard(
                k, glob, spans, entity_names, relation_names, files[k], name, duplicates
            )
        )
    return FederatedKG(
        shards=shards,
        num_entities=len(entity_names),
        num_relations=len(relation_names),
        entity_names=[str(e) for e in entity_names],
        relation_names=[str(r) for r in relation_names],
        meta={"name": name, "format": "client-folders", "source": str(path)},
    )


def federated_to_dict(fed: FederatedKG) -> dict:
    r"""A ``torch.save``-able representation of a :class:`FederatedKG`."""
    return {
        "num_entities": fed.num_entities,
        "num_relations": fed.num_relations,
        "entity_names": fed.entity_names,
        "relation_names": fed.relation_names,
        "meta": dict(fed.meta),
        "shards": [
            {
                "client_id": s.client_id,
                "graph": s.graph.to_dict(),
                "entity_ids": s.entity_ids,
                "relation_ids": s.relation_ids,
            }
            for s in fed.shards
        ],
    }


def federated_from_dict(d: dict) -> FederatedKG:
    r"""Inverse of :func:`federated_to_dict`."""
    return FederatedKG(
        shards=[
            KGShard(
                client_id=s["client_id"],
                graph=KnowledgeGraph.from_dict(s["graph"]),
                entity_ids=s["entity_ids"],
                relation_ids=s["relation_ids"],
            )
            for s in d["shards"]
        ],
        num_entities=d["num_entities"],
        num_relations=d["num_relations"],
        entity_names=d["entity_names"],
        relation_names=d["relation_names"],
        meta=d["meta"],
    )


def federated_stats(fed: FederatedKG) -> dict:
    r"""``fedgraph info`` statistics: global sizes, summed triples, per client."""
    clients = [s.graph.stats() for s in fed.shards]
    totals: dict[str, int] = {}
    for c in clients:
        for split, n in c["triples"].items():
            totals[split] = totals.get(split, 0) + n
    return {
        "entities": fed.num_entities,
        "relations": fed.num_relations,
        "triples": totals,
        "clients": clients,
    }


__all__ = [
    "load_federated_folder",
    "client_folders",
    "federated_to_dict",
    "federated_from_dict",
    "federated_stats",
]
