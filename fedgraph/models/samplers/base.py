r"""The contract of a negative sampler: which entity replaces the head or the
tail of a positive triple, and which side it replaces.

Every sampler draws the replacing entities uniformly (optionally redrawing
known true triples, ``filtered``); what a subclass decides is the side
(:meth:`NegativeSampler.sides`): every side of the training call's modes,
one optimiser step each (:class:`~fedgraph.models.samplers.uniform.UniformNegativeSampler`),
or one side per positive (:class:`~fedgraph.models.samplers.bernoulli.BernoulliNegativeSampler`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import torch
from torch import Tensor

from fedgraph.models.kge.base import HEAD_BATCH, MODES, TAIL_BATCH


def triple_keys(triples: Tensor, num_entities: int, num_relations: int) -> Tensor:
    r"""One ``int64`` key per ``(h, r, t)``: :math:`(h R + r) N + t`."""
    h, r, t = triples.long().unbind(-1)
    return (h * num_relations + r) * num_entities + t


class NegativeSampler(ABC):
    r"""Base class of the negative samplers: uniform entity draws for a
    corrupted side.

    ``sample(positive, mode, generator)`` returns ``[B, K]`` entity ids (one
    row of ``K`` per positive), or ``[K]`` ids shared by the whole batch when
    ``shared=True`` (scored as a candidate matrix: much faster, see
    ``docs/benchmarks.md``). ``mode`` is the side they replace:
    ``"head-batch"``, ``"tail-batch"``, or a ``[B]`` boolean tensor, true
    where a positive's head is replaced (:meth:`sides`). With
    ``filtered=True`` a corrupted triple that is a known true triple (of
    ``filter_triples``) is redrawn, up to ``max_redraws`` vectorised rounds
    (the RotatE code's filter on train triples); the few still-true ones
    after that are kept.

    The ids are drawn where ``generator`` lives (the default generator's
    device without one). With ``sync_free=True`` the filtered redraw reads
    nothing back to the host: it always runs the ``max_redraws`` rounds,
    each drawing a full fresh ``[B, K]`` set and keeping it where the
    current id is a true triple (:func:`torch.where`), instead of stopping
    early and redrawing only the true ones (which needs their count on the
    host). Both replace each true corruption by a uniform draw; the streams
    differ.

    Args:
        num_entities (int): entities to draw from (ids ``0 … N-1``).
        num_negatives (int): :math:`K`.
        shared (bool, optional): one ``[K]`` draw per batch. (default: :obj:`False`)
        filtered (bool, optional): redraw true triples. Needs
            ``filter_triples`` or ``triples``; not combinable with ``shared``.
            (default: :obj:`False`)
        filter_triples (Tensor, optional): ``[n, 3]`` known true triples.
            (default: ``triples``)
        num_relations (int, optional): relation ids ``0 … R-1`` (default:
            max relation id + 1 of ``triples`` or ``filter_triples``).
        max_redraws (int, optional): redraw rounds. (default: :obj:`10`)
        triples (Tensor, optional): ``[n, 3]`` training triples the sampler
            serves (a sampler that learns its sides from them needs them).
    """

    def __init__(
        self,
        num_entities: int,
        num_negatives: int,
        *,
        shared: bool = False,
        filtered: bool = False,
        filter_triples: Tensor | None = None,
        num_relations: int | None = None,
        max_redraws: int = 10,
        triples: Tensor | None = None,
    ) -> None:
        if num_entities <= 0 or num_negatives <= 0:
            raise ValueError(
                "`num_entities` and `num_negatives` must be positive "
                f"(got {num_entities} and {num_negatives})"
            )
        if filtered and shared:
            raise ValueError(
                "`filtered=True` cannot be combined with `shared=True`: a shared "
                "row is a negative for every positive of the batch"
            )
        if filter_triples is None:
            filter_triples = triples
        if filtered and filter_triples is None:
            raise ValueError("`filtered=True` needs `filter_triples`")
        self.num_entities = int(num_entities)
        self.num_negatives = int(num_negatives)
        self.shared = bool(shared)
        self.filtered = bool(filtered)
        self.max_redraws = int(max_redraws)
        known = filter_triples if filtered else triples
        self.num_relations = (
            int(num_relations)
            if num_relations is not None
            else (int(known[:, 1].max()) + 1 if known is not None and len(known) else 0)
        )
        self._keys: Tensor | None = None
        self._device_keys: Tensor | None = None  # a copy on the draws' device
        if filtered:
            assert filter_triples is not None
            self._keys = torch.unique(
                triple_keys(filter_triples, self.num_entities, self.num_relations)
            )

    @abstractmethod
    def sides(
        self, positive: Tensor, generator: torch.Generator | None = None
    ) -> Tensor | None:
        r"""The side each positive of ``positive`` (``[B, 3]``) has
        corrupted: :obj:`None` for every side of the training call's modes
        (a step per side), or a ``[B]`` boolean tensor, true for the head,
        drawn from ``generator`` (then one step scores both sides)."""

    def _known(self, device: torch.device) -> Tensor:
        r"""The sorted keys of the known true triples on ``device``."""
        assert self._keys is not None
        if self._keys.device == device:
            return self._keys
        if self._device_keys is None or self._device_keys.device != device:
            self._device_keys = self._keys.to(device)
        return self._device_keys

    def _is_true(self, positive: Tensor, neg: Tensor, mode: str | Tensor) -> Tensor:
        known = self._known(neg.device)
        h, r, t = (positive[:, i : i + 1].expand_as(neg) for i in range(3))
        if isinstance(mode, str):
            trip = torch.stack([neg, r, t] if mode == HEAD_BATCH else [h, r, neg], -1)
        else:  # a side per positive
            heads = mode.view(-1, 1).expand_as(neg)
            trip = torch.stack(
                [torch.where(heads, neg, h), r, torch.where(heads, t, neg)], -1
            )
        keys = triple_keys(trip, self.num_entities, self.num_relations)
        pos = torch.searchsorted(known, keys).clamp_max(known.numel() - 1)
        return known[pos] == keys

    def sample(
        self,
        positive: Tensor,
        mode: str | Tensor = TAIL_BATCH,
        generator: torch.Generator | None = None,
        *,
        sync_free: bool = False,
    ) -> Tensor:
        r"""Corrupts ``positive`` (``[B, 3]``, on the generator's device) on
        the side ``mode``; see the class doc."""
        if isinstance(mode, str) and mode not in MODES:
            raise ValueError(f"`mode` must be one of {MODES} (got {mode!r})")
        shape = (
            (self.num_negatives,)
            if self.shared
            else (positive.size(0), self.num_negatives)
        )
        device = None if generator is None else generator.device
        neg = torch.randint(
            self.num_entities, shape, generator=generator, device=device
        )
        if self.filtered and sync_free:
            for _ in range(self.max_redraws):
                fresh = torch.randint(
                    self.num_entities, shape, generator=generator, device=device
                )
                neg = torch.where(self._is_true(positive, neg, mode), fresh, neg)
        elif self.filtered:
            for _ in range(self.max_redraws):
                bad = self._is_true(positive, neg, mode)
                n_bad = int(bad.sum())
                if n_bad == 0:
                    break
                neg[bad] = torch.randint(
                    self.num_entities, (n_bad,), generator=generator
                )
        return neg

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(num_entities={self.num_entities}, "
            f"num_negatives={self.num_negatives}, shared={self.shared}, "
            f"filtered={self.filtered})"
        )


__all__ = ["NegativeSampler", "triple_keys"]
