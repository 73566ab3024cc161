r"""Shared steps of the relation partitioners: re-splitting a client's pooled
triples 8:1:1 and building client shards from a relation → client assignment.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.data.shard import FederatedKG, KGShard
from fedgraph.typing import SPLITS, Triples

DEFAULT_RATIOS = (0.8, 0.1, 0.1)


def check_ratios(ratios: Sequence[float]) -> tuple[float, float, float]:
    r"""Validates a ``(train, valid, test)`` ratio triple summing to one."""
    ratios = tuple(float(r) for r in ratios)
    if len(ratios) != 3 or min(ratios) < 0 or abs(sum(ratios) - 1.0) > 1e-6:
        raise ValueError(
            "`ratios` must be three non-negative (train, valid, test) fractions "
            f"summing to 1 (got {ratios})"
        )
    if ratios[0] <= 0:
        raise ValueError(f"`ratios` must give training triples (got {ratios})")
    return ratios  # type: ignore[return-value]


def _first_position(index: Tensor, position: Tensor, size: int) -> Tensor:
    r"""For each id in ``[0, size)``, the smallest ``position`` where it occurs
    in ``index`` (``len(position)`` where it does not occur)."""
    out = torch.full((size,), position.numel(), dtype=torch.long)
    return out.scatter_reduce(0, index, position, reduce="amin")


def resplit(
    triples: Triples,
    ratios: Sequence[float] = DEFAULT_RATIOS,
    *,
    generator: torch.Generator,
) -> dict[str, Triples]:
    r"""Randomly re-splits pooled triples into train/valid/test.

    As in the FedE and FedLU dataset scripts, evaluation triples are only
    drawn where the training split still covers their entities and relation:
    the triples are shuffled, the first occurrence (in shuffled order) of
    every entity and every relation is forced into training, and valid/test
    take ``round(ratio · n)`` of the remaining triples in shuffled order. So
    every entity and relation of valid/test also occurs in train, and the
    sizes are exact whenever enough non-forced triples exist (otherwise
    valid/test are as large as possible, valid first).

    Args:
        triples (Tensor): ``[n, 3]`` pooled triples (any id space).
        ratios (Sequence[float], optional): ``(train, valid, test)`` fractions.
            (default: :obj:`(0.8, 0.1, 0.1)`)
        generator (torch.Generator): the seeded source of randomness.

    Returns:
        dict[str, Tensor]: ``{"train", "valid", "test"}`` triples, each in
        shuffled order.
    """
    ratios = check_ratios(ratios)
    n = triples.size(0)
    perm = torch.randperm(n, generator=generator)
    shuffled = triples[perm]
    n_valid = round(ratios[1] * n)
    n_test = round(ratios[2] * n)
    if n == 0:
        return {s: shuffled for s in SPLITS}
    pos = torch.arange(n)
    forced = torch.zeros(n, dtype=torch.bool)
    ents = shuffled[:, [0, 2]]
    num_ent = int(ents.max()) + 1
    first_h = _first_position(shuffled[:, 0], pos, num_ent)
    first_t = _first_position(shuffled[:, 2], pos, num_ent)
    first_e = torch.minimum(first_h, first_t)
    first_e = first_e[first_e < n]
    forced[first_e] = True
    first_r = _first_position(shuffled[:, 1], pos, int(shuffled[:, 1].max()) + 1)
    forced[first_r[first_r < n]] = True
    free = (~forced).nonzero().view(-1)
    n_valid = min(n_valid, free.numel())
    n_test = min(n_test, free.numel() - n_valid)
    valid_pos = free[:n_valid]
    test_pos = free[n_valid : n_valid + n_test]
    is_train = torch.ones(n, dtype=torch.bool)
    is_train[valid_pos] = False
    is_train[test_pos] = False
    return {
        "train": shuffled[is_train],
        "valid": shuffled[valid_pos],
        "test": shuffled[test_pos],
    }


def to_local(client_id: int, splits: dict[str, Triples], num_entities: int) -> KGShard:
    r"""Builds a :class:`KGShard` from global-id splits.

    Local ids are the client's global ids in increasing order (entities and
    relations), so they are deterministic whatever the triple order.
    """
    pooled = torch.cat([splits[s] for s in splits], dim=0)
    # Sorted unique ids via a presence mask (O(n), no sort).
    seen = torch.zeros(num_entities, dtype=torch.bool)
    seen[pooled[:, 0]] = True
    seen[pooled[:, 2]] = True
    entity_ids = seen.nonzero().view(-1)
    num_rel = int(pooled[:, 1].max()) + 1 if pooled.numel() else 0
    seen_r = torch.zeros(num_rel, dtype=torch.bool)
    seen_r[pooled[:, 1]] = True
    relation_ids = seen_r.nonzero().view(-1)
    ent_map = torch.full((num_entities,), -1, dtype=torch.long)
    ent_map[entity_ids] = torch.arange(entity_ids.numel())
    rel_map = torch.full((num_rel,), -1, dtype=torch.long)
    rel_map[relation_ids] = torch.arange(relation_ids.numel())
    local = {
        s: torch.stack([ent_map[t[:, 0]], rel_map[t[:, 1]], ent_map[t[:, 2]]], dim=1)
        for s, t in splits.items()
    }
    graph = KnowledgeGraph(
        local,
        num_entities=entity_ids.numel(),
        num_relations=relation_ids.numel(),
    )
    return KGShard(client_id, graph, entity_ids, relation_ids)


def shards_from_relation_clients(
    graph: KnowledgeGraph,
    relation_client: Tensor,
    *,
    num_clients: int,
    splits: Sequence[str] | None,
    ratios: Sequence[float],
    generator: torch.Generator,
    meta: dict,
) -> FederatedKG:
    r"""Sends every triple to the client of its relation and re-splits each
    client's pooled triples (see :func:`resplit`).

    Args:
        graph (KnowledgeGraph): the source graph (global ids).
        relation_client (Tensor): ``[num_relations]`` client of each relation.
        num_clients (int): number of clients.
        splits (Sequence[str], optional): source splits to pool (default: all).
        ratios (Sequence[float]): ``(train, valid, test)`` fractions.
        generator (torch.Generator): seeded randomness for the re-split.
        meta (dict): provenance stored on the result.
    """
    pooled = graph.all_triples(splits)
    owner = relation_client[pooled[:, 1]]
    # One stable sort groups the triples by client, keeping source order.
    order = torch.sort(owner, stable=True).indices
    counts = torch.bincount(owner, minlength=num_clients).tolist()
    grouped = pooled[order]
    shards = []
    for c, part in enumerate(torch.split(grouped, counts)):
        shards.append(
            to_local(c, resplit(part, ratios, generator=generator), graph.num_entities)
        )
    return FederatedKG(
        shards,
        num_entities=graph.num_entities,
        num_relations=graph.num_relations,
        entity_names=graph.entity_names,
        relation_names=graph.relation_names,
        meta=meta,
    )


def keep_source_splits(fed: FederatedKG, graph: KnowledgeGraph) -> FederatedKG:
    r"""``fed`` with the source's own splits: every triple of ``graph``'s
    train / valid / test goes, in that split, to the client ``fed`` gave it
    to (the client of its relation, or of its entities; each client that
    holds it), instead of the client's re-split (:func:`resplit`).

    Evaluation triples may then hold entities or relations their client
    does not train on (``fedgraph train --unseen drop`` drops them).

    Args:
        fed (FederatedKG): a partition of ``graph`` (global ids as
            ``graph``'s).
        graph (KnowledgeGraph): the source graph with its own splits.

    Raises:
        ValueError: if a source triple is held by no client of ``fed``.
    """
    n_ent, n_rel = graph.num_entities, graph.num_relations
    keys, owner = [], []
    for shard in fed:
        held = torch.cat([shard.global_triples(s) for s in shard.graph.split_names])
        keys.append(_keys(held, n_ent, n_rel))
        owner.append(torch.full((held.size(0),), shard.client_id, dtype=torch.long))
    key, order = torch.sort(torch.cat(keys))
    client_of = torch.cat(owner)[order]
    kept: list[dict[str, Triples]] = [{} for _ in fed]
    for split in SPLITS:
        src = graph.triples(split)
        row, client = _holders(key, client_of, _keys(src, n_ent, n_rel))
        missing = torch.ones(src.size(0), dtype=torch.bool)
        missing[row] = False
        if bool(missing.any()):
            bad = src[missing][0].tolist()
            raise ValueError(
                f"`fed` holds no client with the {split} triple {bad} of the source"
            )
        for c in range(fed.num_clients):
            kept[c][split] = src[torch.unique(row[client == c])]
    shards = [to_local(c, kept[c], n_ent) for c in range(fed.num_clients)]
    return FederatedKG(
        shards,
        num_entities=n_ent,
        num_relations=n_rel,
        entity_names=fed.entity_names,
        relation_names=fed.relation_names,
        meta={**fed.meta, "keep_splits": True},
    )


def _holders(key: Tensor, client_of: Tensor, query: Tensor) -> tuple[Tensor, Tensor]:
    r"""Pairs ``(row, client)``: each client holding ``query[row]`` among the
    sorted ``key`` (one pair per holding: a triple several clients hold goes
    to each of them)."""
    lo = torch.searchsorted(key, query, side="left")
    counts = torch.searchsorted(key, query, side="right") - lo
    row = torch.repeat_interleave(torch.arange(query.numel()), counts)
    start = torch.repeat_interleave(lo - torch.cumsum(counts, 0) + counts, counts)
    return row, client_of[torch.arange(row.numel()) + start]


def _keys(triples: Triples, num_entities: int, num_relations: int) -> Tensor:
    h, r, t = triples.long().unbind(1)
    return (h * num_relations + r) * num_entities + t


__all__ = [
    "resplit",
    "to_local",
    "shards_from_relation_clients",
    "check_ratios",
    "keep_source_splits",
]
