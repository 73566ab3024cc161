import pytest
import torch
from torch import nn

from fedgraph.eval import rank_triples
from fedgraph.eval.protocol import protocols, resolve_protocol, train_entities
from fedgraph.eval.ranking import TripleFilter
from fedgraph.federated.kge.client import KGEClient
from fedgraph.models.kge import resolve_model
from fedgraph.partition.split import to_local


class FixedScores(nn.Module):
    r"""A scorer whose tail scores are one fixed row per query."""

    def __init__(self, rows):
        super().__init__()
        self.rows = torch.tensor(rows)
        self.num_entities = self.rows.size(1)

    def score_t(self, head, rel, candidates=None):
        out = self.rows[: head.numel()]
        return out if candidates is None else out[:, candidates]


def test_exclude_masks_like_the_filter_but_never_the_target():
    model = FixedScores([[0.5, 0.9, 0.7, 0.8, 0.95]])
    query = torch.tensor([[0, 0, 3]])  # target tail 3, score 0.8
    flt = TripleFilter(torch.tensor([[0, 0, 1], [0, 0, 3]]), 5, 1)  # 1 is true

    def rank(**kw):
        state = rank_triples(model, query, directions=("tail",), **kw)
        return state.sums["tail"]["rank"]

    assert rank() == 3.0  # 1 (0.9) and 4 (0.95) score higher
    assert rank(filter=flt) == 2.0  # 1 filtered
    assert rank(filter=flt, exclude=torch.tensor([4])) == 1.0
    # the target itself in `exclude` (FedE's code restores its score)
    assert rank(filter=flt, exclude=torch.tensor([3, 4])) == 1.0
    assert rank(exclude=torch.tensor([3])) == 3.0
    # with a candidate subset, excluded ids outside it are ignored
    assert rank(candidates=torch.tensor([0, 2, 3, 4]), exclude=torch.tensor([1])) == 2


def _toy_client():
    r"""5 entities on a line (TransE, dim 1, gamma 0, relation +1); entity 4
    (at 1.1) occurs only in the test split."""
    splits = {
        "train": torch.tensor([[0, 0, 1], [1, 0, 2], [2, 0, 3]]),
        "valid": torch.tensor([[0, 0, 3]]),
        "test": torch.tensor([[2, 0, 4], [0, 0, 2]]),
    }
    shard = to_local(0, splits, 5)
    model = resolve_model("transe", 5, 1, 1, gamma=0.0)
    with torch.no_grad():
        model.entity_embedding.weight.copy_(
            torch.tensor([[0.0], [1.0], [2.0], [3.0], [1.1]])
        )
        model.relation_embedding.weight.fill_(1.0)
    return KGEClient(shard, model)


def test_fede_protocol_ranks_tails_among_training_entities_by_hand():
    client = _toy_client()
    test = client.shard.graph.triples("test")
    assert train_entities(client.shard.graph).tolist() == [0, 1, 2, 3]
    # FedLU's protocol: head and tail, every entity a candidate.
    # tail of (2, r, ?) = 4: scores -|3 - e|: 3 filtered (train), 2 at -1 beats
    # 4 at -1.9 -> rank 2. tail of (0, r, ?) = 2: 1 filtered, 4 at -0.1 beats
    # it, 0 ties at -1 -> 1 + 1 + 0.5 = 2.5.
    fedlu = client.rank(test)
    assert fedlu.sums["tail"]["rank"] == pytest.approx(2.0 + 2.5)
    assert fedlu.sums["head"]["count"] == 2
    # FedE's: tails only; 4 is outside the training entities, so it is masked
    # for (0, r, ?) (rank 1.5) but still the target of (2, r, ?) (rank 2).
    client.use_protocol("fede")
    fede = client.rank(test)
    assert fede.sums["head"]["count"] == 0
    assert fede.sums["tail"]["count"] == 2
    assert fede.sums["tail"]["rank"] == pytest.approx(2.0 + 1.5)
    assert fede.compute()["mrr"] == pytest.approx((1 / 2 + 1 / 1.5) / 2)
    client.use_protocol("fedlu")
    assert client.rank(test).sums["tail"]["rank"] == pytest.approx(4.5)


def test_protocols_are_recorded_explicitly_and_resolve_by_name():
    d = resolve_protocol("FedE").to_dict()
    assert d["directions"] == ["tail"]
    assert d["candidates"] == "train-entities"
    assert d["filter_splits"] == ["train", "valid", "test"]
    assert d["model_scored"] == "global"
    assert resolve_protocol("fedlu") is protocols["fedlu"]
    with pytest.raises(ValueError, match="among choices"):
        resolve_protocol("fedx")


def test_entire_excludes_each_clients_non_training_entities_in_global_ids():
    from fedgraph.runtime.baselines import _client_excluded

    # global ids 3, 5, 8, 9; 9 occurs only in the test split
    splits = {
        "train": torch.tensor([[3, 0, 5], [5, 1, 8]]),
        "valid": torch.tensor([[3, 1, 8]]),
        "test": torch.tensor([[8, 0, 9]]),
    }
    shard = to_local(1, splits, 10)
    assert shard.entity_ids.tolist() == [3, 5, 8, 9]
    assert _client_excluded(shard, protocols["fede"]).tolist() == [9]
    assert _client_excluded(shard, protocols["fedlu"]) is None
