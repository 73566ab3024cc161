import importlib.util
import warnings

import numpy as np
import pytest
import torch

from fedgraph.federated import aggregate
from fedgraph.federated.aggregate import (
    merge_metric_sums,
    scatter_mean_rows,
    weighted_mean,
)


def test_weighted_mean_matches_numpy():
    gen = torch.Generator().manual_seed(1)
    ts = [torch.randn(4, 3, generator=gen) for _ in range(3)]
    w = [10, 30, 60]
    ref = np.average(np.stack([t.numpy() for t in ts]), axis=0, weights=w)
    out = weighted_mean(ts, w)
    assert out.dtype == torch.float32
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    "weights,msg",
    [
        ([1.0], "one weight per tensor"),
        ([-1.0, 2.0], "non-negative"),
        ([0, 0], "not all zero"),
    ],
)
def test_weighted_mean_rejects_bad_weights(weights, msg):
    with pytest.raises(ValueError, match=msg):
        weighted_mean([torch.ones(2), torch.zeros(2)], weights)


def test_weighted_mean_rejects_shape_mismatch():
    with pytest.raises(ValueError, match=r"`tensors\[1\]` has shape"):
        weighted_mean([torch.ones(2), torch.zeros(3)], [1, 1])


def _numpy_scatter_mean(values, ids, n, weights=None):
    d = values[0].shape[1]
    num, den = np.zeros((n, d)), np.zeros(n)
    for c, (v, i) in enumerate(zip(values, ids, strict=True)):
        w = np.ones(len(i)) if weights is None else np.broadcast_to(weights[c], len(i))
        for row, e in enumerate(i):
            num[e] += w[row] * v[row]
            den[e] += w[row]
    out = np.where(den[:, None] > 0, num / np.maximum(den, 1e-300)[:, None], 0.0)
    return out, den


@pytest.mark.parametrize("weighted", [False, True])
def test_scatter_mean_rows_matches_numpy(weighted):
    rng = np.random.default_rng(0)
    n, d = 12, 5
    ids = [rng.choice(n, size=s, replace=False) for s in (7, 4, 9)]
    values = [rng.normal(size=(len(i), d)).astype(np.float32) for i in ids]
    weights = None
    if weighted:
        weights = [2.0, torch.tensor(rng.uniform(0.5, 2, size=4)), 0.5]
    out, w = scatter_mean_rows(
        [torch.from_numpy(v) for v in values],
        [torch.from_numpy(i) for i in ids],
        n,
        weights=weights,
    )
    np_w = None if weights is None else [np.asarray(x, dtype=float) for x in weights]
    ref, ref_w = _numpy_scatter_mean(values, ids, n, np_w)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.numpy(), ref_w)
    # rows nobody sent are zero with zero weight
    missing = set(range(n)) - set(np.concatenate(ids).tolist())
    for e in missing:
        assert w[e] == 0 and torch.all(out[e] == 0)


def test_scatter_mean_rows_hand_values():
    out, w = scatter_mean_rows(
        [torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([[5.0, 6.0]])],
        [torch.tensor([0, 2]), torch.tensor([2])],
        num_rows=3,
    )
    assert torch.equal(out, torch.tensor([[1.0, 2.0], [0.0, 0.0], [4.0, 5.0]]))
    assert torch.equal(w, torch.tensor([1.0, 0.0, 2.0], dtype=torch.float64))


def test_scatter_mean_rows_rejects_out_of_range_ids():
    with pytest.raises(ValueError, match=r"Block 0: `row_ids` must lie in \[0, 2\)"):
        scatter_mean_rows([torch.ones(1, 2)], [torch.tensor([5])], 2)


def test_scatter_falls_back_to_pyg_with_warning(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("torch_scatter"):
            raise ImportError("no torch_scatter")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(aggregate, "_SCATTER", None)
    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.warns(RuntimeWarning, match="torch_geometric.utils.scatter"):
        out, _ = scatter_mean_rows(
            [torch.tensor([[1.0], [3.0]]), torch.tensor([[5.0]])],
            [torch.tensor([0, 1]), torch.tensor([1])],
            2,
        )
    assert torch.equal(out, torch.tensor([[1.0], [4.0]]))
    monkeypatch.setattr(aggregate, "_SCATTER", None)  # re-resolve next time
    monkeypatch.setattr(builtins, "__import__", real_import)
    if importlib.util.find_spec("torch_scatter") is None:
        return  # the optional `scatter` extra is not installed: it warns again
    with warnings.catch_warnings():  # with torch-scatter: no warning
        warnings.simplefilter("error")
        scatter_mean_rows([torch.ones(1, 1)], [torch.tensor([0])], 1)


def test_merge_metric_sums_is_query_weighted():
    merged = merge_metric_sums(
        {0: {"count": 2, "mrr_sum": 1.0}, 1: {"count": 6, "mrr_sum": 1.5}}
    )
    assert merged == {"count": 8.0, "mrr": pytest.approx(2.5 / 8)}


def test_torch_scatter_and_the_pyg_fallback_agree(monkeypatch):
    ts = pytest.importorskip(
        "torch_scatter",
        reason="torch-scatter (the optional `scatter` extra) is not installed",
    )
    from torch_geometric.utils import scatter as pyg_scatter

    g = torch.Generator().manual_seed(0)
    src = torch.randn(50, 4, generator=g)
    index = torch.randint(0, 7, (50,), generator=g)
    a = ts.scatter(src, index, dim=0, dim_size=9, reduce="sum")
    b = pyg_scatter(src, index, dim=0, dim_size=9, reduce="sum")
    assert torch.allclose(a, b)
