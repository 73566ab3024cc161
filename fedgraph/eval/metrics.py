r"""Mergeable link-prediction metrics (sufficient statistics, torchmetrics-style)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from torch import Tensor

DIRECTIONS = ("head", "tail")
KS = (1, 3, 5, 10)


class LinkPredState:
    r"""Sums and counts from which MRR, MR and Hits@k are computed exactly.

    Per direction (``"head"``: rank the true head of ``(?, r, t)``,
    ``"tail"``: rank the true tail of ``(h, r, ?)``) it keeps the number of
    queries :math:`n`, :math:`\sum 1/\text{rank}`, :math:`\sum \text{rank}`
    and :math:`|\{\text{rank} \le k\}|`. :meth:`merge` adds two states, so
    client states merge on the server into the metrics of the pooled queries
    (the exact query-weighted mean of client metrics):

    .. math::
        \text{MRR} = \frac{\sum_c \sum_{q \in Q_c} 1/\text{rank}_q}{\sum_c |Q_c|}

    Args:
        ks (Sequence[int], optional): the Hits@k cut-offs.
            (default: :obj:`(1, 3, 5, 10)`)
    """

    def __init__(self, ks: Sequence[int] = KS) -> None:
        self.ks = tuple(int(k) for k in ks)
        self.sums: dict[str, dict[str, float]] = {d: self._zero() for d in DIRECTIONS}

    def _zero(self) -> dict[str, float]:
        z = {"count": 0.0, "rr": 0.0, "rank": 0.0}
        z.update({f"hits@{k}": 0.0 for k in self.ks})
        return z

    def update(self, ranks: Tensor, direction: str) -> LinkPredState:
        r"""Adds ``[n]`` (realistic, possibly fractional) ranks of ``direction``."""
        if direction not in DIRECTIONS:
            raise ValueError(
                f"`direction` must be one of {DIRECTIONS} (got {direction!r})"
            )
        r = ranks.double()
        s = self.sums[direction]
        s["count"] += float(r.numel())
        s["rr"] += float(r.reciprocal().sum())
        s["rank"] += float(r.sum())
        for k in self.ks:
            s[f"hits@{k}"] += float((r <= k).sum())
        return self

    def merge(self, other: LinkPredState) -> LinkPredState:
        r"""Adds ``other``'s sums into this state (in place) and returns it."""
        if other.ks != self.ks:
            raise ValueError(f"Cannot merge states with `ks` {self.ks} and {other.ks}")
        for d in DIRECTIONS:
            for key, v in other.sums[d].items():
                self.sums[d][key] += v
        return self

    @classmethod
    def merged(cls, states: Iterable[LinkPredState]) -> LinkPredState:
        r"""A new state holding the sum of ``states``."""
        states = list(states)
        out = cls(states[0].ks if states else KS)
        for s in states:
            out.merge(s)
        return out

    @property
    def num_queries(self) -> int:
        return int(sum(self.sums[d]["count"] for d in DIRECTIONS))

    def _metrics(self, s: Mapping[str, float]) -> dict[str, float]:
        n = s["count"]
        if n == 0:
            return {}
        out = {"mrr": s["rr"] / n, "mr": s["rank"] / n}
        out.update({f"hits@{k}": s[f"hits@{k}"] / n for k in self.ks})
        return out

    def compute(self) -> dict[str, float]:
        r"""``{"mrr", "mr", "hits@k", "head_mrr", …, "tail_mrr", …, "n_queries"}``;
        the unprefixed metrics pool both directions (FedLU's "average")."""
        both = {k: sum(self.sums[d][k] for d in DIRECTIONS) for k in self.sums["head"]}
        out = self._metrics(both)
        for d in DIRECTIONS:
            out.update({f"{d}_{k}": v for k, v in self._metrics(self.sums[d]).items()})
        out["n_queries"] = float(both["count"])
        return out

    def to_dict(self) -> dict[str, float]:
        r"""Flat ``{"head/count": …, "tail/hits@10": …}`` (a payload's metrics)."""
        return {f"{d}/{k}": v for d in DIRECTIONS for k, v in self.sums[d].items()}

    @classmethod
    def from_dict(cls, d: Mapping[str, float]) -> LinkPredState:
        r"""Inverse of :meth:`to_dict`."""
        ks = sorted({int(k.split("@")[1]) for k in d if "hits@" in k})
        out = cls(ks)
        for key, v in d.items():
            direction, name = key.split("/", 1)
            out.sums[direction][name] = float(v)
        return out

    def __repr__(self) -> str:
        m = self.compute()
        return (
            f"LinkPredState(n={self.num_queries}, mrr={m.get('mrr', float('nan')):.4f})"
        )


__all__ = ["LinkPredState", "DIRECTIONS", "KS"]
