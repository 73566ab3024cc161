r"""Pure aggregation functions (no I/O, no state), each tested against numpy.

Entity aggregation is a scatter over *global* entity ids with
``torch_scatter.scatter(..., reduce="sum")``; when ``torch_scatter`` cannot be
imported, :func:`torch_geometric.utils.scatter` is used instead (same result)
and a warning says so once.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence

import torch
from torch import Tensor

_SCATTER: Callable[..., Tensor] | None = None


def _scatter_sum(src: Tensor, index: Tensor, dim_size: int) -> Tensor:
    global _SCATTER
    if _SCATTER is None:
        try:
            from torch_scatter import scatter as ts_scatter

            def _ts(src: Tensor, index: Tensor, dim_size: int) -> Tensor:
                return ts_scatter(src, index, dim=0, dim_size=dim_size, reduce="sum")

            _SCATTER = _ts
        except ImportError:  # pragma: no cover - depends on the install
            from torch_geometric.utils import scatter as pyg_scatter

            warnings.warn(
                "torch_scatter could not be imported; entity aggregation falls "
                "back to torch_geometric.utils.scatter (same result, may be "
                "slower).",
                RuntimeWarning,
                stacklevel=3,
            )

            def _pyg(src: Tensor, index: Tensor, dim_size: int) -> Tensor:
                return pyg_scatter(src, index, dim=0, dim_size=dim_size, reduce="sum")

            _SCATTER = _pyg
    return _SCATTER(src, index, dim_size)


def weighted_mean(
    tensors: Sequence[Tensor], weights: Sequence[float] | Tensor
) -> Tensor:
    r"""The FedAvg mean of same-shaped tensors.

    .. math::
        \bar{w} = \frac{\sum_k n_k w_k}{\sum_k n_k}

    Args:
        tensors (Sequence[Tensor]): one tensor per client, all the same shape.
        weights (Sequence[float] or Tensor): one non-negative weight per client
            (e.g. ``num_examples``).

    Raises:
        ValueError: if the lengths differ, shapes differ, a weight is negative
            or all weights are zero.
    """
    if len(tensors) == 0:
        raise ValueError("`tensors` must hold at least one tensor (got 0)")
    w = torch.as_tensor(weights, dtype=torch.float64)
    if w.dim() != 1 or w.numel() != len(tensors):
        raise ValueError(
            f"`weights` must hold one weight per tensor (got {w.numel()} weights "
            f"for {len(tensors)} tensors)"
        )
    if bool((w < 0).any()) or float(w.sum()) <= 0:
        raise ValueError(
            f"`weights` must be non-negative and not all zero (got {w.tolist()})"
        )
    shape = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != shape:
            raise ValueError(
                f"`tensors[{i}]` has shape {tuple(t.shape)} but `tensors[0]` "
                f"has {tuple(shape)}"
            )
    stacked = torch.stack([t.to(torch.float64) for t in tensors])
    w = (w / w.sum()).view(-1, *([1] * len(shape)))
    return (stacked * w).sum(0).to(tensors[0].dtype)


def scatter_mean_rows(
    values_list: Sequence[Tensor],
    row_ids_list: Sequence[Tensor],
    num_rows: int,
    weights: Sequence[float | Tensor] | None = None,
) -> tuple[Tensor, Tensor]:
    r"""Entity-wise weighted mean of client row blocks over global ids
    (FedE Eq. 3, generalised to per-client or per-row weights).

    .. math::
        \mathbf{E}_{t+1}[e] = \frac{\sum_{c:\, e \in \mathcal{E}_c}
            \omega_{c,e}\, \mathbf{E}^c[e]}{\sum_{c:\, e \in \mathcal{E}_c}
            \omega_{c,e}}

    With ``weights=None`` every :math:`\omega_{c,e} = 1`: the plain mean over
    the clients holding ``e`` (:math:`(\mathbb{1} \oslash \sum_c
    \mathbf{v}_c) \otimes \sum_c \mathbf{P}_c^\top \mathbf{E}^c`, as FedE's
    code does).

    Args:
        values_list (Sequence[Tensor]): per client, an ``[n_c, d]`` block.
        row_ids_list (Sequence[Tensor]): per client, the ``[n_c]`` global ids
            of the block's rows (each id at most once per client).
        num_rows (int): size of the global table.
        weights (Sequence[float | Tensor], optional): per client a scalar or
            an ``[n_c]`` per-row weight. (default: :obj:`None`, all ones)

    Returns:
        (Tensor, Tensor): the ``[num_rows, d]`` aggregated table (zero where no
        client sent the row) and the ``[num_rows]`` total weight per row
        (zero ⇔ the row was not received; callers keep the old value there).
    """
    if len(values_list) != len(row_ids_list):
        raise ValueError(
            f"`values_list` and `row_ids_list` must have the same length "
            f"(got {len(values_list)} and {len(row_ids_list)})"
        )
    if len(values_list) == 0:
        raise ValueError("`values_list` must hold at least one block (got 0)")
    if weights is not None and len(weights) != len(values_list):
        raise ValueError(
            f"`weights` must hold one entry per block (got {len(weights)} for "
            f"{len(values_list)} blocks)"
        )
    dtype = values_list[0].dtype
    vals, idx, wts = [], [], []
    for c, (v, ids) in enumerate(zip(values_list, row_ids_list, strict=True)):
        ids = torch.as_tensor(ids, dtype=torch.long)
        if v.dim() != 2 or ids.dim() != 1 or v.size(0) != ids.numel():
            raise ValueError(
                f"Block {c}: `values` must be [n, d] and `row_ids` [n] "
                f"(got {tuple(v.shape)} and {tuple(ids.shape)})"
            )
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= num_rows):
            raise ValueError(
                f"Block {c}: `row_ids` must lie in [0, {num_rows}) (got range "
                f"[{int(ids.min())}, {int(ids.max())}])"
            )
        w = torch.ones(ids.numel(), dtype=torch.float64)
        if weights is not None:
            w = w * torch.as_tensor(weights[c], dtype=torch.float64)
            if bool((w < 0).any()):
                raise ValueError(f"Block {c}: `weights` must be non-negative")
        vals.append(v.to(torch.float64) * w.unsqueeze(1))
        idx.append(ids)
        wts.append(w)
    index = torch.cat(idx)
    total = _scatter_sum(torch.cat(vals), index, num_rows)
    weight = _scatter_sum(torch.cat(wts).unsqueeze(1), index, num_rows).squeeze(1)
    safe = torch.where(weight > 0, weight, torch.ones_like(weight))
    return (total / safe.unsqueeze(1)).to(dtype), weight


def merge_metric_sums(
    metrics: Mapping[int, Mapping[str, float]], count_key: str = "count"
) -> dict[str, float]:
    r"""Merges mergeable metric states: every ``NAME_sum`` is summed over the
    clients and divided by the summed ``count_key`` (so an MRR over all
    clients' queries, never an unweighted mean of client MRRs).

    Args:
        metrics (Mapping[int, Mapping[str, float]]): client → its metric state.
        count_key (str, optional): the count key. (default: :obj:`"count"`)

    Returns:
        dict[str, float]: ``{NAME: Σ NAME_sum / Σ count, count_key: Σ count}``.
    """
    total = sum(float(m.get(count_key, 0)) for m in metrics.values())
    out: dict[str, float] = {count_key: total}
    keys = sorted({k for m in metrics.values() for k in m if k.endswith("_sum")})
    for k in keys:
        s = sum(float(m.get(k, 0.0)) for m in metrics.values())
        out[k[: -len("_sum")]] = s / total if total > 0 else float("nan")
    return out


__all__ = ["weighted_mean", "scatter_mean_rows", "merge_metric_sums"]
