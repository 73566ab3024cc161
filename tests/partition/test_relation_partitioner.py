r"""The relation-assigning partitioners share one ``__call__``
(:class:`~fedgraph.partition.base.RelationPartitioner`): ``assign``, the
provenance with ``relation_clients``, then the shards of
:func:`~fedgraph.partition.split.shards_from_relation_clients`."""

import pytest
import torch
from partition_kgs import random_kg

from fedgraph.partition.base import RelationPartitioner
from fedgraph.partition.louvain import LouvainRelationPartitioner
from fedgraph.partition.relation_cluster import SpectralRelationPartitioner
from fedgraph.partition.relation_random import RandomRelationPartitioner

PARTITIONERS = [
    RandomRelationPartitioner(3, seed=4),
    SpectralRelationPartitioner(3, seed=4),
    LouvainRelationPartitioner(3, seed=4, resolution=3.0),
]


@pytest.mark.parametrize("part", PARTITIONERS, ids=lambda p: type(p).__name__)
def test_each_uses_the_one_call_and_its_own_assign(part):
    cls = type(part)
    assert issubclass(cls, RelationPartitioner)
    assert "__call__" not in cls.__dict__ and "assign" in cls.__dict__
    kg = random_kg(num_entities=40, num_relations=9, num_triples=400)
    fed = part(kg)
    owner = part.assign(kg)  # no generator: a fresh one, the same draw
    assert fed.meta["relation_clients"] == owner.tolist()
    assert fed.meta["partitioner"] == cls.__name__
    assert fed.meta["params"] == part.get_params()
    for k, shard in enumerate(fed.shards):
        rels = torch.cat(
            [shard.global_triples(s)[:, 1] for s in ("train", "valid", "test")]
        )
        assert set(rels.tolist()) == set((owner == k).nonzero().view(-1).tolist())
    # seeded: a second call gives the same shards
    again = part(kg)
    for a, b in zip(fed.shards, again.shards, strict=True):
        assert torch.equal(a.global_triples("train"), b.global_triples("train"))


def test_a_new_relation_partitioner_is_its_assign_alone():
    class EveryOther(RelationPartitioner):
        def assign(self, graph, generator=None):
            return torch.arange(graph.num_relations) % self.num_clients

    kg = random_kg(num_entities=30, num_relations=6, num_triples=200)
    fed = EveryOther(2, seed=1)(kg)
    assert fed.meta["relation_clients"] == [0, 1, 0, 1, 0, 1]
    assert len(fed.shards) == 2
    assert repr(EveryOther(2, seed=1)) == (
        "EveryOther(num_clients=2, seed=1, ratios=[0.8, 0.1, 0.1], splits=None)"
    )
    with pytest.raises(TypeError):
        RelationPartitioner(2)  # abstract: no assign
    with pytest.raises(TypeError) as exc:
        EveryOther(2)("not a graph")
    assert "`graph`" in str(exc.value)


def test_random_assign_continues_the_resplit_stream():
    # the random deal draws from the generator the re-split then continues
    # with: the shards equal those of a by-hand deal on that one stream
    from fedgraph.partition.split import shards_from_relation_clients

    part = RandomRelationPartitioner(3, seed=7)
    kg = random_kg(seed=2)
    gen = part.generator()
    owner = part.assign(kg, gen)
    by_hand = shards_from_relation_clients(
        kg, owner, num_clients=3, splits=None, ratios=part.ratios, generator=gen,
        meta={},
    )  # fmt: skip
    for a, b in zip(part(kg).shards, by_hand.shards, strict=True):
        for split in ("train", "valid", "test"):
            assert torch.equal(a.global_triples(split), b.global_triples(split))
