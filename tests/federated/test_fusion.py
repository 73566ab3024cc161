import pytest
import torch

from fedgraph.eval.ranking import TripleFilter, rank_triples
from fedgraph.federated.fusion import ScoreFusion, fit_fusion
from fedgraph.models.kge import TransE


def _oracle_and_noise():
    # 6 entities, 1 relation: the "single" model encodes t = h + 1 exactly,
    # the "federated" one is random noise.
    torch.manual_seed(0)
    good = TransE(6, 1, 2, gamma=0.0)
    with torch.no_grad():
        good.entity_embedding.weight.copy_(torch.arange(6.0).repeat(2, 1).t())
        good.relation_embedding.weight.fill_(1.0)
    noise = TransE(6, 1, 2, gamma=0.0)
    with torch.no_grad():
        noise.entity_embedding.weight.mul_(10)
    triples = torch.tensor([[i, 0, i + 1] for i in range(5)])
    return good, noise, triples


def test_fusion_scores_are_the_linear_combination():
    good, noise, triples = _oracle_and_noise()
    f = ScoreFusion(good, noise)
    with torch.no_grad():
        f.linear.weight.copy_(torch.tensor([[2.0, -0.5]]))
        f.linear.bias.fill_(0.25)
    h, r = triples[:, 0], triples[:, 1]
    expected = 2.0 * good.score_t(h, r) - 0.5 * noise.score_t(h, r) + 0.25
    torch.testing.assert_close(f.score_t(h, r), expected)
    assert "w_single=2.000" in repr(f)


def test_fit_fusion_learns_to_trust_the_better_model():
    good, noise, triples = _oracle_and_noise()
    f = ScoreFusion(good, noise)
    fit_fusion(f, triples, epochs=40, batch_size=5, num_negatives=5, lr=0.2)
    w = f.linear.weight.detach().view(-1)
    assert w[0] > w[1]
    flt = TripleFilter(triples, 6, 1)
    mrr = rank_triples(f, triples, filter=flt, directions=("tail",)).compute()["mrr"]
    assert mrr == pytest.approx(1.0)
    # the frozen models did not move
    assert not any(p.requires_grad for p in good.parameters())


def test_fusion_rejects_mismatched_models():
    with pytest.raises(ValueError, match="must share entities"):
        ScoreFusion(TransE(5, 1, 2), TransE(6, 1, 2))
