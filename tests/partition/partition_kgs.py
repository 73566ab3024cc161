"""Small hand-made and random knowledge graphs for the partition tests."""

from __future__ import annotations

import torch

from fedgraph.data.knowledge_graph import KnowledgeGraph


def random_kg(
    num_entities: int = 40,
    num_relations: int = 9,
    num_triples: int = 400,
    seed: int = 0,
) -> KnowledgeGraph:
    """A random KG with unique triples, split 80/10/10 in source order."""
    gen = torch.Generator().manual_seed(seed)
    t = torch.stack(
        [
            torch.randint(num_entities, (num_triples,), generator=gen),
            torch.randint(num_relations, (num_triples,), generator=gen),
            torch.randint(num_entities, (num_triples,), generator=gen),
        ],
        dim=1,
    )
    t = torch.unique(t, dim=0)
    t = t[torch.randperm(t.size(0), generator=gen)]
    n = t.size(0)
    a, b = int(0.8 * n), int(0.9 * n)
    return KnowledgeGraph(
        {"train": t[:a], "valid": t[a:b], "test": t[b:]},
        num_entities=num_entities,
        num_relations=num_relations,
        entity_names=[f"e{i}" for i in range(num_entities)],
        relation_names=[f"r{i}" for i in range(num_relations)],
        name="random",
    )


def two_domain_kg() -> KnowledgeGraph:
    """Two disjoint domains: relations 0-2 among entities 0-9 and relations
    3-4 among entities 10-19 (no entity is shared across domains)."""
    rows = []
    for r in range(3):
        for i in range(10):
            rows.append((i, r, (i + r + 1) % 10))
    for r in (3, 4):
        for i in range(10):
            rows.append((10 + i, r, 10 + (i + r) % 10))
    t = torch.tensor(rows)
    return KnowledgeGraph({"train": t}, num_entities=20, num_relations=5, name="two")
