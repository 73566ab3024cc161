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
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from torch import Tensor


class LossTerm(ABC):
    r"""A term of a client's local loss for one round."""

    @classmethod
    @abstractmethod
    def from_config(
        cls, config: Mapping[str, Any], received: Tensor, previous: Tensor | None
    ) -> LossTerm | None:
        r"""The term for this round, or :obj:`None` when ``config`` does not
        ask for it.

        Args:
            config (Mapping): the round's training config from the strategy.
            received (Tensor): ``[n, d]`` the client's entity table right after
                it wrote the received global rows (a constant).
            previous (Tensor, optional): ``[n, d]`` the client's table at the
                end of its previous local training (:obj:`None` before any).
        """

    @abstractmethod
    def __call__(self, model: Any) -> Tensor:
        r"""The term's value (a scalar with gradient) on ``model``."""


#: The registered terms, in the order they are summed.
LOSS_TERMS: list[type[LossTerm]] = []


def register_loss_term(cls: type[LossTerm]) -> type[LossTerm]:
    r"""Adds ``cls`` to :data:`LOSS_TERMS` (once); usable as a decorator."""
    if cls not in LOSS_TERMS:
        LOSS_TERMS.append(cls)
    return cls


def active_terms(
    config: Mapping[str, Any], received: Tensor, previous: Tensor | None
) -> list[LossTerm]:
    r"""The registered terms ``config`` switches on this round."""
    terms = (cls.from_config(config, received, previous) for cls in LOSS_TERMS)
    return [t for t in terms if t is not None]


__all__ = ["LossTerm", "LOSS_TERMS", "register_loss_term", "active_terms"]
