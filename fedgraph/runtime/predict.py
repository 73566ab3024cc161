r"""Top-k answers of a trained model, by name: what
:meth:`~fedgraph.runtime.PipelineResult.predict` and ``fedgraph predict``
ask.

A :class:`TrainedKGE` is one client's KGE model with its vocabulary (entity
and relation names in the model's id order) and its known triples (train and
valid); :meth:`TrainedKGE.top_k` scores every entity with the model's own
``score_t`` / ``score_h`` (the scoring of the filtered ranking,
:mod:`fedgraph.eval.ranking`) and, filtered, masks the known answers with a
:class:`~fedgraph.eval.ranking.TripleFilter`. A :class:`TrainedRGCN` is one
client's R-GCN with its graph: :meth:`TrainedRGCN.class_scores` gives an
entity's class probabilities. Both turn into plain tensors, strings and
numbers (:meth:`to_state`), which ``torch.load(weights_only=True)`` reads
back.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import torch
from torch import Tensor

from fedgraph.eval.ranking import TripleFilter


class Prediction(NamedTuple):
    r"""One answer: the entity's (or class's) ``name``, its ``id`` in the
    model and its ``score`` (a class probability for the R-GCN)."""

    name: str
    id: int
    score: float


def lookup(name: str, names: Sequence[str], what: str) -> int:
    r"""The id of ``name`` among ``names``, or a one-line
    :class:`ValueError` naming ``what`` (e.g. ``"`head`"``) and the closest
    names (:func:`difflib.get_close_matches`)."""
    try:
        return list(names).index(name)
    except ValueError:
        close = difflib.get_close_matches(str(name), list(names), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ValueError(
            f"{what} {name!r} is not a name of this model ({len(names)} known){hint}"
        ) from None


@dataclass
class TrainedKGE:
    r"""One trained KGE model with its names and known triples.

    Args:
        model (KGEModel): the scorer (the model the run tested: for FedE
            evaluating with the server's rows, the client's model with them).
        spec (dict): what rebuilds it: ``name`` (the model's registry name),
            ``num_entities``, ``num_relations``, ``hidden_channels``,
            ``gamma``, ``kwargs`` (its own hyperparameters) and
            ``reciprocal`` (trained with reciprocal relations: twice the
            relations, the inverses last).
        entity_names (list[str]): name of each entity id.
        relation_names (list[str]): name of each relation id.
        known (Tensor): ``[n, 3]`` the known true triples (train and valid),
            the filter of a filtered query.
    """

    model: Any
    spec: dict[str, Any]
    entity_names: list[str]
    relation_names: list[str]
    known: Tensor
    _filter: TripleFilter | None = field(default=None, repr=False)

    def top_k(
        self,
        *,
        head: str | None = None,
        relation: str,
        tail: str | None = None,
        k: int = 10,
        filtered: bool = True,
    ) -> list[Prediction]:
        r"""The ``k`` best tails of ``(head, relation, ?)`` or heads of
        ``(?, relation, tail)`` (give one of ``head`` and ``tail``), best
        first, ties in id order; ``filtered``: without the known answers
        (fewer than ``k`` when few are left)."""
        direction, anchor = _query(head, tail)
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"`k` must be a positive integer (got {k!r})")
        a = torch.tensor([lookup(anchor, self.entity_names, f"`{direction[1]}`")])
        r = torch.tensor([lookup(relation, self.relation_names, "`relation`")])
        scores = self.scores(a, r, direction[0], filtered)[0]
        order = torch.sort(scores, descending=True, stable=True).indices
        order = order[torch.isfinite(scores[order])][:k]
        return [
            Prediction(self.entity_names[i], int(i), float(scores[i]))
            for i in order.tolist()
        ]

    @torch.no_grad()
    def scores(
        self, anchor: Tensor, rel: Tensor, direction: str, filtered: bool = True
    ) -> Tensor:
        r"""``[B, num_entities]`` scores of every entity as the ``direction``
        (``"tail"`` or ``"head"``) of each ``(anchor, rel)`` query; known
        answers are ``-inf`` when ``filtered``."""
        scorer = self.scorer
        was_training = self.model.training
        self.model.eval()
        if direction == "tail":
            out = scorer.score_t(anchor, rel).float().clone()
        else:
            out = scorer.score_h(rel, anchor).float().clone()
        self.model.train(was_training)
        if filtered:
            rows, answers = self.filter.true_answers(anchor, rel, direction)
            out[rows, answers] = float("-inf")
        return out

    @property
    def scorer(self) -> Any:
        r"""What scores the queries: the model, or for a model trained with
        reciprocal relations (``spec["reciprocal"]``) its
        :class:`~fedgraph.training.regimes.reciprocal.ReciprocalScorer`
        (heads through the inverse relations), as the evaluation scores."""
        if not self.spec.get("reciprocal"):
            return self.model
        from fedgraph.training.regimes.reciprocal import ReciprocalScorer

        return ReciprocalScorer(self.model, len(self.relation_names))

    @property
    def filter(self) -> TripleFilter:
        r"""The known triples, indexed (built on first use)."""
        if self._filter is None:
            self._filter = TripleFilter(
                self.known, self.spec["num_entities"], self.spec["num_relations"]
            )
        return self._filter

    def to_state(self) -> dict[str, Any]:
        r"""Tensors, strings and numbers only (``weights_only`` loads them)."""
        return {
            "kind": "kge",
            "spec": dict(self.spec),
            "state_dict": {k: v.cpu() for k, v in self.model.state_dict().items()},
            "entity_names": list(self.entity_names),
            "relation_names": list(self.relation_names),
            "known": self.known.cpu(),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> TrainedKGE:
        r"""The model :meth:`to_state` wrote, rebuilt from its registry name."""
        from fedgraph.models.kge import resolve_model

        s = state["spec"]
        model = resolve_model(
            s["name"],
            s["num_entities"],
            s["num_relations"],
            s["hidden_channels"],
            gamma=s["gamma"],
            **s.get("kwargs", {}),
        )
        model.load_state_dict(state["state_dict"])
        return cls(
            model,
            dict(s),
            list(state["entity_names"]),
            list(state["relation_names"]),
            state["known"],
        )


def _query(head: str | None, tail: str | None) -> tuple[tuple[str, str], str]:
    r"""``(("tail", "head"), head)`` for a tail query, ``(("head", "tail"),
    tail)`` for a head query: the predicted side, the given side's argument
    name, and the given entity."""
    if (head is None) == (tail is None):
        raise ValueError(
            "give exactly one of `head` (to predict tails) and `tail` (to predict "
            f"heads) (got head={head!r}, tail={tail!r})"
        )
    return (("tail", "head"), head) if head is not None else (("head", "tail"), tail)  # type: ignore[return-value]


def kge_spec(
    model: Any, kwargs: Mapping[str, Any] | None = None, reciprocal: bool = False
) -> dict[str, Any]:
    r"""The :attr:`TrainedKGE.spec` of ``model`` (built with ``kwargs``
    besides its sizes and ``gamma``; ``reciprocal``: trained with reciprocal
    relations)."""
    return {
        "reciprocal": bool(reciprocal),
        "name": type(model).__name__,
        "num_entities": int(model.num_entities),
        "num_relations": int(model.num_relations),
        "hidden_channels": int(model.hidden_channels),
        "gamma": float(model.gamma),
        "kwargs": dict(kwargs or {}),
    }


@dataclass
class TrainedRGCN:
    r"""One trained R-GCN with the graph it classifies.

    Args:
        model (RGCN): the classifier (global bases synchronised in).
        spec (dict): its constructor arguments (``num_nodes``,
            ``num_relations``, ``num_classes``, ``hidden_channels``,
            ``num_bases``).
        edge_index (Tensor): ``[2, E]`` the client's edges (with inverses).
        edge_type (Tensor): ``[E]`` their types.
        node_names (list[str]): name of each node id.
        class_names (list[str]): name of each class id.
    """

    model: Any
    spec: dict[str, Any]
    edge_index: Tensor
    edge_type: Tensor
    node_names: list[str]
    class_names: list[str]

    @torch.no_grad()
    def class_scores(self, entity: str, k: int | None = None) -> list[Prediction]:
        r"""The class probabilities of node ``entity``, best first (the
        ``k`` best with ``k``)."""
        node = lookup(entity, self.node_names, "`entity`")
        was_training = self.model.training
        self.model.eval()
        logits = self.model(self.edge_index, self.edge_type)[node]
        self.model.train(was_training)
        probs = torch.softmax(logits.float(), dim=-1)
        order = torch.sort(probs, descending=True, stable=True).indices.tolist()
        return [
            Prediction(self.class_names[i], int(i), float(probs[i]))
            for i in order[: len(order) if k is None else k]
        ]

    def to_state(self) -> dict[str, Any]:
        r"""Tensors, strings and numbers only (``weights_only`` loads them)."""
        return {
            "kind": "rgcn",
            "spec": dict(self.spec),
            "state_dict": {k: v.cpu() for k, v in self.model.state_dict().items()},
            "edge_index": self.edge_index.cpu(),
            "edge_type": self.edge_type.cpu(),
            "node_names": list(self.node_names),
            "class_names": list(self.class_names),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> TrainedRGCN:
        r"""The model :meth:`to_state` wrote."""
        from fedgraph.models.gnn.rgcn import RGCN

        s = dict(state["spec"])
        model = RGCN(
            s["num_nodes"],
            s["num_relations"],
            s["num_classes"],
            hidden_channels=s["hidden_channels"],
            num_bases=s["num_bases"],
            input="embedding",
        )
        model.load_state_dict(state["state_dict"])
        return cls(
            model,
            s,
            state["edge_index"],
            state["edge_type"],
            list(state["node_names"]),
            list(state["class_names"]),
        )


def from_state(state: Mapping[str, Any]) -> TrainedKGE | TrainedRGCN:
    r"""A :class:`TrainedKGE` or :class:`TrainedRGCN` from its
    :meth:`to_state`."""
    kinds = {"kge": TrainedKGE, "rgcn": TrainedRGCN}
    kind = state.get("kind")
    if kind not in kinds:
        raise ValueError(
            f"a saved model must be of kind {sorted(kinds)} (got {kind!r})"
        )
    return kinds[kind].from_state(state)  # type: ignore[attr-defined, no-any-return]


__all__ = [
    "Prediction",
    "TrainedKGE",
    "TrainedRGCN",
    "kge_spec",
    "lookup",
    "from_state",
]
