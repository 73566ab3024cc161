r"""Bernoulli head/tail corruption (TransH)."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from fedgraph.models.samplers.base import NegativeSampler


def head_probabilities(triples: Tensor, num_relations: int) -> Tensor:
    r"""``[R]`` probabilities of corrupting the head of a triple of each
    relation (Wang et al., AAAI 2014, TransH):

    .. math::
        p_r = \frac{\mathrm{tph}_r}{\mathrm{tph}_r + \mathrm{hpt}_r},

    :math:`\mathrm{tph}_r` the mean number of tails per head of relation
    :math:`r` in ``triples`` (``[n, 3]``), :math:`\mathrm{hpt}_r` the mean
    number of heads per tail (repeated triples counted once);
    :math:`\tfrac12` for a relation with no triple."""
    h, r, t = torch.unique(triples.long(), dim=0).unbind(-1)
    if r.numel() and int(r.max()) >= num_relations:
        raise ValueError(
            f"`triples` hold relation id {int(r.max())} but `num_relations` "
            f"is {num_relations}"
        )
    count = torch.bincount(r, minlength=num_relations).double()
    width = int(torch.cat([h, t]).max()) + 1 if r.numel() else 1
    heads = torch.bincount(
        torch.unique(r * width + h) // width, minlength=num_relations
    )
    tails = torch.bincount(
        torch.unique(r * width + t) // width, minlength=num_relations
    )
    seen = count > 0
    tph = torch.where(seen, count / heads.clamp_min(1), 1.0)
    hpt = torch.where(seen, count / tails.clamp_min(1), 1.0)
    return (tph / (tph + hpt)).float()


class BernoulliNegativeSampler(NegativeSampler):
    r"""Bernoulli head/tail corruption (Wang et al., AAAI 2014, TransH): a
    positive of relation :math:`r` has its head replaced with probability
    :math:`p_r = \mathrm{tph}_r / (\mathrm{tph}_r + \mathrm{hpt}_r)` in
    the training ``triples`` the sampler serves, else its tail.

    The probabilities (:func:`head_probabilities`) come from a client's own
    training triples, so a one-to-many relation has its head corrupted more
    often and yields fewer false negatives. The entities are drawn
    uniformly, as :class:`~fedgraph.models.samplers.uniform.UniformNegativeSampler`
    draws them. One optimiser step per batch scores each positive's
    negatives on its own side, in place of one step per side of the
    training call's modes; a training path that corrupts one side per step
    (batched local training, loss terms that rescore the negatives, the
    tail-only reciprocal relations) refuses it.

    Args:
        triples (Tensor): ``[n, 3]`` training triples the probabilities are
            computed from.

    The other arguments are those of
    :class:`~fedgraph.models.samplers.base.NegativeSampler`.
    """

    name = "bernoulli"

    def __init__(
        self,
        num_entities: int,
        num_negatives: int,
        *,
        triples: Tensor | None = None,
        **options: Any,
    ) -> None:
        if triples is None:
            raise ValueError(
                "BernoulliNegativeSampler needs the training `triples` its "
                "head probabilities are computed from"
            )
        super().__init__(num_entities, num_negatives, triples=triples, **options)
        #: ``[R]`` head-corruption probability per relation
        self.head_probability = head_probabilities(triples, self.num_relations)
        self._device_probability: Tensor | None = None

    def _probability(self, device: torch.device) -> Tensor:
        if self.head_probability.device == device:
            return self.head_probability
        if (
            self._device_probability is None
            or self._device_probability.device != device
        ):
            self._device_probability = self.head_probability.to(device)
        return self._device_probability

    def sides(
        self, positive: Tensor, generator: torch.Generator | None = None
    ) -> Tensor:
        device = positive.device if generator is None else generator.device
        p = self._probability(device)[positive[:, 1].to(device)]
        return torch.rand(p.shape, generator=generator, device=device) < p

    def sample(
        self,
        positive: Tensor,
        mode: str | Tensor = "tail-batch",
        generator: torch.Generator | None = None,
        *,
        sync_free: bool = False,
    ) -> Tensor:
        if isinstance(mode, str):
            raise ValueError(
                "BernoulliNegativeSampler corrupts the side `sides` draws for "
                f"each positive, not one side for the batch (got {mode!r}): "
                "this training path needs the uniform sampler"
            )
        return super().sample(positive, mode, generator, sync_free=sync_free)


__all__ = ["BernoulliNegativeSampler", "head_probabilities"]
