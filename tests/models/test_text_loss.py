import math

import pytest

pytest.importorskip("transformers")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from fedgraph.models.text import (  # noqa: E402
    InfoNCELoss,
    duplicate_target_mask,
    info_nce_loss,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def _unit(x):
    return torch.nn.functional.normalize(torch.tensor(x, dtype=torch.float64), dim=-1)


def test_info_nce_matches_a_hand_computation():
    q = _unit([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])
    t = _unit([[0.8, 0.6], [0.0, 1.0], [1.0, 1.0]])
    gamma, tau = 0.02, 0.05
    s = q.numpy() @ t.numpy().T
    expected = 0.0
    for i in range(3):
        pos = math.exp((s[i, i] - gamma) / tau)
        neg = sum(math.exp(s[i, j] / tau) for j in range(3) if j != i)
        expected += -math.log(pos / (pos + neg))
    expected /= 3
    got = info_nce_loss(q, t, margin=gamma, temperature=tau)
    assert float(got) == pytest.approx(expected, rel=1e-12)
    assert float(InfoNCELoss()(q, t)) == pytest.approx(expected, rel=1e-12)


def test_margin_and_temperature_act_as_in_eq_2():
    q = _unit([[1.0, 0.0], [0.0, 1.0]])
    t = _unit([[1.0, 0.0], [0.0, 1.0]])
    # s_pos = 1, s_neg = 0: L = -log(e^{(1-g)/tau} / (e^{(1-g)/tau} + e^0))
    for gamma, tau in [(0.0, 1.0), (0.02, 0.05), (0.5, 0.1)]:
        a = (1 - gamma) / tau
        expected = -a + np.logaddexp(a, 0.0)
        got = float(info_nce_loss(q, t, margin=gamma, temperature=tau))
        assert got == pytest.approx(expected, rel=1e-10)


def test_mask_drops_negatives():
    q = _unit([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    t = _unit([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    mask = duplicate_target_mask(torch.tensor([5, 5, 7]))
    assert mask.tolist() == [
        [False, True, False],
        [True, False, False],
        [False, False, False],
    ]
    # with rows 0/1 sharing their target, each only has row 2 as a negative
    a = (1 - 0.02) / 0.05
    row01 = -a + np.logaddexp(a, 0.0)
    row2 = -a + np.logaddexp(a, np.logaddexp(0.0, 0.0))
    got = float(info_nce_loss(q, t, mask=mask))
    assert got == pytest.approx((2 * row01 + row2) / 3, rel=1e-10)


def test_gradient_flows_to_both_sides():
    q = torch.randn(4, 8, requires_grad=True)
    t = torch.randn(4, 8, requires_grad=True)
    info_nce_loss(
        torch.nn.functional.normalize(q, dim=-1),
        torch.nn.functional.normalize(t, dim=-1),
    ).backward()
    assert q.grad.abs().sum() > 0 and t.grad.abs().sum() > 0


def test_errors_name_the_argument():
    q = torch.zeros(2, 3)
    with pytest.raises(ValueError, match="temperature"):
        info_nce_loss(q, q, temperature=0.0)
    with pytest.raises(ValueError, match="margin"):
        InfoNCELoss(margin=-1.0)
    with pytest.raises(ValueError, match="same shape"):
        info_nce_loss(q, torch.zeros(3, 3))
    with pytest.raises(ValueError, match="positive"):
        info_nce_loss(q, q, mask=torch.eye(2, dtype=torch.bool))
    assert repr(InfoNCELoss()) == "InfoNCELoss(margin=0.02, temperature=0.05)"
