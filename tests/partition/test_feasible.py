import pytest
import torch

from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.partition import RandomRelationPartitioner
from fedgraph.partition.feasible import check_num_clients, check_shards, max_clients


def _kg():
    t = torch.tensor([[0, 0, 1], [1, 1, 2], [2, 0, 3], [3, 1, 0]])
    # relation 2 exists in the vocabulary but holds no triple
    return KnowledgeGraph({"train": t, "valid": t[:1], "test": t[1:2]}, 4, 3)


def test_max_clients_counts_relations_with_triples():
    kg = _kg()
    assert max_clients(kg) == 2
    check_num_clients(2, kg)
    with pytest.raises(ValueError, match=r"`num_clients`=3 .* at most 2 clients"):
        check_num_clients(3, kg)
    assert max_clients(object()) is None  # another kind: its partitioner checks
    check_num_clients(10**6, object())


def test_check_shards_names_an_empty_client():
    fed = RandomRelationPartitioner(3, seed=0)(_kg())
    empty = [s.client_id for s in fed.shards if s.graph.triples("train").numel() == 0]
    assert len(empty) == 1  # the client dealt relation 2 alone
    with pytest.raises(ValueError, match=rf"client {empty[0]} \(1 of 3 clients\)"):
        check_shards(fed)
    check_shards(RandomRelationPartitioner(2, seed=0)(_kg()))
