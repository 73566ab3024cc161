r"""Entity-wise top-K sparsification of `FedS <https://arxiv.org/abs/2406.13225>`_
(§III-C to §III-F), as pure tensor functions.

Conventions: a client's *shared* entities are those it holds that at least
one other client holds too (FedS §III-B: only they are ever transmitted);
``N_c`` is their number and every per-client vector below is over them, in
ascending global-id order. ``p`` is the sparsity ratio and

.. math::
    K_c = \lfloor p \cdot N_c \rfloor \qquad \text{(FedS Eq. 2)}

(floor; FedS writes :math:`K = N_c \times p` without a rounding rule).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor


def num_selected(num_shared: int, p: float) -> int:
    r"""``K = floor(p * N_c)`` of FedS Eq. (2) (with a 1e-9 tolerance so that
    ``0.7 * 10`` gives 7)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"`p` must be in [0, 1] (got {p})")
    return int(math.floor(p * num_shared + 1e-9))


def shared_entity_mask(entity_ids: Sequence[Tensor], num_entities: int) -> Tensor:
    r"""``[num_entities]`` bool mask of the global entities held by at least
    two of the clients whose global ids are ``entity_ids``."""
    count = torch.zeros(num_entities, dtype=torch.long)
    for ids in entity_ids:
        count.index_add_(0, ids.unique(), torch.ones_like(ids.unique()))
    return count >= 2


def embedding_change(current: Tensor, history: Tensor) -> Tensor:
    r"""The change of each entity embedding since its last upload, FedS
    Eq. (1):

    .. math::
        \mathbf{M}^t_c = \mathbf{1} - \cos\big(\mathbf{E}^t_c,
        \mathbf{E}^h_c\big)

    Args:
        current (Tensor): ``[N_c, D]`` current embeddings.
        history (Tensor): ``[N_c, D]`` last uploaded embeddings.

    Returns:
        Tensor: ``[N_c]`` changes in :math:`[0, 2]`.
    """
    if current.shape != history.shape:
        raise ValueError(
            f"`current` and `history` must have the same shape (got "
            f"{tuple(current.shape)} and {tuple(history.shape)})"
        )
    return 1.0 - F.cosine_similarity(current, history, dim=1, eps=1e-12)


def topk_mask(score: Tensor, k: int, valid: Tensor | None = None) -> Tensor:
    r"""``[N]`` bool mask of the ``k`` largest entries of ``score`` among the
    ``valid`` ones (all when ``None``); ties go to the lower index (a stable
    sort), and fewer than ``k`` valid entries are all selected."""
    n = score.numel()
    mask = torch.zeros(n, dtype=torch.bool, device=score.device)
    if valid is not None:
        score = score.masked_fill(~valid, float("-inf"))
        k = min(k, int(valid.sum()))
    k = min(k, n)
    if k <= 0:
        return mask
    order = torch.sort(score, descending=True, stable=True).indices
    mask[order[:k]] = True
    return mask


def upstream_select(current: Tensor, history: Tensor, p: float) -> Tensor:
    r"""Upstream entity-wise top-K (FedS §III-C): the 0/1 sign vector
    :math:`\mathbf{S}^t_c` of the :math:`K_c` entities whose embeddings
    changed most (:func:`embedding_change`).

    Returns:
        Tensor: ``[N_c]`` bool sign vector with ``K_c`` ones.
    """
    change = embedding_change(current, history)
    return topk_mask(change, num_selected(current.size(0), p))


def personalised_aggregate(
    upload_sum: Tensor,
    upload_count: Tensor,
    shared_ids: Tensor,
    own_values: Tensor,
    own_sign: Tensor,
) -> tuple[Tensor, Tensor]:
    r"""Personalised aggregation for one client (FedS Eq. 3): for each of its
    shared entities, the *sum* of the embeddings uploaded this round by the
    *other* clients, and their number (the priority weight
    :math:`\mathbf{P}^t_{c_e} = |C^t_{c_e}|`).

    .. math::
        \mathbf{A}^t_{c_e} = \sum_{i \in C^t_{c_e}} \mathbf{E}^t_{i_e}, \qquad
        C^t_{c_e} = \{i \ne c : i \text{ uploaded } e \text{ at round } t\}

    Computed from the all-client totals minus the client's own upload, so the
    server needs one scatter per round, not one per client.

    Args:
        upload_sum (Tensor): ``[num_entities, D]`` sum of all uploads of the
            round, by global id.
        upload_count (Tensor): ``[num_entities]`` number of uploads per id.
        shared_ids (Tensor): ``[N_c]`` the client's shared global ids.
        own_values (Tensor): ``[K_c, D]`` what the client uploaded, in
            ``shared_ids[own_sign]`` order.
        own_sign (Tensor): ``[N_c]`` bool, the client's upload sign vector.

    Returns:
        tuple[Tensor, Tensor]: ``A`` ``[N_c, D]`` and ``P`` ``[N_c]`` (long).
    """
    if int(own_sign.sum()) != own_values.size(0):
        raise ValueError(
            f"`own_sign` selects {int(own_sign.sum())} rows but `own_values` "
            f"has {own_values.size(0)}"
        )
    agg = upload_sum[shared_ids].clone()
    agg[own_sign] -= own_values.to(agg.dtype)
    prio = upload_count[shared_ids] - own_sign.long()
    return agg, prio


def downstream_select(
    priority: Tensor, p: float, generator: torch.Generator | None = None
) -> Tensor:
    r"""Downstream personalised top-K (FedS §III-D): the :math:`K_c`
    entities with the highest priority (upload frequency by other clients)
    among those with at least one upload; equal priorities compete at random
    (``generator``); fewer available entities are all sent.

    Args:
        priority (Tensor): ``[N_c]`` long priorities ``P``.
        p (float): sparsity ratio.
        generator (torch.Generator, optional): for the random tie-break.

    Returns:
        Tensor: ``[N_c]`` bool sign vector.
    """
    jitter = torch.rand(priority.shape, generator=generator, dtype=torch.float64)
    key = priority.to(torch.float64) + jitter  # jitter < 1 keeps priority order
    return topk_mask(key, num_selected(priority.numel(), p), valid=priority > 0)


def personalised_update(
    local: Tensor, aggregate: Tensor, priority: Tensor, sign: Tensor
) -> Tensor:
    r"""The client update of FedS Eq. (4) for the entities in ``sign``:

    .. math::
        \mathbf{E}^{t+1}_{c_e} = \frac{\mathbf{A}^t_{c_e} + \mathbf{E}^t_{c_e}}
        {1 + \mathbf{P}^t_{c_e}}

    i.e. the mean of the client's own embedding and the ``P`` received ones.

    Args:
        local (Tensor): ``[N_c, D]`` the client's shared-entity embeddings.
        aggregate (Tensor): ``[K, D]`` received sums ``A`` (rows of ``sign``).
        priority (Tensor): ``[K]`` received priorities ``P``.
        sign (Tensor): ``[N_c]`` bool, which rows were received.

    Returns:
        Tensor: ``[N_c, D]`` updated embeddings (a new tensor).
    """
    if int(sign.sum()) != aggregate.size(0) or aggregate.size(0) != priority.numel():
        raise ValueError(
            f"`sign` selects {int(sign.sum())} rows but got {aggregate.size(0)} "
            f"aggregated rows and {priority.numel()} priorities"
        )
    out = local.clone()
    denom = (1.0 + priority.to(local.dtype)).unsqueeze(1)
    out[sign] = (aggregate.to(local.dtype) + local[sign]) / denom
    return out


def is_sync_round(server_round: int, interval: int) -> bool:
    r"""Intermittent synchronisation (FedS §III-E): a cycle is ``interval``
    sparse rounds followed by one full exchange (FedS §III-F counts
    :math:`s` rounds *between* two synchronisations), starting with a full
    exchange in round 1, so rounds ``1, s + 2, 2s + 3, …`` synchronise.
    ``interval = 0`` synchronises every round (FedEP)."""
    if server_round < 1:
        raise ValueError(f"`server_round` counts from 1 (got {server_round})")
    if interval < 0:
        raise ValueError(f"`interval` must be >= 0 (got {interval})")
    return (server_round - 1) % (interval + 1) == 0


def cycle_param_ratio(p: float, interval: int, dim: int) -> float:
    r"""FedS Eq. (5): worst-case ratio of parameters transmitted in one cycle
    by FedS versus full exchange, counting each sign-vector and priority
    entry as one parameter (as the paper does).

    .. math::
        R^p_c = \frac{p s + 1 + \frac{(2 + p) s}{2 D}}{s + 1}
    """
    s = interval
    return (p * s + 1 + (2 + p) * s / (2 * dim)) / (s + 1)


__all__ = [
    "num_selected",
    "shared_entity_mask",
    "embedding_change",
    "topk_mask",
    "upstream_select",
    "personalised_aggregate",
    "downstream_select",
    "personalised_update",
    "is_sync_round",
    "cycle_param_ratio",
]
