r"""Refusing partitions that leave a client with nothing to train on.

A client without training triples (a KG shard) or without a labelled
training node (an RDF shard) cannot train: the run would average in an
untrained model or divide by zero. :func:`max_clients` is the largest number
of clients a graph allows; :func:`check_num_clients` refuses more before any
work is done, :func:`check_shards` checks the shards a partitioner made.
"""

from __future__ import annotations

from typing import Any


def max_clients(graph: Any) -> int | None:
    r"""The largest number of clients ``graph`` can be split into with every
    client holding training data: for an RDF graph, its labelled training
    nodes; for a KG split by relation, its relations that hold a triple
    (:obj:`None` for another kind of graph)."""
    import torch

    masks = getattr(graph, "masks", None)
    if isinstance(masks, dict) and "train_mask" in masks:
        return int(masks["train_mask"].sum())
    if hasattr(graph, "split_names"):
        rels = [graph.triples(s)[:, 1] for s in graph.split_names]
        return int(torch.unique(torch.cat(rels)).numel()) if rels else 0
    return None  # another kind of graph: its partitioner checks


def _what(graph: Any) -> str:
    masks = getattr(graph, "masks", None)
    if isinstance(masks, dict) and "train_mask" in masks:
        return "labelled training node"
    return "training triple"


def check_num_clients(num_clients: int, graph: Any) -> None:
    r"""Raises :class:`ValueError` when ``num_clients`` exceeds
    :func:`max_clients` of ``graph``."""
    largest = max_clients(graph)
    if largest is not None and num_clients > largest:
        name = getattr(graph, "name", "") or type(graph).__name__
        raise ValueError(
            f"`num_clients`={num_clients} would leave clients without a "
            f"{_what(graph)}: {name} allows at most {largest} clients"
        )


def check_shards(fed: Any) -> None:
    r"""Raises :class:`ValueError` naming the first client of ``fed`` (a
    federated KG or RDF graph) without training data."""
    empty = []
    for shard in fed.shards:
        g = shard.graph
        masks = getattr(g, "masks", None)
        if isinstance(masks, dict) and "train_mask" in masks:
            n = int(masks["train_mask"].sum())
        else:
            n = int(g.triples("train").size(0))
        if n == 0:
            empty.append(shard.client_id)
    if empty:
        what = _what(fed.shards[empty[0]].graph)
        raise ValueError(
            f"client {empty[0]} ({len(empty)} of {len(fed.shards)} clients) holds "
            f"no {what}: use fewer clients (at most "
            f"{len(fed.shards) - len(empty)})"
        )


__all__ = ["max_clients", "check_num_clients", "check_shards"]
