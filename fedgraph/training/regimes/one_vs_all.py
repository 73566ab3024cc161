r"""1-vs-all training: every entity is a candidate answer of every query."""

from __future__ import annotations

from torch import Tensor

from fedgraph.models.kge import KGEModel
from fedgraph.models.kge.base import HEAD_BATCH, TAIL_BATCH
from fedgraph.training.regimes.base import (
    AllEntityRegime,
    ScoredQueries,
    StepContext,
)


class OneVsAll(AllEntityRegime):
    r"""1-vs-all (Lacroix et al., ICML 2018; LibKGE's ``1vsAll``): every
    entity is a candidate answer of every training query.

    Each training triple :math:`(h, r, t)` is a tail query scored against every
    entity, with :math:`t` its one answer, and (without reciprocal
    relations, when ``modes`` holds head corruption) a head query with
    answer :math:`h`; one optimiser step per batch on

    .. math::
        L = \sum_{\text{directions}} \frac{\sum_b w_b\,
            \ell\big(s(h_b, r_b, \cdot), t_b\big)}{\sum_b w_b}
            \; [+\ \lambda\,\Omega],

    :math:`\ell` the cross-entropy or the binary cross-entropy over all
    entities with label smoothing
    (:func:`~fedgraph.training.regimes.base.all_entity_loss`). The scores
    are the model's all-entity scoring (:meth:`KGEModel.score_t` /
    :meth:`KGEModel.score_h`, the same as evaluation's).

    Its arguments (``loss``, by default ``"ce"``, ``label_smoothing`` and
    the options of every regime) are those of
    :class:`~fedgraph.training.regimes.base.AllEntityRegime`.
    """

    name = "1vsall"
    aliases = ("1-vs-all",)

    def score_queries(
        self,
        model: KGEModel,
        batch: Tensor,
        weights: Tensor | None,
        ctx: StepContext,
    ) -> list[ScoredQueries]:
        r"""The tail queries of ``batch`` (``[B, 3]`` triples) and, without
        reciprocal relations, its head queries when ``ctx.modes`` holds head
        corruption, each against every entity."""
        h, r, t = batch.unbind(1)
        modes = (TAIL_BATCH,) if self.reciprocal else tuple(ctx.modes)
        parts = []
        for mode in modes:
            if mode == TAIL_BATCH:
                scores = self.all_entity_scores(model, h, r, "tail", ctx.generator)
                parts.append(ScoredQueries(scores, t, weights, 1.0))
            elif mode == HEAD_BATCH:
                scores = self.all_entity_scores(model, t, r, "head", ctx.generator)
                parts.append(ScoredQueries(scores, h, weights, 1.0))
        if not parts:
            raise ValueError(f"`modes` must name {TAIL_BATCH!r} or {HEAD_BATCH!r}")
        return parts


__all__ = ["OneVsAll"]
