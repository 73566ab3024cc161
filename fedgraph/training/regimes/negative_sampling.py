r"""Negative sampling: the regime of the RotatE, FedE and FedLU code."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import torch
from torch import Tensor

from fedgraph.models.kge import KGEModel
from fedgraph.models.kge.base import HEAD_BATCH, TAIL_BATCH
from fedgraph.training.regimes.base import Step, StepContext, TrainingRegime

#: the mode of a step whose sampler drew each positive's side
#: (:meth:`~fedgraph.models.samplers.NegativeSampler.sides`)
SIDED = "sided"


class NegativeSampling(TrainingRegime):
    r"""Sampled negatives scored against each positive (Bordes et al.; the
    RotatE / FedE / FedLU code), the default regime.

    For every batch and every corruption mode of the call (``modes``: head
    and/or tail corruption), one optimiser step on

    .. math::
        L = \text{loss}(s^+, s^-, w) \; [+\ \lambda\,\Omega],

    with the negatives drawn by the call's
    :class:`~fedgraph.models.samplers.NegativeSampler` and the call's
    :class:`~fedgraph.models.losses.KGELoss` (self-adversarial, sigmoid or
    margin ranking). With reciprocal relations the rows are the triples and
    their inverses, corrupted on the tail only. A sampler that draws each
    positive's side (:meth:`~fedgraph.models.samplers.NegativeSampler.sides`,
    the Bernoulli sampler) gets one step per batch instead, scoring every
    positive's negatives on its own side (:meth:`sided_step`).

    Args:
        reciprocal (bool, optional): train the inverse relations too, on
            tail corruption only. (default: :obj:`False`)
        entity_dropout (float, optional): dropout on the entity rows a step
            scores (heads, tails and negatives; a negative shared by the batch
            gets one mask), as LibKGE's embedders. (default: :obj:`0.0`)
        relation_dropout (float, optional): dropout on the relation rows.
            (default: :obj:`0.0`)

    ``regularizer`` and ``regularizer_weight`` are those of
    :class:`~fedgraph.training.regimes.base.TrainingRegime`.
    """

    name = "negative-sampling"
    aliases = ("ns",)

    def row_dropout(
        self, model: KGEModel, generator: torch.Generator
    ) -> Callable[[Tensor, Tensor], tuple[Tensor, Tensor]] | None:
        r"""The ``dropout`` of :meth:`~fedgraph.models.kge.KGEModel.score_batch`
        (entity and relation rows, masks from ``generator``), or :obj:`None`
        without dropout."""
        if self.entity_dropout == 0 and self.relation_dropout == 0:
            return None

        def drop(ent: Tensor, rel: Tensor) -> tuple[Tensor, Tensor]:
            ent = self.dropout(ent, self.entity_dropout, model, generator)
            return ent, self.dropout(rel, self.relation_dropout, model, generator)

        return drop

    def steps(
        self,
        model: KGEModel,
        drawn: Tensor,
        batch: Tensor,
        weights: Tensor | None,
        ctx: StepContext,
    ) -> Iterator[Step]:
        if ctx.loss is None or ctx.sampler is None:
            raise ValueError("negative sampling needs a `loss` and a `sampler`")
        heads = ctx.sampler.sides(drawn, ctx.generator)
        if heads is not None:
            yield self.sided_step(model, drawn, batch, weights, ctx, heads)
            return
        modes = (TAIL_BATCH,) if self.reciprocal else ctx.modes
        dropout = self.row_dropout(model, ctx.generator)
        for mode in modes:
            neg = ctx.sampler.sample(drawn, mode, ctx.generator, **ctx.options)
            neg = neg.to(batch.device)
            pos_score, neg_score = model.score_batch(batch, neg, mode, dropout)
            yield ctx.loss(pos_score, neg_score, weights), neg, mode

    def sided_step(
        self,
        model: KGEModel,
        drawn: Tensor,
        batch: Tensor,
        weights: Tensor | None,
        ctx: StepContext,
        heads: Tensor,
    ) -> Step:
        r"""One step whose negatives replace each positive's head where
        ``heads`` (``[B]``, the sampler's ``sides``) is true, else its tail;
        its mode is :data:`SIDED`."""
        if self.reciprocal:
            raise ValueError(
                f"{type(ctx.sampler).__name__} draws a side per positive; with "
                "reciprocal relations only tails are corrupted (set "
                "`reciprocal=False` or use the uniform sampler)"
            )
        assert ctx.loss is not None and ctx.sampler is not None
        neg = ctx.sampler.sample(drawn, heads, ctx.generator, **ctx.options)
        neg, heads = neg.to(batch.device), heads.to(batch.device)
        dropout = self.row_dropout(model, ctx.generator)
        pos_score, head_score = model.score_batch(batch, neg, HEAD_BATCH, dropout)
        tail_score = model.score_batch(batch, neg, TAIL_BATCH, dropout)[1]
        neg_score = torch.where(heads[:, None], head_score, tail_score)
        return ctx.loss(pos_score, neg_score, weights), neg, SIDED


__all__ = ["NegativeSampling", "SIDED"]
