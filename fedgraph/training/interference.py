r"""Retroactive interference of `FedLU <https://arxiv.org/abs/2302.02069>`_
unlearning (§4.2, Eqs. 12–14).

Pure functions on scores (higher = more plausible). The passive-decay step
that follows is mutual distillation on the retained set
(:func:`fedgraph.training.distill.distillation_loss`).
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor

from fedgraph.training.distill import distillation_loss


def _check(pos_score: Tensor, neg_score: Tensor) -> Tensor:
    pos_score = pos_score.reshape(-1, 1)
    if neg_score.dim() != 2 or neg_score.size(0) != pos_score.size(0):
        raise ValueError(
            f"`neg_score` must be [B, n] with B = {pos_score.size(0)} "
            f"(got shape {tuple(neg_score.shape)})"
        )
    return pos_score


def hard_confusion_loss(forget_score: Tensor, neg_score: Tensor) -> Tensor:
    r"""Hard confusion, FedLU Eq. (12): the triple to forget is treated as a
    negative, like its own negatives.

    .. math::
        \mathcal{L}^{\text{hard}}_{(h_i, r_i, t_i)} =
        -\log\sigma\big(-\mathcal{S}_{(h_i, r_i, t_i)}\big)
        - \frac{1}{n}\sum_{(h, r, t) \in N(h_i, r_i, t_i)}
        \log\sigma\big(-\mathcal{S}_{(h, r, t)}\big)

    Args:
        forget_score (Tensor): ``[B]`` scores of the triples to forget.
        neg_score (Tensor): ``[B, n]`` scores of their negatives.

    Returns:
        Tensor: the batch mean (a scalar).
    """
    forget_score = _check(forget_score, neg_score).squeeze(1)
    loss = -F.logsigmoid(-forget_score) - F.logsigmoid(-neg_score).mean(dim=1)
    return loss.mean()


def soft_confusion_loss(forget_score: Tensor, neg_score: Tensor) -> Tensor:
    r"""Soft confusion, FedLU Eq. (13): pulls the score of the triple to
    forget towards the scores of its negatives.

    .. math::
        \mathcal{L}^{\text{soft}}_{(h_i, r_i, t_i)} = \frac{1}{n}
        \sum_{(h, r, t) \in N(h_i, r_i, t_i)}
        \big\lVert \mathcal{S}_{(h, r, t)} - \mathcal{S}_{(h_i, r_i, t_i)}
        \big\rVert_2

    The scores are scalars, so each term is an absolute difference. (FedLU's
    code instead takes the L2 norm of the whole ``[n]`` difference vector, a
    :math:`\sqrt{n}`-scaled variant; fedgraph follows the paper.)

    Args:
        forget_score (Tensor): ``[B]`` scores of the triples to forget.
        neg_score (Tensor): ``[B, n]`` scores of their negatives.

    Returns:
        Tensor: the batch mean (a scalar).
    """
    forget_score = _check(forget_score, neg_score)
    return (neg_score - forget_score).abs().mean(dim=1).mean()


def interference_loss(
    forget_score: Tensor,
    neg_score: Tensor,
    teacher_forget_score: Tensor | None = None,
    teacher_neg_score: Tensor | None = None,
    *,
    mu_soft: float = 0.1,
    mu_distill: float = 2.0,
    hard: bool = True,
) -> Tensor:
    r"""The retroactive-interference loss of FedLU Eq. (14).

    .. math::
        \mathcal{L}^{\text{interference}} = \mathcal{L}^{\text{hard}}
        + \mu_{\text{soft}}\,\mathcal{L}^{\text{soft}}
        + \mu_{\text{distill}}\,\mathcal{L}^{\text{distill}}

    For the local embedding the teacher is the global one; for the global
    embedding the roles swap ("reversing the distillation").

    Args:
        forget_score (Tensor): ``[B]`` student scores of the triples to forget.
        neg_score (Tensor): ``[B, n]`` student scores of their negatives.
        teacher_forget_score (Tensor, optional): ``[B]`` teacher scores; no
            distillation term when omitted.
        teacher_neg_score (Tensor, optional): ``[B, n]`` teacher scores.
        mu_soft (float, optional): weight of soft confusion. (default:
            :obj:`0.1`)
        mu_distill (float, optional): weight of distillation. (default:
            :obj:`2.0`)
        hard (bool, optional): include hard confusion (``False`` gives the
            "w/o hard confusion" ablation of FedLU Table 3). (default:
            :obj:`True`)

    Returns:
        Tensor: a scalar.
    """
    loss = soft_confusion_loss(forget_score, neg_score) * mu_soft
    if hard:
        loss = loss + hard_confusion_loss(forget_score, neg_score)
    if (teacher_forget_score is None) != (teacher_neg_score is None):
        raise ValueError(
            "`teacher_forget_score` and `teacher_neg_score` must be given together"
        )
    if teacher_forget_score is not None and mu_distill != 0.0:
        loss = loss + mu_distill * distillation_loss(
            forget_score, neg_score, teacher_forget_score, teacher_neg_score
        )
    return loss


__all__ = ["hard_confusion_loss", "soft_confusion_loss", "interference_loss"]
