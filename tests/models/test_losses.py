import math

import pytest
import torch

from fedgraph.models.losses import (
    MarginRankingLoss,
    NSSALoss,
    SigmoidNSLoss,
    losses,
    resolve_loss,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def ls(x):
    return math.log(1 / (1 + math.exp(-x)))


def test_sigmoid_ns_hand_computed():
    pos = torch.tensor([2.0])
    neg = torch.tensor([[1.0, -1.0]])
    # 1/2 * (-log s(2) - 1/2 (log s(-1) + log s(1)))
    want = 0.5 * (-ls(2.0) - 0.5 * (ls(-1.0) + ls(1.0)))
    assert SigmoidNSLoss()(pos, neg).item() == pytest.approx(want, rel=1e-6)


def test_self_adversarial_hand_computed():
    pos = torch.tensor([2.0])
    neg = torch.tensor([[1.0, -1.0]])
    p = [
        math.exp(1) / (math.exp(1) + math.exp(-1)),
        math.exp(-1) / (math.exp(1) + math.exp(-1)),
    ]
    want = 0.5 * (-ls(2.0) - (p[0] * ls(-1.0) + p[1] * ls(1.0)))
    assert NSSALoss(1.0)(pos, neg).item() == pytest.approx(want, rel=1e-6)
    # the adversarial weights carry no gradient
    neg = neg.clone().requires_grad_()
    NSSALoss(1.0)(pos, neg).backward()
    g = neg.grad[0]
    assert g[0].item() == pytest.approx(
        -0.5 * p[0] * -(1 - 1 / (1 + math.exp(1))), rel=1e-5
    )


def test_weights_and_margin():
    pos = torch.tensor([1.0, 3.0])
    neg = torch.tensor([[0.5, 2.0], [0.0, 0.0]])
    # per-row: mean(relu(1 - 1 + 0.5), relu(1 - 1 + 2)) = 1.25; row2: relu(1-3) = 0
    m = MarginRankingLoss(1.0)
    assert m(pos, neg).item() == pytest.approx(0.625)
    assert m(pos, neg, torch.tensor([3.0, 1.0])).item() == pytest.approx(3 * 1.25 / 4)
    with pytest.raises(ValueError, match=r"\[B, K\]"):
        m(pos, neg[:1])


def test_resolver():
    assert isinstance(resolve_loss("nssa", adversarial_temperature=0.5), NSSALoss)
    assert isinstance(resolve_loss("sigmoid-ns"), SigmoidNSLoss)
    assert isinstance(resolve_loss("margin_ranking"), MarginRankingLoss)
    with pytest.raises(ValueError, match="adversarial_temperature"):
        NSSALoss(-1.0)


@pytest.mark.parametrize("name", losses.names())
def test_rows_weighted_mean_is_the_loss(name):
    gen = torch.Generator().manual_seed(0)
    pos = torch.randn(5, generator=gen, dtype=torch.float64)
    neg = torch.randn(5, 3, generator=gen, dtype=torch.float64)
    w = torch.rand(5, generator=gen, dtype=torch.float64)
    loss = resolve_loss(name)
    rows = loss.rows(pos, neg)
    assert rows.shape == (5,)
    torch.testing.assert_close((w * rows).sum() / w.sum(), loss(pos, neg, w))
    torch.testing.assert_close(rows.mean(), loss(pos, neg))
