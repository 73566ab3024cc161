r"""The client-side loss-term hook: terms a client adds to its local loss.

A :class:`LossTerm` subclass is registered with :func:`register_loss_term`
(in the module of the algorithm that asks for it: FedProx's proximal term in
:mod:`fedgraph.federated.fedprox`, FedEC's contrastive term in
:mod:`fedgraph.federated.kge.fedec`). Each round a client asks every registered
term whether the round's config switches it on
(:meth:`LossTerm.from_config`) and adds the active ones to each batch's
loss, in registration order. The client itself names no algorithm: the
strategy's config says which terms apply (``"proximal-mu"``,
``"contrastive-mu"``…), so a new regulariser is one registered class and a
strategy that sets its config keys.

Terms belong to a client family (:attr:`LossTerm.family`): the KGE client
(``"kge"``) calls a term with its model; the R-GCN client (``"rgcn"``,
FedProx's proximal term on the bases, FedAlign's OT term and the -L
gradient penalty in :mod:`fedgraph.federated.rgcn.terms`) also passes its
forward pass (``task``: the task loss, ``inputs``: the input node features),
adds ``weight * term`` and reports the unweighted value under
:attr:`LossTerm.name`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from torch import Tensor


class LossTerm(ABC):
    r"""A term of a client's local loss for one round."""

    #: The client family whose loss the term extends (``"kge"``, ``"rgcn"``).
    family: ClassVar[str] = "kge"
    #: The metric name of the term's value (``"{name}_sum"``; R-GCN clients).
    name: ClassVar[str] = "term"
    #: The R-GCN client back-propagates such a term on its own, its gradient
    #: rescaled to 2-norm at most :attr:`clip` (:obj:`None`: unscaled), and
    #: reports that norm as ``"{name}_grad_norm"``.
    own_gradient: ClassVar[bool] = False
    #: The factor the R-GCN client multiplies the term by.
    weight: float = 1.0
    #: See :attr:`own_gradient`.
    clip: float | None = None

    @classmethod
    @abstractmethod
    def from_config(
        cls, config: Mapping[str, Any], received: Any, previous: Tensor | None
    ) -> LossTerm | None:
        r"""The term for this round, or :obj:`None` when ``config`` does not
        ask for it.

        Args:
            config (Mapping): the round's training config from the strategy.
            received: what the client received: for a KGE client the
                ``[n, d]`` entity table right after it wrote the received
                global rows (a constant), for an R-GCN client the payload's
                arrays (the global bases and, with FedAlign, the peers').
            previous (Tensor, optional): ``[n, d]`` the client's table at the
                end of its previous local training (:obj:`None` before any).
        """

    @abstractmethod
    def __call__(self, model: Any, **forward: Any) -> Tensor:
        r"""The term's value (a scalar with gradient) on ``model``; ``forward``
        holds the client's forward pass (see the module docstring)."""


#: The registered terms, in the order they are summed.
LOSS_TERMS: list[type[LossTerm]] = []


def register_loss_term(cls: type[LossTerm]) -> type[LossTerm]:
    r"""Adds ``cls`` to :data:`LOSS_TERMS` (once); usable as a decorator."""
    if cls not in LOSS_TERMS:
        LOSS_TERMS.append(cls)
    return cls


def active_terms(
    config: Mapping[str, Any],
    received: Any,
    previous: Tensor | None = None,
    *,
    family: str = "kge",
) -> list[LossTerm]:
    r"""The registered terms of ``family`` that ``config`` switches on this
    round."""
    terms = (
        cls.from_config(config, received, previous)
        for cls in LOSS_TERMS
        if cls.family == family
    )
    return [t for t in terms if t is not None]


__all__ = ["LossTerm", "LOSS_TERMS", "register_loss_term", "active_terms"]
