r"""The training regime of a KGE model: what one optimiser step scores and
which loss it takes (negative sampling, 1-vs-all, k-vs-all), with the
options every regime shares: reciprocal relations, a weighted regulariser
(N3, L2) and entity / relation dropout.

A regime is configuration only; the per-graph data it trains on (its
training rows, their weights and, for k-vs-all, the label index) comes from
:meth:`TrainingRegime.prepare`, and
:func:`~fedgraph.training.kge_trainer.train_steps` runs its
:meth:`TrainingRegime.steps`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor

from fedgraph.eval.ranking import TripleFilter
from fedgraph.models.kge import KGEModel
from fedgraph.models.losses import KGELoss
from fedgraph.models.samplers import NegativeSampler
from fedgraph.training.regimes.reciprocal import (
    ReciprocalScorer,
    inverse_triples,
    with_inverse_relations,
)
from fedgraph.training.regimes.regularizers import Regularizer, resolve_regularizer
from fedgraph.validate import check_number

#: one optimiser step: the loss, the negatives it scored (:obj:`None` when it
#: scored every entity) and its corruption mode (what ``extra_loss`` receives)
Step = tuple[Tensor, Tensor | None, str]

#: the losses of the all-entity regimes
ALL_ENTITY_LOSSES = ("ce", "bce")


class TrainingData(NamedTuple):
    r"""What a regime trains on for one graph: ``items`` (``[n, 3]`` rows an
    epoch shuffles and batches), their ``[n]`` loss ``weights`` (or
    :obj:`None`) and, for k-vs-all, the ``labels`` index of true answers."""

    items: Tensor
    weights: Tensor | None
    labels: TripleFilter | None = None


@dataclass
class StepContext:
    r"""The tools of one training call that a regime's steps use: the
    negative-sampling ``loss``, ``sampler`` and ``modes``, the ``generator``,
    the sampler's ``options`` and the ``labels`` of :class:`TrainingData`."""

    loss: KGELoss | None
    sampler: NegativeSampler | None
    modes: Sequence[str]
    generator: torch.Generator
    options: dict[str, Any] = field(default_factory=dict)
    labels: TripleFilter | None = None


def _probability(value: Any, name: str) -> float:
    value = check_number(value, name, low=0.0, strict=False)
    if value >= 1.0:
        raise ValueError(f"`{name}` must be in [0, 1) (got {value})")
    return value


class TrainingRegime(ABC):
    r"""Base class of the training regimes.

    Args:
        reciprocal (bool, optional): train relation :math:`r` and its inverse
            :math:`r + R` on tail queries only
            (:mod:`~fedgraph.training.regimes.reciprocal`).
            (default: :obj:`False`)
        regularizer (str, optional): ``"n3"``, ``"l2"`` or ``"none"``
            (:mod:`~fedgraph.training.regimes.regularizers`).
            (default: ``"none"``)
        regularizer_weight (float, optional): its weight :math:`\lambda`.
            (default: :obj:`0.0`)
        entity_dropout (float, optional): dropout on the entity embeddings
            a training step scores (queries and candidates, or positives and
            negatives), in :math:`[0, 1)`. (default: :obj:`0.0`)
        relation_dropout (float, optional): dropout on relation embeddings
            in training, in :math:`[0, 1)`. (default: :obj:`0.0`)
    """

    def __init__(
        self,
        *,
        reciprocal: bool = False,
        regularizer: str | None = "none",
        regularizer_weight: float = 0.0,
        entity_dropout: float = 0.0,
        relation_dropout: float = 0.0,
    ) -> None:
        if not isinstance(reciprocal, bool):
            raise ValueError(f"`reciprocal` must be true or false (got {reciprocal!r})")
        self.reciprocal = reciprocal
        self.regularizer = "none" if regularizer is None else str(regularizer)
        self.regularizer_weight = check_number(
            regularizer_weight, "regularizer_weight", low=0.0, strict=False
        )
        if self.regularizer.lower() == "none" and self.regularizer_weight > 0:
            raise ValueError(
                "`regularizer_weight` needs a `regularizer` ('n3' or 'l2'; got "
                f"'none' with weight {self.regularizer_weight})"
            )
        self.penalty: Regularizer | None = resolve_regularizer(
            self.regularizer, self.regularizer_weight
        )
        self.entity_dropout = _probability(entity_dropout, "entity_dropout")
        self.relation_dropout = _probability(relation_dropout, "relation_dropout")

    # ---------------------------------------------------------------- setup
    def model_relations(self, num_relations: int) -> int:
        r"""The relations the model needs for a graph of ``num_relations``:
        twice as many with reciprocal relations."""
        return 2 * num_relations if self.reciprocal else num_relations

    def adapt(self, model: KGEModel, num_relations: int) -> KGEModel:
        r"""``model`` ready for this regime on a graph of ``num_relations``
        (with reciprocal relations: :func:`with_inverse_relations`)."""
        if self.reciprocal:
            return with_inverse_relations(model, num_relations)
        return model

    def scorer(self, model: Any, num_relations: int) -> Any:
        r"""What evaluation ranks with: ``model``, or with reciprocal
        relations its :class:`ReciprocalScorer` over ``num_relations``."""
        if self.reciprocal and getattr(model, "num_relations", 0) == 2 * num_relations:
            return ReciprocalScorer(model, num_relations)
        return model

    def prepare(
        self,
        triples: Tensor,
        weights: Tensor | None,
        num_entities: int,
        num_relations: int,
    ) -> TrainingData:
        r"""The rows an epoch trains on: ``triples`` (``[n, 3]``) with their
        ``weights``, followed by their inverses (same weights) with
        reciprocal relations."""
        if not self.reciprocal:
            return TrainingData(triples, weights)
        items = inverse_triples(triples, num_relations)
        return TrainingData(items, None if weights is None else weights.repeat(2))

    # ---------------------------------------------------------------- steps
    @abstractmethod
    def steps(
        self,
        model: KGEModel,
        drawn: Tensor,
        batch: Tensor,
        weights: Tensor | None,
        ctx: StepContext,
    ) -> Iterator[Step]:
        r"""The optimiser steps of one batch (``batch`` on the model's device,
        ``drawn`` where the samples are drawn), each yielded *before* the
        next is computed (the caller steps the optimiser in between)."""

    def regularization(self, model: KGEModel, batch: Tensor) -> Tensor | None:
        r"""The regulariser's value on ``batch`` (``[B, 3]`` triples), or
        :obj:`None` without one."""
        if self.penalty is None or self.penalty.weight == 0:
            return None
        return self.penalty(model, batch)

    def dropout(
        self, values: Tensor, p: float, model: KGEModel, generator: torch.Generator
    ) -> Tensor:
        r"""Inverted dropout of ``values`` with probability ``p`` while
        ``model`` trains, its mask drawn from ``generator`` (a resumed run
        draws the same masks); ``values`` unchanged in evaluation."""
        if p == 0 or not model.training:
            return values
        keep = torch.rand(values.shape, generator=generator, device=generator.device)
        mask = (keep >= p).to(device=values.device, dtype=values.dtype)
        return values * mask / (1.0 - p)

    def all_entity_scores(
        self,
        model: KGEModel,
        anchor: Tensor,
        rel: Tensor,
        direction: str,
        generator: torch.Generator,
    ) -> Tensor:
        r"""``[B, N]`` scores of every entity as the tail of ``(anchor, rel)``
        (``direction="tail"``) or the head of ``(rel, anchor)`` (``"head"``),
        the model's all-entity scoring (differentiable), with this regime's
        dropout on the query and candidate embeddings."""
        if self.entity_dropout == 0 and self.relation_dropout == 0:
            if direction == "tail":
                return model.score_t(anchor, rel)
            return model.score_h(rel, anchor)
        ent = model.entity_embedding
        a = self.dropout(ent(anchor), self.entity_dropout, model, generator)
        r = model.relation_embedding(rel)
        r = self.dropout(r, self.relation_dropout, model, generator)
        cand = self.dropout(ent.weight, self.entity_dropout, model, generator)
        if direction == "tail":
            return model.score_tails(a, r, cand)
        return model.score_heads(r, a, cand)

    def _options(self) -> dict[str, Any]:
        return {
            "reciprocal": self.reciprocal,
            "regularizer": self.regularizer,
            "regularizer_weight": self.regularizer_weight,
            "entity_dropout": self.entity_dropout,
            "relation_dropout": self.relation_dropout,
        }

    def settings(self) -> dict[str, Any]:
        r"""The constructor arguments, as a run records them."""
        return self._options()

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.settings().items())
        return f"{type(self).__name__}({args})"


class ScoredQueries(NamedTuple):
    r"""One part of a step of an all-entity regime: ``[b, N]`` ``scores`` of
    every entity for ``b`` queries, their ``targets`` (``[b]`` answer ids or
    a ``[b, N]`` 0/1 matrix), their ``[b]`` loss ``weights`` (or
    :obj:`None`) and the ``scale`` of the part's mean loss in the step's."""

    scores: Tensor
    targets: Tensor
    weights: Tensor | None
    scale: float


class AllEntityRegime(TrainingRegime):
    r"""Base class of the regimes that score every entity for each query
    (1-vs-all, k-vs-all): :meth:`score_queries` scores a batch, and one
    optimiser step per batch takes :meth:`loss_of` its parts (what FedLU's
    mutual distillation also reads,
    :func:`~fedgraph.training.mutual_regime.mutual_regime_epochs`).

    Args:
        loss (str, optional): ``"ce"`` or ``"bce"``
            (:func:`all_entity_loss`). (default: ``"ce"``)
        label_smoothing (float, optional): :math:`\epsilon \in [0, 1)`.
            (default: :obj:`0.0`)
        **kwargs: the options of every regime, keyword only
            (:class:`TrainingRegime`): ``reciprocal``, ``regularizer``,
            ``regularizer_weight``, ``entity_dropout``, ``relation_dropout``.
    """

    def __init__(
        self, loss: str = "ce", label_smoothing: float = 0.0, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.loss, self.label_smoothing = check_all_entity_loss(loss, label_smoothing)

    @abstractmethod
    def score_queries(
        self,
        model: KGEModel,
        batch: Tensor,
        weights: Tensor | None,
        ctx: StepContext,
    ) -> list[ScoredQueries]:
        r"""The scored parts of one batch (``batch`` on the model's device)."""

    def loss_of(self, parts: Sequence[ScoredQueries]) -> Tensor | None:
        r""":math:`\sum_{\text{parts}} \text{scale} \cdot` the part's
        :func:`all_entity_loss`; :obj:`None` without parts."""
        total = None
        for part in parts:
            value = all_entity_loss(
                part.scores,
                part.targets,
                self.loss,
                self.label_smoothing,
                part.weights,
            )
            value = value if part.scale == 1 else value * part.scale
            total = value if total is None else total + value
        return total

    def steps(
        self,
        model: KGEModel,
        drawn: Tensor,
        batch: Tensor,
        weights: Tensor | None,
        ctx: StepContext,
    ) -> Iterator[Step]:
        value = self.loss_of(self.score_queries(model, batch, weights, ctx))
        if value is None:
            value = model.entity_embedding.weight.new_zeros(())
        yield value, None, "tail-batch"

    def settings(self) -> dict[str, Any]:
        return {
            "loss": self.loss,
            "label_smoothing": self.label_smoothing,
            **self._options(),
        }


def all_entity_loss(
    scores: Tensor,
    targets: Tensor,
    loss: str,
    label_smoothing: float,
    weights: Tensor | None = None,
) -> Tensor:
    r"""The loss of ``[B, N]`` all-entity ``scores`` against ``targets``:
    ``[B]`` answer ids (1-vs-all) or a ``[B, N]`` 0/1 matrix (k-vs-all).

    With :math:`\epsilon` = ``label_smoothing`` and :math:`y` the target
    distribution (the 0/1 row divided by its sum) for ``"ce"``, or the 0/1
    row itself for ``"bce"``, the smoothed target is
    :math:`\tilde y = (1 - \epsilon)\,y + \epsilon / N` and the row losses are

    .. math::
        l_b^{\text{ce}} = -\sum_e \tilde y_{b,e} \log \operatorname{softmax}(s_b)_e,
        \qquad
        l_b^{\text{bce}} = \sum_e \operatorname{BCE}(\sigma(s_{b,e}), \tilde y_{b,e}),

    reduced by the weighted mean :math:`\sum_b w_b l_b / \sum_b w_b` (the
    plain mean without ``weights``).
    """
    if loss == "ce" and targets.dim() == 1:
        rows = F.cross_entropy(
            scores, targets, label_smoothing=label_smoothing, reduction="none"
        )
    else:
        dense = targets
        if targets.dim() == 1:
            dense = F.one_hot(targets, scores.size(1)).to(scores.dtype)
        if loss == "ce":
            dense = dense / dense.sum(1, keepdim=True).clamp_min(1.0)
        smooth = (1.0 - label_smoothing) * dense + label_smoothing / scores.size(1)
        if loss == "ce":
            rows = -(smooth * F.log_softmax(scores, dim=1)).sum(1)
        else:
            rows = F.binary_cross_entropy_with_logits(
                scores, smooth, reduction="none"
            ).sum(1)
    if weights is None:
        return rows.mean()
    return (weights * rows).sum() / weights.sum()


def check_all_entity_loss(loss: Any, label_smoothing: Any) -> tuple[str, float]:
    r"""``(loss, label_smoothing)`` checked: a loss in
    :data:`ALL_ENTITY_LOSSES` and a smoothing in :math:`[0, 1)`."""
    if loss not in ALL_ENTITY_LOSSES:
        raise ValueError(
            f"`regime_loss` must be one of {list(ALL_ENTITY_LOSSES)} (got {loss!r})"
        )
    return str(loss), _probability(label_smoothing, "label_smoothing")


__all__ = [
    "TrainingRegime",
    "AllEntityRegime",
    "ScoredQueries",
    "TrainingData",
    "StepContext",
    "Step",
    "ALL_ENTITY_LOSSES",
    "all_entity_loss",
    "check_all_entity_loss",
]
