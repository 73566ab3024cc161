r"""The softmax cross-entropy loss over a positive and its sampled negatives
(LibKGE's ``kl``, PyKEEN's ``CrossEntropyLoss``): its value, its gradient,
and that the registry, ``--loss`` and ``--help`` pick it up from its file."""

import math

import pytest
import torch
import torch.nn.functional as F

from fedgraph.models.losses import losses, resolve_loss
from fedgraph.models.losses.cross_entropy import CrossEntropyLoss

pytestmark = pytest.mark.usefixtures("one_thread")

POS = torch.tensor([2.0, -1.0], dtype=torch.float64)
NEG = torch.tensor([[1.0, -1.0, 0.5], [0.0, 3.0, -2.0]], dtype=torch.float64)


def test_value_is_the_hand_computed_log_sum_exp():
    # row b: log(e^{s+} + sum_i e^{s-_i}) - s+
    rows = [
        math.log(math.exp(2.0) + math.exp(1.0) + math.exp(-1.0) + math.exp(0.5)) - 2.0,
        math.log(math.exp(-1.0) + math.exp(0.0) + math.exp(3.0) + math.exp(-2.0)) + 1.0,
    ]
    loss = CrossEntropyLoss()
    assert loss.rows(POS, NEG).tolist() == pytest.approx(rows, rel=1e-12)
    assert loss(POS, NEG).item() == pytest.approx(sum(rows) / 2, rel=1e-12)
    w = torch.tensor([3.0, 1.0], dtype=torch.float64)
    want = (3.0 * rows[0] + rows[1]) / 4.0
    assert loss(POS, NEG, w).item() == pytest.approx(want, rel=1e-12)
    # torch.logsumexp by hand over [s+, s-]
    by_hand = torch.logsumexp(torch.cat([POS[:, None], NEG], 1), 1) - POS
    torch.testing.assert_close(loss.rows(POS, NEG), by_hand)


def test_value_is_pykeen_s_slcwa_cross_entropy():
    # PyKEEN's CrossEntropyLoss.process_slcwa_scores: cross-entropy over
    # cat([positive, negatives]) with the positive (column 0) the true class
    gen = torch.Generator().manual_seed(0)
    pos = torch.randn(6, generator=gen, dtype=torch.float64)
    neg = torch.randn(6, 4, generator=gen, dtype=torch.float64)
    scores = torch.cat([pos[:, None], neg], dim=1)
    want = F.cross_entropy(scores, torch.zeros(6, dtype=torch.long))
    torch.testing.assert_close(CrossEntropyLoss()(pos, neg), want)


def test_gradient_is_softmax_minus_the_one_hot_target():
    pos = POS.clone().requires_grad_()
    neg = NEG.clone().requires_grad_()
    CrossEntropyLoss()(pos, neg).backward()
    p = torch.softmax(torch.cat([POS[:, None], NEG], 1), 1) / 2  # mean of 2 rows
    torch.testing.assert_close(pos.grad, p[:, 0] - 0.5)
    torch.testing.assert_close(neg.grad, p[:, 1:])
    w = torch.tensor([0.7, 1.9], dtype=torch.float64)
    assert torch.autograd.gradcheck(
        lambda a, b: CrossEntropyLoss()(a, b, w),
        (POS.clone().requires_grad_(), NEG.clone().requires_grad_()),
    )


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError) as exc:
        CrossEntropyLoss()(POS, NEG[:1])
    assert str(exc.value) == (
        "Expected positive scores [B] and negative scores [B, K] (got (2,) and (1, 3))"
    )


def test_the_registry_the_command_line_and_help_take_it(capsys):
    from fedgraph.cli import choices
    from fedgraph.cli.main import build_parser, main

    assert "cross-entropy" in losses.names()
    assert "cross-entropy" in choices.KGE_LOSSES
    assert isinstance(resolve_loss("kl"), CrossEntropyLoss)
    assert isinstance(resolve_loss("cross_entropy"), CrossEntropyLoss)
    assert repr(resolve_loss("cross-entropy")) == "CrossEntropyLoss()"
    args = build_parser().parse_args(
        ["train", "d", "--algorithm", "fede", "--out", "o", "--loss", "cross-entropy"]
    )
    assert args.loss == "cross-entropy"
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    help_text = "".join(capsys.readouterr().out.split())
    assert "--loss{" + ",".join(losses.names()) + "}" in help_text


def test_the_docs_table_lists_it():
    from fedgraph.cli.reference import registries_page

    row = (
        "| `cross-entropy`, `kl` | `CrossEntropyLoss` | — | Softmax cross-entropy "
        "over a positive and its sampled negatives (LibKGE's `kl`, PyKEEN's "
        "`CrossEntropyLoss`). |"
    )
    assert row in registries_page()
