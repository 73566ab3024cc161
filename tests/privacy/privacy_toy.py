r"""A tiny seeded three-client FedE federation for the privacy tests
(15 global entities, 2 relations per client, overlapping entity sets)."""

from __future__ import annotations

import torch

from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.data.shard import FederatedKG, KGShard
from fedgraph.federated.kge.setup import KGESettings, build_kge_federation


def toy_federation(seed: int = 0, n_train: int = 40) -> FederatedKG:
    gen = torch.Generator().manual_seed(seed)
    shards = []
    for c, ids in enumerate(
        [torch.arange(0, 9), torch.arange(3, 12), torch.arange(6, 15)]
    ):
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
        shards.append(KGShard(c, g, ids.clone(), torch.arange(2) + 2 * c))
    names = [f"entity/{i}" for i in range(15)]
    return FederatedKG(shards, 15, 6, entity_names=names)


def toy_settings(**kw) -> KGESettings:
    base = dict(
        dim=8, lr=0.01, batch_size=16, num_negatives=4, local_epochs=1, gamma=4.0
    )
    base.update(kw)
    return KGESettings(**base)


def build(fed: FederatedKG, algorithm: str = "fede", **kw):
    return build_kge_federation(algorithm, fed, toy_settings(**kw))
