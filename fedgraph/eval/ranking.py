r"""Filtered link-prediction ranking, fully vectorised.

The filter is built once (:class:`TripleFilter`: a CSR index from ``(h, r)`` to
true tails and from ``(r, t)`` to true heads over sorted keys). Queries are
scored in chunks against an explicit candidate set (all entities or a given
subset, e.g. a client's local entities); every other known true triple of the
filter set is masked by index, and the *realistic* rank (mean of the
optimistic and pessimistic rank) resolves ties, as PyKEEN's ``ranks.py``.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence

import torch
from torch import Tensor

from fedgraph.eval.metrics import DIRECTIONS, LinkPredState
from fedgraph.models.kge.base import KGEModel
from fedgraph.progress import advance
from fedgraph.validate import check_ids, check_integer, check_triples


class TripleFilter:
    r"""Known true triples, indexed for batched lookup.

    Args:
        triples (Tensor): ``[n, 3]`` ``(h, r, t)`` filter triples (e.g. a
            client's train + valid + test).
        num_entities (int): entity count (ids ``< num_entities``).
        num_relations (int): relation count.
    """

    def __init__(self, triples: Tensor, num_entities: int, num_relations: int) -> None:
        self.num_entities = check_integer(num_entities, "num_entities")
        self.num_relations = check_integer(num_relations, "num_relations")
        triples = check_triples(
            triples,
            "triples",
            num_entities=self.num_entities,
            num_relations=self.num_relations,
        )
        triples = torch.unique(triples, dim=0)
        self.num_triples = int(triples.size(0))
        h, r, t = triples.unbind(1)
        # direction -> (sorted query keys, values in key order)
        self._index = {
            "tail": self._csr(h * self.num_relations + r, t),
            "head": self._csr(t * self.num_relations + r, h),
        }

    @property
    def device(self) -> torch.device:
        return self._index["tail"][0].device

    def to(self, device: torch.device | str) -> TripleFilter:
        r"""This filter with its index on ``device`` (itself if already there)."""
        device = torch.device(device)
        if device == self.device:
            return self
        out = copy.copy(self)
        out._index = {
            k: (keys.to(device), values.to(device))
            for k, (keys, values) in self._index.items()
        }
        return out

    @staticmethod
    def _csr(keys: Tensor, values: Tensor) -> tuple[Tensor, Tensor]:
        order = torch.argsort(keys, stable=True)
        return keys[order], values[order]

    def true_answers(
        self, anchor: Tensor, rel: Tensor, direction: str
    ) -> tuple[Tensor, Tensor]:
        r"""Pairs ``(row, entity)``: every known answer of each query row.

        Args:
            anchor (Tensor): ``[B]`` the given entity (head for ``"tail"``
                queries, tail for ``"head"`` queries).
            rel (Tensor): ``[B]`` relations.
            direction (str): ``"head"`` or ``"tail"``.
        """
        keys, values = self._index[direction]
        q = anchor * self.num_relations + rel
        lo = torch.searchsorted(keys, q, side="left")
        hi = torch.searchsorted(keys, q, side="right")
        counts = hi - lo
        row = torch.repeat_interleave(torch.arange(q.numel(), device=q.device), counts)
        # position of each pair inside its row's run: global index - run start
        starts = torch.repeat_interleave(lo - torch.cumsum(counts, 0) + counts, counts)
        pos = torch.arange(row.numel(), device=q.device) + starts
        return row, values[pos]

    def __repr__(self) -> str:
        return f"TripleFilter(triples={self.num_triples})"


def _device_of(model: object) -> torch.device:
    params = getattr(model, "parameters", None)
    if params is None:
        return torch.device("cpu")
    first = next(iter(params()), None)
    return torch.device("cpu") if first is None else first.device


def realistic_ranks(scores: Tensor, target: Tensor) -> Tensor:
    r"""``[B]`` realistic ranks of column ``target[b]`` in row ``b`` of ``scores``.

    .. math::
        \text{rank} = 1 + |\{c : s_c > s^*\}| + \tfrac12 |\{c \ne c^* : s_c = s^*\}|

    Masked entries must be ``-inf``. A score that is ``NaN`` or infinite
    ranks last: a candidate with one is never counted above a finite target,
    and a target with one (a diverged model) gets the last rank among the
    unmasked candidates, so such a model can never look good.
    """
    rows = torch.arange(scores.size(0), device=scores.device)
    best = scores[rows, target].unsqueeze(1)
    # NaN and +inf candidates below every finite target (one pass)
    clean = torch.nan_to_num(scores, nan=-math.inf, posinf=-math.inf)
    greater = (clean > best).sum(1)
    equal = (clean == best).sum(1) - 1
    ranks = 1.0 + greater.double() + 0.5 * equal.double()
    bad = ~torch.isfinite(best.squeeze(1))
    if bool(bad.any()):
        others = scores[bad] != float("-inf")  # NaN != -inf: unmasked
        others[torch.arange(others.size(0), device=scores.device), target[bad]] = False
        ranks[bad] = 1.0 + others.sum(1).double()
    return ranks


def _columns(
    n_ent: int,
    candidates: Tensor | None,
    exclude: Tensor | None,
    device: torch.device,
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    r"""The sorted unique ``candidates`` on ``device``, the map entity →
    score column (:obj:`None`: all entities, column = id) and the columns of
    the ``exclude``d entities among them."""
    if candidates is None:
        col_of = None
    else:
        candidates = torch.unique(candidates.long().to(device))
        col_of = torch.full((n_ent,), -1, dtype=torch.long, device=device)
        col_of[candidates] = torch.arange(candidates.numel(), device=device)
    ex_col = None
    if exclude is not None:
        ex_col = exclude.long().to(device)
        if col_of is not None:
            ex_col = col_of[ex_col]
            ex_col = ex_col[ex_col >= 0]
    return candidates, col_of, ex_col


def _filtered_scores(
    model: KGEModel,
    batch: Tensor,
    direction: str,
    candidates: Tensor | None,
    col_of: Tensor | None,
    filter: TripleFilter | None,
    ex_col: Tensor | None,
) -> tuple[Tensor, Tensor]:
    r"""The ``[b, C]`` scores of one batch's ``direction`` queries with the
    filtered answers and excluded entities masked (the target's own score
    kept), and each target's column."""
    h, r, t = batch.unbind(1)
    if direction == "tail":
        scores = model.score_t(h, r, candidates)
        anchor, target = h, t
    else:
        scores = model.score_h(r, t, candidates)
        anchor, target = t, h
    scores = scores.float().clone()
    col = target if col_of is None else col_of[target]
    if bool((col < 0).any()):
        bad = target[col < 0][0].item()
        raise ValueError(
            f"Target entity {bad} of a {direction} query is not among `candidates`"
        )
    rows = torch.arange(batch.size(0), device=batch.device)
    own = scores[rows, col].clone()
    if filter is not None:
        f_row, f_ent = filter.true_answers(anchor, r, direction)
        f_col = f_ent if col_of is None else col_of[f_ent]
        keep = f_col >= 0
        scores[f_row[keep], f_col[keep]] = float("-inf")
    if ex_col is not None:
        scores[:, ex_col] = float("-inf")
    if filter is not None or ex_col is not None:
        scores[rows, col] = own
    return scores, col


@torch.no_grad()
def rank_triples(
    model: KGEModel,
    triples: Tensor,
    *,
    filter: TripleFilter | None = None,
    candidates: Tensor | None = None,
    directions: Sequence[str] = DIRECTIONS,
    batch_size: int = 512,
    state: LinkPredState | None = None,
    exclude: Tensor | None = None,
) -> LinkPredState:
    r"""Filtered ranks of the true head and/or tail of ``triples``.

    Args:
        model (KGEModel): the scorer.
        triples (Tensor): ``[n, 3]`` query triples.
        filter (TripleFilter, optional): known true triples to mask (other
            than the target); :obj:`None` gives raw (unfiltered) ranks.
        candidates (Tensor, optional): ``[C]`` entity ids to rank among (the
            targets must be in it); :obj:`None` means all entities.
        directions (Sequence[str], optional): ``"head"`` and/or ``"tail"``.
        batch_size (int, optional): queries scored per chunk. (default: 512)
        state (LinkPredState, optional): a state to add to.
        exclude (Tensor, optional): ``[E]`` entity ids masked like filtered
            answers (never ranked above the target, unless they are the
            target): FedE's code masks the entities outside a client's
            training triples this way. (default: :obj:`None`)

    Returns:
        LinkPredState: the updated (or a new) state.

    Everything runs on the model's device (its parameters'; the CPU for a
    model without any): ``triples``, ``candidates`` and the filter's index
    are moved there.

    Raises:
        TypeError: ids given as floats (never truncated) or a ``batch_size``
            that is not an integer.
        ValueError: ``triples`` not ``[n, 3]``, an id outside the model's
            entities or relations, a ``batch_size`` below 1 or an unknown
            direction; each names the argument.
    """
    triples, candidates, exclude = _checked_queries(
        model, triples, candidates, exclude, directions, batch_size
    )
    state = LinkPredState() if state is None else state
    device = _device_of(model)
    triples = triples.to(device)
    if filter is not None:
        filter = filter.to(device)
    candidates, col_of, ex_col = _columns(
        model.num_entities, candidates, exclude, device
    )
    was_training = model.training
    model.eval()
    for direction in directions:
        for start in range(0, triples.size(0), batch_size):
            batch = triples[start : start + batch_size]
            scores, col = _filtered_scores(
                model, batch, direction, candidates, col_of, filter, ex_col
            )
            state.update(realistic_ranks(scores, col), direction)
            advance(batch.size(0))  # the open progress bar, if any
    model.train(was_training)
    return state


def _checked_queries(
    model: KGEModel,
    triples: Tensor,
    candidates: Tensor | None,
    exclude: Tensor | None,
    directions: Sequence[str],
    batch_size: int,
) -> tuple[Tensor, Tensor | None, Tensor | None]:
    r"""The arguments of :func:`rank_triples` checked against the model's
    entity and relation counts (``long`` tensors), before any scoring."""
    check_integer(batch_size, "batch_size")
    for direction in directions:
        if direction not in DIRECTIONS:
            raise ValueError(
                f"`directions` items must be in {DIRECTIONS} (got {direction!r})"
            )
    n_ent = model.num_entities
    triples = check_triples(
        triples,
        "triples",
        num_entities=n_ent,
        num_relations=getattr(model, "num_relations", None),
    )
    if candidates is not None:
        candidates = check_ids(candidates, "candidates", high=n_ent)
    if exclude is not None:
        exclude = check_ids(exclude, "exclude", high=n_ent)
    return triples, candidates, exclude


__all__ = ["TripleFilter", "realistic_ranks", "rank_triples"]
