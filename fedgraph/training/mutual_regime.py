r"""FedLU's mutual knowledge distillation (§4.1, Eq. 11) under an all-entity
training regime (1-vs-all, k-vs-all; :mod:`fedgraph.training.regimes`).

With negative sampling FedLU distils the distribution of a positive's and its
negatives' scores (:func:`~fedgraph.training.mutual.mutual_epochs`); here the
candidates are every entity, so the distilled distribution is the softmax of
a query's scores over all entities:

.. math::
    \mathcal{L}^{\text{distill}} = \frac{1}{b}\sum_{q}
    \mathrm{KL}\big(\operatorname{softmax}(s^{\text{teacher}}_q)
    \,\|\, \operatorname{softmax}(s^{\text{student}}_q)\big),

summed over the step's parts with their scales, as the regime's loss is. The
teacher scores without dropout.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

from fedgraph.eval.ranking import TripleFilter
from fedgraph.models.kge import MODES, KGEModel
from fedgraph.training.regimes import (
    AllEntityRegime,
    ScoredQueries,
    StepContext,
    TrainingData,
)
from fedgraph.training.sample_on import check_sample_on, epoch_batches


def all_entity_distillation(
    student: Sequence[ScoredQueries], teacher: Sequence[ScoredQueries]
) -> Tensor:
    r""":math:`\sum_{\text{parts}} \text{scale} \cdot` the batch-mean KL
    divergence of the teacher's all-entity distribution (detached) from the
    student's, part by part."""
    total = None
    for s, t in zip(student, teacher, strict=True):
        log_p = F.log_softmax(s.scores, dim=1)
        log_q = F.log_softmax(t.scores.detach(), dim=1)
        value = s.scale * F.kl_div(log_p, log_q, reduction="batchmean", log_target=True)
        total = value if total is None else total + value
    if total is None:
        raise ValueError("no scored queries to distil")
    return total


def _teacher(
    regime: AllEntityRegime, model: KGEModel, batch: Tensor, ctx: StepContext
) -> list[ScoredQueries]:
    r"""The teacher's parts: scored without gradient and without dropout."""
    was = model.training
    model.eval()
    with torch.no_grad():
        parts = regime.score_queries(model, batch, None, ctx)
    model.train(was)
    return parts


def _student_loss(
    regime: AllEntityRegime,
    model: KGEModel,
    teacher: KGEModel,
    batch: Tensor,
    weights: Tensor | None,
    mu: float,
    ctx: StepContext,
) -> Tensor:
    r"""The regime's loss of ``model`` on ``batch`` (with its regulariser),
    plus ``mu`` times the distillation from ``teacher`` (none for 0)."""
    parts = regime.score_queries(model, batch, weights, ctx)
    value = regime.loss_of(parts)
    if value is None:
        raise ValueError("no scored queries in the batch")
    penalty = regime.regularization(model, batch)
    if penalty is not None:
        value = value + penalty
    if mu:
        value = value + mu * all_entity_distillation(
            parts, _teacher(regime, teacher, batch, ctx)
        )
    return value


def _step(opt: torch.optim.Optimizer, value: Tensor) -> Tensor:
    opt.zero_grad(set_to_none=True)
    value.backward()
    opt.step()
    return value.detach().double()


def mutual_regime_epochs(
    local: KGEModel,
    glob: KGEModel,
    data: TrainingData,
    *,
    regime: AllEntityRegime,
    epochs: int,
    batch_size: int,
    local_optimizer: torch.optim.Optimizer,
    global_optimizer: torch.optim.Optimizer,
    generator: torch.Generator,
    mu_distill: float = 2.0,
    mu_global: float | None = None,
    modes: Sequence[str] = MODES,
    labels: TripleFilter | None = None,
    sample_on: str = "host",
) -> tuple[float, float]:
    r"""FedLU's learning (Algorithm 1, lines 6–7) under ``regime``: for each
    batch of ``data.items``, one step of the local model on the regime's
    loss plus ``mu_distill`` times the distillation from the global model,
    then one step of the global model with the roles swapped (``mu_global``;
    :obj:`None`: ``mu_distill``). Batches are drawn as in
    :func:`~fedgraph.training.kge_trainer.train_epochs`.

    Returns:
        tuple[float, float]: the mean local and global losses.
    """
    check_sample_on(sample_on)
    mu_local = float(mu_distill)
    mu_glob = mu_local if mu_global is None else float(mu_global)
    ctx = StepContext(None, None, tuple(modes), generator, {}, labels)
    total_l = torch.zeros((), dtype=torch.float64, device=local.device)
    total_g, steps = total_l.clone(), 0
    for _ in range(int(epochs)):
        for _drawn, batch, w in epoch_batches(
            data.items,
            data.weights,
            batch_size=batch_size,
            generator=generator,
            device=local.device,
            sample_on=sample_on,
        ):
            value = _student_loss(regime, local, glob, batch, w, mu_local, ctx)
            total_l += _step(local_optimizer, value)
            value = _student_loss(regime, glob, local, batch, w, mu_glob, ctx)
            total_g += _step(global_optimizer, value)
            steps += 1
    return float(total_l) / max(1, steps), float(total_g) / max(1, steps)


__all__ = ["mutual_regime_epochs", "all_entity_distillation"]
