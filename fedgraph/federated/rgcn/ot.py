r"""The basis-alignment term of FedAlign: Sinkhorn OT distances between bases."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

import torch
from torch import Tensor


@lru_cache(maxsize=8)
def _samples_loss(blur: float, p: int, scaling: float):  # type: ignore[no-untyped-def]
    from geomloss import SamplesLoss

    return SamplesLoss(
        "sinkhorn", p=p, blur=blur, scaling=scaling, backend="tensorized"
    )


def basis_ot(
    bases: Tensor,
    other: Tensor,
    *,
    blur: float = 0.1,
    p: int = 2,
    scaling: float = 0.3,
) -> Tensor:
    r"""Sinkhorn OT distance between two sets of bases, each basis
    :math:`\mathbf{V}_b \in \mathbb{R}^{d_{in} \times d_{out}}` a point of
    :math:`\mathbb{R}^{d_{in} d_{out}}` with uniform mass :math:`1/B`
    (geomloss ``SamplesLoss("sinkhorn")``: the debiased Sinkhorn divergence
    with cost :math:`\lVert x - y \rVert^p / p` and entropic blur
    :math:`\varepsilon^{1/p}` = ``blur``).

    Args:
        bases (Tensor): ``[B, d_in, d_out]`` (or ``[B, d]``).
        other (Tensor): ``[B', d_in, d_out]`` with the same trailing size.
        blur (float, optional): geomloss ``blur`` (FedAlign does not give
            one; bases have entries of order 0.1-0.5). (default: :obj:`0.1`)
        p (int, optional): cost exponent. (default: :obj:`2`)
        scaling (float, optional): geomloss ε-scaling; 0.3 needs ~4x fewer
            Sinkhorn iterations than geomloss' 0.5. (default: :obj:`0.3`)
    """
    x = bases.reshape(bases.size(0), -1)
    y = other.reshape(other.size(0), -1).to(x.dtype)
    if x.size(1) != y.size(1):
        raise ValueError(
            f"`bases` and `other` must have the same basis size "
            f"(got {tuple(bases.shape)} and {tuple(other.shape)})"
        )
    return _samples_loss(float(blur), int(p), float(scaling))(x, y)


def alignment_term(
    bases: Mapping[str, Tensor],
    peers: Sequence[Mapping[str, Tensor]],
    **kwargs: float,
) -> Tensor:
    r"""FedAlign's Eq. 10 without :math:`\mu`: the mean over peers :math:`j`
    of the summed per-layer OT distances,

    .. math::
        \frac{1}{|P|} \sum_{j \in P} \sum_{l=1}^{L}
        \mathrm{OT}\big(\mathbf{V}_k^{(l)}, \mathbf{V}_j^{(l)}\big).

    Args:
        bases (Mapping[str, Tensor]): this client's bases per layer.
        peers (Sequence[Mapping[str, Tensor]]): the other clients' bases
            (same keys; a missing key is skipped).
        **kwargs: forwarded to :func:`basis_ot`.
    """
    if not peers:
        raise ValueError("`peers` must hold at least one client's bases (got none)")
    blur, p, scaling = (
        float(kwargs.get("blur", 0.1)),
        int(kwargs.get("p", 2)),
        float(kwargs.get("scaling", 0.3)),
    )
    loss = _samples_loss(blur, p, scaling)
    total = torch.zeros((), dtype=next(iter(bases.values())).dtype)
    for key, v in bases.items():
        others = [peer[key] for peer in peers if key in peer]
        if not others:
            continue
        # One batched geomloss call per layer: [P, B, d] against [P, B', d].
        y = torch.stack([o.reshape(o.size(0), -1) for o in others]).to(v.dtype)
        x = v.reshape(1, v.size(0), -1).expand(len(others), -1, -1).contiguous()
        if x.size(-1) != y.size(-1):
            raise ValueError(
                f"`{key}`: peers' bases have size {y.size(-1)}, this client's {x.size(-1)}"
            )
        total = total + loss(x, y).sum()
    return total / len(peers)


__all__ = ["basis_ot", "alignment_term"]
