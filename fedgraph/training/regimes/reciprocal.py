r"""Reciprocal relations (Lacroix et al., ICML 2018; Kazemi & Poole, 2018):
each relation :math:`r` gets an inverse :math:`r^{-1} = r + R`, a training
triple :math:`(h, r, t)` also trains :math:`(t, r^{-1}, h)`, and every query
is a tail query: :math:`(h, r, ?)` and :math:`(t, r^{-1}, ?)`. Evaluation
scores a head query :math:`(?, r, t)` as the tail query :math:`(t, r^{-1}, ?)`
(:class:`ReciprocalScorer`), so the filtered ranking of
:func:`~fedgraph.eval.ranking.rank_triples` is unchanged: its filter holds the
original triples, indexed by the original relation ids.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from fedgraph.models.kge import KGEModel


def inverse_triples(triples: Tensor, num_relations: int) -> Tensor:
    r"""``[2n, 3]``: ``triples`` followed by their inverses
    :math:`(t, r + R, h)` (``R`` = ``num_relations``)."""
    h, r, t = triples.unbind(1)
    inverse = torch.stack([t, r + int(num_relations), h], dim=1)
    return torch.cat([triples, inverse])


def with_inverse_relations(model: KGEModel, num_relations: int) -> KGEModel:
    r"""``model`` with ``2 R`` relations (``R`` = ``num_relations``): returned
    as is when it has them already; when it has ``R``, its relation table is
    extended in place by ``R`` inverse rows initialised like
    :meth:`~fedgraph.models.kge.KGEModel.reset_parameters` (uniform in
    :math:`[-\rho, \rho]`, from the global random stream), the original rows
    kept.

    Raises:
        ValueError: if ``model`` has neither ``R`` nor ``2 R`` relations.
    """
    if model.num_relations == 2 * num_relations:
        return model
    if model.num_relations != num_relations:
        raise ValueError(
            f"`model` must have {num_relations} relations, or {2 * num_relations} "
            f"with their inverses, for reciprocal training (got {model.num_relations})"
        )
    old = model.relation_embedding.weight
    table = nn.Embedding(2 * num_relations, old.size(1)).to(old.device, old.dtype)
    with torch.no_grad():
        rho = model.embedding_range
        table.weight.uniform_(-rho, rho)
        table.weight[:num_relations] = old
    model.relation_embedding = table
    model.num_relations = 2 * num_relations
    return model


class ReciprocalScorer(nn.Module):
    r"""The scoring API of a model trained with reciprocal relations, over
    the original ``num_relations`` ids: tails as the model scores them, heads
    through the inverse relation,

    .. math::
        s(?, r, t) = f(t, r + R, ?),

    what :func:`~fedgraph.eval.ranking.rank_triples` needs (``num_entities``,
    ``num_relations``, :meth:`score_t`, :meth:`score_h`).

    Args:
        model (KGEModel): a model with ``2 R`` relations (the inverses last).
        num_relations (int): :math:`R`, the original relations.
    """

    def __init__(self, model: Any, num_relations: int) -> None:
        super().__init__()
        if model.num_relations != 2 * num_relations:
            raise ValueError(
                f"`model` must have {2 * num_relations} relations (the "
                f"{num_relations} given and their inverses; got {model.num_relations})"
            )
        self.model = model
        self.num_entities = model.num_entities
        self.num_relations = int(num_relations)

    def score_t(self, head: Tensor, rel: Tensor, candidates: Tensor | None = None):
        r"""``[B, C]`` scores of the candidate tails of ``(head, rel)``."""
        return self.model.score_t(head, rel, candidates)

    def score_h(self, rel: Tensor, tail: Tensor, candidates: Tensor | None = None):
        r"""``[B, C]`` scores of the candidate heads of ``(rel, tail)``: the
        tails of ``(tail, rel + R)``."""
        return self.model.score_t(tail, rel + self.num_relations, candidates)

    def score_hrt(self, head: Tensor, rel: Tensor, tail: Tensor) -> Tensor:
        r"""``[B]`` scores of ``(head, rel, tail)`` (the forward relation)."""
        return self.model.score_hrt(head, rel, tail)

    def forward(self, head: Tensor, rel: Tensor, tail: Tensor) -> Tensor:
        return self.score_hrt(head, rel, tail)

    def __repr__(self) -> str:
        return f"ReciprocalScorer({self.model!r}, num_relations={self.num_relations})"


__all__ = ["inverse_triples", "with_inverse_relations", "ReciprocalScorer"]
