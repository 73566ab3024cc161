import math

import pytest
import torch

from fedgraph.training.distill import distillation_loss, score_distribution
from fedgraph.training.interference import (
    hard_confusion_loss,
    interference_loss,
    soft_confusion_loss,
)


def test_score_distribution_softmax_over_positive_and_negatives():
    logp = score_distribution(torch.tensor([math.log(3.0)]), torch.zeros(1, 1))
    assert torch.allclose(logp.exp(), torch.tensor([[0.75, 0.25]]))


def test_distillation_matches_hand_computed_kl_and_only_student_gets_gradient():
    s_pos = torch.zeros(1, requires_grad=True)
    s_neg = torch.zeros(1, 1, requires_grad=True)
    t_pos = torch.tensor([math.log(3.0)], requires_grad=True)
    t_neg = torch.zeros(1, 1, requires_grad=True)
    loss = distillation_loss(s_pos, s_neg, t_pos, t_neg)
    # q = (3/4, 1/4), p = (1/2, 1/2): KL(q || p) = 3/4 ln 1.5 + 1/4 ln 0.5
    expected = 0.75 * math.log(1.5) + 0.25 * math.log(0.5)
    assert loss.item() == pytest.approx(expected, abs=1e-6)
    loss.backward()
    assert t_pos.grad is None and t_neg.grad is None
    # d KL / d s_pos = p_pos - q_pos = 1/2 - 3/4
    assert s_pos.grad.item() == pytest.approx(-0.25, abs=1e-6)


def test_distillation_zero_when_equal_and_batch_mean():
    pos = torch.tensor([1.0, -2.0])
    neg = torch.tensor([[0.5, 3.0], [1.0, 1.0]])
    assert distillation_loss(pos, neg, pos, neg).item() == pytest.approx(0.0, abs=1e-7)
    one = distillation_loss(pos[:1], neg[:1], pos[:1] + 1, neg[:1])
    two = distillation_loss(pos, neg, pos + torch.tensor([1.0, 0.0]), neg)
    assert two.item() == pytest.approx(one.item() / 2, rel=1e-5)


def test_distillation_rejects_bad_shapes():
    with pytest.raises(ValueError, match="neg_score"):
        distillation_loss(
            torch.zeros(2), torch.zeros(3, 4), torch.zeros(2), torch.zeros(2, 4)
        )


def test_hard_confusion_hand_value():
    # -log s(0) - mean(-log s(0), -log s(0)) = 2 ln 2
    loss = hard_confusion_loss(torch.zeros(1), torch.zeros(1, 2))
    assert loss.item() == pytest.approx(2 * math.log(2.0), abs=1e-6)


def test_hard_confusion_pushes_forget_score_down():
    f = torch.tensor([2.0], requires_grad=True)
    hard_confusion_loss(f, torch.zeros(1, 3)).backward()
    assert f.grad.item() > 0  # gradient descent lowers the score


def test_soft_confusion_hand_value_and_direction():
    f = torch.tensor([1.0], requires_grad=True)
    loss = soft_confusion_loss(f, torch.tensor([[0.0, 3.0]]))
    assert loss.item() == pytest.approx(1.5)  # (|0-1| + |3-1|) / 2
    loss.backward()
    assert f.grad.item() == pytest.approx(0.0)  # one below, one above
    f2 = torch.tensor([5.0], requires_grad=True)
    soft_confusion_loss(f2, torch.tensor([[0.0, 1.0]])).backward()
    assert f2.grad.item() == pytest.approx(1.0)  # pulled down to its negatives


def test_interference_is_weighted_sum():
    f, neg = torch.tensor([1.0, 0.5]), torch.tensor([[0.0, 3.0], [1.0, -1.0]])
    tf, tneg = torch.tensor([0.0, 0.0]), torch.tensor([[1.0, 1.0], [2.0, 0.0]])
    total = interference_loss(f, neg, tf, tneg, mu_soft=0.1, mu_distill=2.0)
    expected = (
        hard_confusion_loss(f, neg)
        + 0.1 * soft_confusion_loss(f, neg)
        + 2.0 * distillation_loss(f, neg, tf, tneg)
    )
    assert total.item() == pytest.approx(expected.item(), rel=1e-6)
    no_hard = interference_loss(f, neg, tf, tneg, hard=False)
    assert no_hard.item() == pytest.approx(
        (expected - hard_confusion_loss(f, neg)).item(), rel=1e-6
    )
    with pytest.raises(ValueError, match="together"):
        interference_loss(f, neg, tf, None)
