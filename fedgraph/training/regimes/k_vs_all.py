r"""k-vs-all training: each distinct query against every entity, all its
known answers at once."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from fedgraph.eval.ranking import TripleFilter
from fedgraph.models.kge import KGEModel
from fedgraph.models.kge.base import HEAD_BATCH, TAIL_BATCH
from fedgraph.training.regimes.base import (
    AllEntityRegime,
    ScoredQueries,
    StepContext,
    TrainingData,
)
from fedgraph.training.regimes.regularizers import moduli

#: the direction codes of a k-vs-all query row ``(anchor, relation, code)``
TAIL, HEAD = 0, 1


def distinct_queries(triples: Tensor, code: int) -> Tensor:
    r"""``[q, 3]`` distinct ``(anchor, relation, code)`` rows of ``triples``:
    ``(h, r)`` pairs for :data:`TAIL` queries, ``(t, r)`` for :data:`HEAD`."""
    anchor = triples[:, 0] if code == TAIL else triples[:, 2]
    pairs = torch.unique(torch.stack([anchor, triples[:, 1]], dim=1), dim=0)
    return torch.cat([pairs, torch.full_like(pairs[:, :1], code)], dim=1)


class KvsAll(AllEntityRegime):
    r"""k-vs-all (Dettmers et al., AAAI 2018; LibKGE's ``KvsAll``): each
    distinct query against every entity, all its known answers at once.

    The rows an epoch shuffles are the distinct queries :math:`(h, r, ?)` of the
    training triples (and :math:`(?, r, t)` without reciprocal relations),
    each scored against every entity with the 0/1 vector of all its training
    answers as target; one optimiser step per batch of queries on the mean
    over its queries of
    :func:`~fedgraph.training.regimes.base.all_entity_loss` (``"bce"``: the
    summed binary cross-entropy; ``"ce"``: the cross-entropy against the
    answers' uniform distribution), plus the regulariser on the queries'
    anchor and relation embeddings. Per-triple weights do not apply (a row
    is a query) and are dropped; head queries are trained only when
    ``modes`` holds head corruption.

    Args:
        loss (str, optional): ``"bce"`` (Dettmers et al.'s) or ``"ce"``.
            (default: ``"bce"``)
        **options: ``label_smoothing`` and the options of every regime, as
            :class:`~fedgraph.training.regimes.base.AllEntityRegime` takes
            them.
    """

    name = "kvsall"
    aliases = ("k-vs-all",)

    def __init__(self, loss: str = "bce", **options: Any) -> None:
        super().__init__(loss, **options)

    def prepare(
        self,
        triples: Tensor,
        weights: Tensor | None,
        num_entities: int,
        num_relations: int,
    ) -> TrainingData:
        r"""The distinct queries of ``triples`` (with their inverses under
        reciprocal relations) and the index of their answers."""
        rows = super().prepare(triples, None, num_entities, num_relations).items
        labels = TripleFilter(rows, num_entities, self.model_relations(num_relations))
        queries = [distinct_queries(rows, TAIL)]
        if not self.reciprocal:
            queries.append(distinct_queries(rows, HEAD))
        return TrainingData(torch.cat(queries), None, labels)

    def score_queries(
        self,
        model: KGEModel,
        batch: Tensor,
        weights: Tensor | None,
        ctx: StepContext,
    ) -> list[ScoredQueries]:
        r"""The queries of ``batch`` (``[B, 3]`` rows ``(anchor, relation,
        code)``) against every entity, one part per direction, each with the
        0/1 matrix of its answers (``ctx.labels``) and the scale
        :math:`b / B` (the step's loss is the mean over the batch)."""
        if ctx.labels is None:
            raise ValueError("k-vs-all needs the `labels` of its prepared data")
        anchor, rel, code = batch.unbind(1)
        modes = set(ctx.modes) | ({TAIL_BATCH} if self.reciprocal else set())
        parts = []
        for value, name, mode in (
            (TAIL, "tail", TAIL_BATCH),
            (HEAD, "head", HEAD_BATCH),
        ):
            sel = (code == value).nonzero().squeeze(1)
            if mode not in modes or sel.numel() == 0:
                continue
            a, r = anchor[sel], rel[sel]
            scores = self.all_entity_scores(model, a, r, name, ctx.generator)
            row, ent = ctx.labels.true_answers(a, r, name)
            target = torch.zeros_like(scores)
            target[row, ent] = 1.0
            parts.append(ScoredQueries(scores, target, None, sel.numel() / len(batch)))
        return parts

    def regularization(self, model: KGEModel, batch: Tensor) -> Tensor | None:
        r"""The regulariser on the queries' anchor and relation embeddings
        (``batch``: ``[B, 3]`` query rows)."""
        if self.penalty is None or self.penalty.weight == 0:
            return None
        anchor, rel, _ = batch.unbind(1)
        factors = (
            moduli(model.entity_embedding(anchor), model.entity_factor),
            moduli(model.relation_embedding(rel), model.relation_factor),
        )
        return self.penalty.of(factors, batch.size(0))


__all__ = ["KvsAll", "distinct_queries", "TAIL", "HEAD"]
