r"""The RotatE code's frequency weights of training triples."""

from __future__ import annotations

import torch
from torch import Tensor


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


__all__ = ["subsampling_weights"]
