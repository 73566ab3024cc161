r"""Score-distribution knowledge distillation of `FedLU
<https://arxiv.org/abs/2302.02069>`_ (§4.1, Eqs. 8–10).

Pure functions on scores (higher = more plausible, as the KGE models return
them); no model, optimiser or I/O here.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor


def score_distribution(pos_score: Tensor, neg_score: Tensor) -> Tensor:
    r"""Log-probabilities of FedLU Eqs. (9)–(10): a softmax over the positive
    and its :math:`n` negatives.

    .. math::
        \mathcal{P}_{(h_i, r_i, t)} = \frac{\exp s_{(h_i, r_i, t)}}
        {\sum_{(h, r, t') \in N(h_i, r_i, t_i) \cup \{(h_i, r_i, t_i)\}}
        \exp s_{(h, r, t')}}

    Args:
        pos_score (Tensor): ``[B]`` (or ``[B, 1]``) scores of the positives.
        neg_score (Tensor): ``[B, n]`` scores of their negatives.

    Returns:
        Tensor: ``[B, 1 + n]`` log-probabilities, the positive in column 0.
    """
    pos_score = pos_score.reshape(-1, 1)
    if neg_score.dim() != 2 or neg_score.size(0) != pos_score.size(0):
        raise ValueError(
            f"`neg_score` must be [B, n] with B = {pos_score.size(0)} "
            f"(got shape {tuple(neg_score.shape)})"
        )
    return F.log_softmax(torch.cat([pos_score, neg_score], dim=1), dim=1)


def distillation_loss(
    student_pos: Tensor,
    student_neg: Tensor,
    teacher_pos: Tensor,
    teacher_neg: Tensor,
) -> Tensor:
    r"""The mutual-distillation loss of FedLU Eq. (8), for one direction.

    The teacher's distribution is a constant target (detached), the student's
    receives the gradient; the loss is averaged over the batch:

    .. math::
        \mathcal{L}^{\text{distill}} = \frac{1}{B}\sum_{i=1}^{B}
        \mathrm{KL}\big(\mathcal{P}^{\text{teacher}}_{(h_i, r_i, \cdot)}
        \,\|\, \mathcal{P}^{\text{student}}_{(h_i, r_i, \cdot)}\big)
        = \frac{1}{B}\sum_i \sum_j q_{ij}\,(\log q_{ij} - \log p_{ij})

    For the local embedding (Eq. 11) the student is the local model and the
    teacher the global one; for the global embedding the roles swap. The KL
    direction (teacher first) is the one of PyTorch's ``KLDivLoss`` with the
    student's log-probabilities as input, which FedLU's code uses.

    Args:
        student_pos (Tensor): ``[B]`` student scores of the positives.
        student_neg (Tensor): ``[B, n]`` student scores of the negatives.
        teacher_pos (Tensor): ``[B]`` teacher scores of the same positives.
        teacher_neg (Tensor): ``[B, n]`` teacher scores of the same negatives.

    Returns:
        Tensor: a scalar.
    """
    log_p = score_distribution(student_pos, student_neg)
    log_q = score_distribution(teacher_pos.detach(), teacher_neg.detach())
    if log_p.shape != log_q.shape:
        raise ValueError(
            f"Student and teacher scores must have the same shape (got "
            f"{tuple(log_p.shape)} and {tuple(log_q.shape)})"
        )
    return F.kl_div(log_p, log_q, reduction="batchmean", log_target=True)


__all__ = ["score_distribution", "distillation_loss"]
