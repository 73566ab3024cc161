r"""Evaluation triples a client never trained on.

A validation or test triple whose head, tail or relation never occurs in the
client's *training* triples is scored with an embedding that was never
updated (its random initialisation, or whatever the server sent): its rank
says nothing about what the client learnt. :func:`unseen_mask` finds them,
:func:`check_unseen` warns with their count and can drop them
(``fedgraph train --unseen drop``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

EVAL_SPLITS = ("valid", "test")


def unseen_mask(
    train: Tensor, triples: Tensor, num_entities: int, num_relations: int
) -> Tensor:
    r"""``[n]`` whether each of ``triples`` (``[n, 3]``) has a head, tail or
    relation absent from the ``train`` triples (``[m, 3]``; same id space)."""
    seen_e = torch.zeros(num_entities, dtype=torch.bool)
    seen_r = torch.zeros(num_relations, dtype=torch.bool)
    train = train.long()
    seen_e[train[:, 0]] = True
    seen_e[train[:, 2]] = True
    seen_r[train[:, 1]] = True
    t = triples.long()
    return ~(seen_e[t[:, 0]] & seen_e[t[:, 2]] & seen_r[t[:, 1]])


def count_unseen(
    fed: Any, splits: Sequence[str] = EVAL_SPLITS
) -> dict[int, dict[str, int]]:
    r"""Per client, per split: how many evaluation triples hold an entity or
    relation absent from that client's training triples (clients and splits
    without any are left out)."""
    out: dict[int, dict[str, int]] = {}
    for shard in fed:
        g = shard.graph
        train = g.triples("train")
        for split in splits:
            if split not in g.split_names:
                continue
            n = int(
                unseen_mask(
                    train, g.triples(split), g.num_entities, g.num_relations
                ).sum()
            )
            if n:
                out.setdefault(shard.client_id, {})[split] = n
    return out


def drop_unseen(fed: Any, splits: Sequence[str] = EVAL_SPLITS) -> Any:
    r"""A copy of the federated KG ``fed`` whose ``splits`` keep only the
    triples whose entities and relation all occur in the client's training
    triples (the local ↔ global id maps are unchanged)."""
    import copy

    from fedgraph.data.knowledge_graph import KnowledgeGraph

    shards = []
    for shard in fed:
        g = shard.graph
        train = g.triples("train")
        trip = {}
        for split in g.split_names:
            t = g.triples(split)
            if split in splits:
                t = t[~unseen_mask(train, t, g.num_entities, g.num_relations)]
            trip[split] = t
        graph = KnowledgeGraph(
            trip,
            g.num_entities,
            g.num_relations,
            entity_names=g.entity_names,
            relation_names=g.relation_names,
            name=g.name,
        )
        new = copy.copy(shard)
        new.graph = graph
        shards.append(new)
    out = copy.copy(fed)
    out.shards = shards
    return out


def check_unseen(
    fed: Any, *, drop: bool = False, splits: Sequence[str] = EVAL_SPLITS
) -> Any:
    r"""Warns (one :class:`UserWarning` with the counts) when evaluation
    triples of ``fed`` hold entities or relations unseen in their client's
    training triples; returns ``fed``, or with ``drop=True`` a copy without
    them (:func:`drop_unseen`)."""
    counts = count_unseen(fed, splits)
    if not counts:
        return fed
    total = sum(sum(c.values()) for c in counts.values())
    per = "; ".join(
        f"client {c}: " + ", ".join(f"{n} {s}" for s, n in sorted(v.items()))
        for c, v in sorted(counts.items())
    )
    if drop:
        warnings.warn(
            f"dropped {total} evaluation triples whose entity or relation is "
            f"absent from their client's training triples ({per})",
            UserWarning,
            stacklevel=2,
        )
        return drop_unseen(fed, splits)
    warnings.warn(
        f"{total} evaluation triples hold an entity or relation absent from "
        f"their client's training triples and are scored with an untrained "
        f"embedding ({per}); drop them with `--unseen drop` "
        "(fedgraph.eval.check_unseen(fed, drop=True))",
        UserWarning,
        stacklevel=2,
    )
    return fed


__all__ = ["unseen_mask", "count_unseen", "drop_unseen", "check_unseen"]
