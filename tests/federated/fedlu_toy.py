r"""A tiny seeded two-client federation shared by the FedLU / FedS / unlearning
tests (12 global entities, 2 relations per client, 6 shared entities)."""

from __future__ import annotations

from pathlib import Path

import torch

from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.data.shard import FederatedKG, KGShard
from fedgraph.models.kge import resolve_model


def toy_federation(seed: int = 0, n_train: int = 40) -> FederatedKG:
    gen = torch.Generator().manual_seed(seed)
    shards = []
    global_ids = [torch.arange(0, 9), torch.arange(3, 12)]  # 3..8 shared
    for c, ids in enumerate(global_ids):
        n = ids.numel()
        trip = torch.stack(
            [
                torch.randint(n, (n_train + 10,), generator=gen),
                torch.randint(2, (n_train + 10,), generator=gen),
                torch.randint(n, (n_train + 10,), generator=gen),
            ],
            1,
        )
        trip = torch.unique(trip, dim=0)
        trip = trip[torch.randperm(trip.size(0), generator=gen)]
        k = trip.size(0)
        g = KnowledgeGraph(
            {
                "train": trip[: k - 10],
                "valid": trip[k - 10 : k - 5],
                "test": trip[k - 5 :],
            },
            n,
            2,
        )
        shards.append(KGShard(c, g, ids, torch.tensor([2 * c, 2 * c + 1])))
    return FederatedKG(shards, 12, 4)


def toy_model(shard: KGShard, dim: int = 8, seed: int = 0):
    torch.manual_seed(seed + shard.client_id)
    return resolve_model(
        "transe", shard.num_entities, shard.num_relations, dim, gamma=4.0
    )


def write_toy_folders(root: Path, n_train: int = 40) -> None:
    r""":func:`toy_federation` as FedLU's folder layout under ``root``
    (``clientK/{train,valid,test}.txt`` with names, and a 3-triple
    ``unlearn.txt`` per client)."""
    fed = toy_federation(n_train=n_train)
    for s in fed:
        d = root / f"client{s.client_id}"
        d.mkdir(parents=True)
        names = [f"e{int(i)}" for i in s.entity_ids]
        rels = [f"r{int(i)}" for i in s.relation_ids]
        named = {
            split: "".join(
                f"{names[h]}\t{rels[r]}\t{names[t]}\n"
                for h, r, t in s.graph.triples(split).tolist()
            )
            for split in ("train", "valid", "test")
        }
        for split, text in named.items():
            (d / f"{split}.txt").write_text(text)
        first3 = named["train"].splitlines(keepends=True)[:3]
        (d / "unlearn.txt").write_text("".join(first3))
