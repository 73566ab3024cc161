r"""Negative sampling by head or tail corruption, and subsampling weights."""

from __future__ import annotations

import torch
from torch import Tensor

from fedgraph.models.kge.base import HEAD_BATCH, MODES, TAIL_BATCH


def triple_keys(triples: Tensor, num_entities: int, num_relations: int) -> Tensor:
    r"""One ``int64`` key per ``(h, r, t)``: :math:`(h R + r) N + t`."""
    h, r, t = triples.long().unbind(-1)
    return (h * num_relations + r) * num_entities + t


class NegativeSampler:
    r"""Uniform head/tail corruption (Bordes et al.; the RotatE/FedLU code).

    ``sample(positive, mode, generator)`` returns ``[B, K]`` entity ids (one row
    of ``K`` per positive), or ``[K]`` ids shared by the whole batch when
    ``shared=True`` (scored as a candidate matrix: much faster, see
    ``docs/benchmarks.md``). With ``filtered=True`` a corrupted triple that is a
    known true triple (of ``filter_triples``) is redrawn, up to
    ``max_redraws`` vectorised rounds (the RotatE code's filter on train
    triples); the few still-true ones after that are kept.

    The ids are drawn where ``generator`` lives (the default generator's
    device without one). With
    ``sync_free=True`` the filtered redraw reads nothing back to the host: it
    always runs the ``max_redraws`` rounds, each drawing a full fresh
    ``[B, K]`` set and keeping it where the current id is a true triple
    (:func:`torch.where`), instead of stopping early and redrawing only
    the true ones (which needs their count on the host). Both replace each
    true corruption by a uniform draw; the streams differ.

    Args:
        num_entities (int): entities to draw from (ids ``0 … N-1``).
        num_negatives (int): :math:`K`.
        shared (bool, optional): one ``[K]`` draw per batch. (default: :obj:`False`)
        filtered (bool, optional): redraw true triples. Needs
            ``filter_triples``; not combinable with ``shared``.
            (default: :obj:`False`)
        filter_triples (Tensor, optional): ``[n, 3]`` known true triples.
        num_relations (int, optional): for the filter keys (default: max
            relation id + 1 of ``filter_triples``).
        max_redraws (int, optional): redraw rounds. (default: :obj:`10`)
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
        if filtered and filter_triples is None:
            raise ValueError("`filtered=True` needs `filter_triples`")
        self.num_entities = int(num_entities)
        self.num_negatives = int(num_negatives)
        self.shared = bool(shared)
        self.filtered = bool(filtered)
        self.max_redraws = int(max_redraws)
        self._keys: Tensor | None = None
        self._device_keys: Tensor | None = None  # a copy on the draws' device
        if filtered:
            assert filter_triples is not None
            self.num_relations = int(
                num_relations
                if num_relations is not None
                else int(filter_triples[:, 1].max()) + 1
            )
            self._keys = torch.unique(
                triple_keys(filter_triples, self.num_entities, self.num_relations)
            )

    def _known(self, device: torch.device) -> Tensor:
        r"""The sorted keys of the known true triples on ``device``."""
        assert self._keys is not None
        if self._keys.device == device:
            return self._keys
        if self._device_keys is None or self._device_keys.device != device:
            self._device_keys = self._keys.to(device)
        return self._device_keys

    def _is_true(self, positive: Tensor, neg: Tensor, mode: str) -> Tensor:
        known = self._known(neg.device)
        h, r, t = (positive[:, i : i + 1].expand_as(neg) for i in range(3))
        trip = torch.stack([neg, r, t] if mode == HEAD_BATCH else [h, r, neg], -1)
        keys = triple_keys(trip, self.num_entities, self.num_relations)
        pos = torch.searchsorted(known, keys).clamp_max(known.numel() - 1)
        return known[pos] == keys

    def sample(
        self,
        positive: Tensor,
        mode: str = TAIL_BATCH,
        generator: torch.Generator | None = None,
        *,
        sync_free: bool = False,
    ) -> Tensor:
        r"""Corrupts ``positive`` (``[B, 3]``, on the generator's device) in
        ``mode``; see the class doc."""
        if mode not in MODES:
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
            f"NegativeSampler(num_entities={self.num_entities}, "
            f"num_negatives={self.num_negatives}, shared={self.shared}, "
            f"filtered={self.filtered})"
        )


def subsampling_weights(triples: Tensor, *, start: int = 4) -> Tensor:
    r"""``[n]`` frequency weights of the RotatE code (used by FedE and FedLU):

    .. math::
        w_{(h,r,t)} = \big(c(h, r) + c(t, r^{-1})\big)^{-1/2}

    where :math:`c` counts the training triples with that head and relation
    (tail and relation) plus ``start``.
    """
    h, r, t = triples.long().unbind(-1)
    m = int(r.max()) + 1 if r.numel() else 1
    out = torch.zeros(triples.size(0), dtype=torch.float)
    for ent in (h, t):
        key = ent * m + r
        _, inv, cnt = torch.unique(key, return_inverse=True, return_counts=True)
        out += cnt[inv].float() + start - 1
    return out.rsqrt()


__all__ = [
    "NegativeSampler",
    "subsampling_weights",
    "triple_keys",
    "HEAD_BATCH",
    "TAIL_BATCH",
]
