import warnings

import pytest
import torch

from fedgraph.models.kge import RotatE
from fedgraph.models.kge import modulus as modulus_mod
from fedgraph.models.kge.modulus import EPS, modulus_distance

pytestmark = pytest.mark.usefixtures("one_thread")


def _data(b=37, c=23, k=8, dtype=torch.float32):
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(b, 2 * k, generator=gen, dtype=dtype)
    x = torch.randn(c, 2 * k, generator=gen, dtype=dtype)
    return q, x


def _reference(q, x):
    # The plain broadcast definition, differentiated by autograd.
    q_re, q_im = q.chunk(2, dim=-1)
    x_re, x_im = x.chunk(2, dim=-1)
    d_re = q_re[:, None] - x_re[None]
    d_im = q_im[:, None] - x_im[None]
    return torch.sqrt(d_re * d_re + d_im * d_im).sum(-1)


def _value_and_grads(fn, q, x, weight):
    q, x = q.clone().requires_grad_(), x.clone().requires_grad_()
    out = fn(q, x)
    (out * weight).sum().backward()
    return out.detach(), q.grad, x.grad


def _assert_all_close(got, ref):
    for a, b in zip(got, ref, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


def _broken(*args):
    raise RuntimeError("no compiler")


@pytest.mark.parametrize("compiled", ["1", "0"])
def test_modulus_distance_and_gradients_match_the_definition(compiled, monkeypatch):
    monkeypatch.setenv("FEDGRAPH_COMPILE", compiled)
    q, x = _data()
    weight = torch.linspace(-1, 2, 37 * 23).view(37, 23)
    got = _value_and_grads(modulus_distance, q, x, weight)
    ref = _value_and_grads(_reference, q, x, weight)
    _assert_all_close(got, ref)
    assert modulus_mod.compile_enabled() == (compiled == "1")


@pytest.mark.parametrize("compiled", ["1", "0"])
def test_modulus_distance_gradcheck_float64(compiled, monkeypatch):
    monkeypatch.setenv("FEDGRAPH_COMPILE", compiled)
    q, x = _data(4, 3, 2, torch.float64)
    assert torch.autograd.gradcheck(
        modulus_distance, (q.requires_grad_(), x.requires_grad_())
    )


@pytest.mark.parametrize("compiled", ["1", "0"])
def test_zero_modulus_gives_a_zero_gradient_term(compiled, monkeypatch):
    monkeypatch.setenv("FEDGRAPH_COMPILE", compiled)
    # Coordinate 0 of q and x coincide (m = 0): that term's gradient is
    # 0 / max(0, EPS) = 0, where autograd through sqrt gives NaN.
    q = torch.tensor([[1.0, 2.0, 3.0, -1.0]], requires_grad=True)
    x = torch.tensor([[1.0, 5.0, 3.0, 3.0]], requires_grad=True)
    d = modulus_distance(q, x)
    assert d.item() == pytest.approx(0.0 + 5.0)  # |0 + 0i| + |-3 - 4i|
    d.sum().backward()
    assert q.grad[0].tolist() == pytest.approx([0.0, -0.6, 0.0, -0.8])
    assert x.grad[0].tolist() == pytest.approx([0.0, 0.6, 0.0, 0.8])
    assert 0 < EPS < 1e-6


def test_eager_fallback_is_chunked_and_exact(monkeypatch):
    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")
    monkeypatch.setattr(modulus_mod, "CHUNK_BUDGET", 37 * 16 * 5)  # 5 per chunk
    q, x = _data()
    weight = torch.randn(37, 23)
    got = _value_and_grads(modulus_distance, q, x, weight)
    ref = _value_and_grads(_reference, q, x, weight)
    _assert_all_close(got, ref)


@pytest.fixture
def broken_kernels(monkeypatch):
    # Compiled kernels that fail when called, and compilation not yet disabled.
    monkeypatch.setattr(
        modulus_mod,
        "_KERNELS",
        {k: _broken for k in ("forward", "grad_query", "grad_cand")},
    )
    monkeypatch.setattr(modulus_mod, "_DISABLED", False)


def test_compile_failure_falls_back_with_a_warning(monkeypatch, broken_kernels):
    monkeypatch.setenv("FEDGRAPH_COMPILE", "1")
    q, x = _data()
    weight = torch.randn(37, 23)
    with pytest.warns(UserWarning, match="falling back to the chunked broadcast"):
        got = _value_and_grads(modulus_distance, q, x, weight)
    assert not modulus_mod.compile_enabled()
    ref = _value_and_grads(_reference, q, x, weight)
    _assert_all_close(got, ref)


def test_fedgraph_compile_0_never_calls_the_compiled_kernels(
    monkeypatch, broken_kernels
):
    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")
    q, x = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _value_and_grads(modulus_distance, q, x, torch.ones(37, 23))
    torch.testing.assert_close(got[0], _reference(q, x), rtol=1e-5, atol=1e-5)
    assert not modulus_mod.compile_enabled()
    assert modulus_mod._DISABLED is False  # not a failure, just switched off


@pytest.mark.parametrize(
    ("q_shape", "x_shape", "match"),
    [
        ((2, 4), (3, 6), r"same 2k \(got \(2, 4\) and \(3, 6\)\)"),
        ((4,), (3, 4), r"\[B, 2k\] and \[C, 2k\]"),
        ((2, 5), (3, 5), r"even number of columns \(got 5\)"),
    ],
)
def test_modulus_distance_rejects_bad_shapes(q_shape, x_shape, match):
    with pytest.raises(ValueError, match=match):
        modulus_distance(torch.zeros(q_shape), torch.zeros(x_shape))


def test_rotate_candidate_scores_equal_the_interaction():
    torch.manual_seed(0)
    m = RotatE(11, 5, 6, gamma=6.0)
    h, r = torch.tensor([0, 3, 7, 10]), torch.tensor([0, 1, 4, 2])
    t = torch.tensor([5, 3, 1, 9])
    e, rel = m.entity_embedding.weight, m.relation_embedding(r)
    with torch.no_grad():
        tails = m.score_t(h, r)  # all 11 candidates
        heads = m.score_h(r, t)
        ref_t = m.interaction(e[h][:, None], rel[:, None], e[None])
        ref_h = m.interaction(e[None], rel[:, None], e[t][:, None])
    assert tails.shape == heads.shape == (4, 11)
    torch.testing.assert_close(tails, ref_t, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(heads, ref_h, rtol=1e-5, atol=1e-5)
    # one candidate column is each positive triple's own score
    pos = m.score_hrt(h, r, t).detach()
    torch.testing.assert_close(tails[torch.arange(4), t], pos)
    torch.testing.assert_close(heads[torch.arange(4), h], pos)


@pytest.mark.parametrize("mode", ["head-batch", "tail-batch"])
def test_rotate_shared_negatives_match_per_positive_scoring(mode):
    # score_batch with [K] shared negatives goes through modulus_distance;
    # the same negatives repeated per positive ([B, K]) go through interaction.
    torch.manual_seed(0)
    m = RotatE(11, 5, 6, gamma=6.0)
    pos = torch.tensor([[0, 0, 5], [3, 1, 3], [7, 4, 1]])
    neg = torch.tensor([2, 9, 0, 4])
    grads = []
    for negative in (neg, neg.expand(3, 4)):
        m.zero_grad()
        p, n = m.score_batch(pos, negative, mode)
        (p.sum() + (n * torch.arange(12.0).view(3, 4)).sum()).backward()
        grads.append(
            (
                n.detach(),
                m.entity_embedding.weight.grad.clone(),
                m.relation_embedding.weight.grad.clone(),
            )
        )
    _assert_all_close(*grads)


def test_candidate_blocks_are_near_equal_and_exact(monkeypatch):
    kernels = modulus_mod._KERNEL_SET
    row = torch.zeros(513, 4)  # 16 bytes per row
    monkeypatch.setattr(kernels, "block_bytes", 512 * 16)
    assert [s.stop - s.start for s in kernels.blocks(row)] == [257, 256]
    assert kernels.blocks(row[:1]) == [slice(0, 1)]
    # 23 candidates of 64 bytes in blocks of <= 5 rows: 5, 5, 5, 5, 3
    monkeypatch.setattr(kernels, "block_bytes", 5 * 64 + 10)
    q, x = _data()
    assert [s.stop - s.start for s in kernels.blocks(x)] == [5, 5, 5, 5, 3]
    weight = torch.randn(37, 23)
    got = _value_and_grads(modulus_distance, q, x, weight)
    _assert_all_close(got, _value_and_grads(_reference, q, x, weight))


def _gathered_reference(q, table, index):
    # the definition on the [B, K, 2k] gathered rows, differentiated by autograd
    k = q.size(1) // 2
    x = table[index]
    d_re = q[:, None, :k] - x[..., :k]
    d_im = q[:, None, k:] - x[..., k:]
    return torch.sqrt(d_re * d_re + d_im * d_im).sum(-1)


@pytest.mark.parametrize("compiled", ["1", "0"])
@pytest.mark.parametrize("rows_bytes", [None, 3 * 6 * 16 * 4])
def test_modulus_gathered_and_gradients_match_the_definition(
    compiled, rows_bytes, monkeypatch
):
    from fedgraph.models.kge.modulus import modulus_gathered

    monkeypatch.setenv("FEDGRAPH_COMPILE", compiled)
    if rows_bytes is not None:  # the backward in blocks of 3 queries: 3, 3, 3, 3, 1
        monkeypatch.setattr(modulus_mod, "GATHER_ROWS_BYTES", rows_bytes)
    q, table = _data(b=13, c=9, k=8)
    gen = torch.Generator().manual_seed(1)
    index = torch.randint(9, (13, 6), generator=gen)  # repeats: gradients add up
    weight = torch.linspace(-1, 2, 13 * 6).view(13, 6)

    def run(fn):
        return _value_and_grads(lambda a, b: fn(a, b, index), q, table, weight)

    _assert_all_close(run(modulus_gathered), run(_gathered_reference))
    assert modulus_mod.gathered_enabled() == (compiled == "1")


@pytest.mark.parametrize("compiled", ["1", "0"])
def test_modulus_gathered_gradcheck_float64_and_zero_modulus(compiled, monkeypatch):
    from fedgraph.models.kge.modulus import modulus_gathered

    monkeypatch.setenv("FEDGRAPH_COMPILE", compiled)
    q, table = _data(4, 3, 2, torch.float64)
    index = torch.tensor([[0, 2], [1, 1], [2, 0], [0, 0]])
    assert torch.autograd.gradcheck(
        lambda a, b: modulus_gathered(a, b, index),
        (q.requires_grad_(), table.requires_grad_()),
    )
    # a coinciding coordinate (m = 0) contributes 0 to the gradient, not NaN
    q = torch.tensor([[1.0, 2.0, 3.0, -1.0]], requires_grad=True)
    table = torch.tensor([[1.0, 5.0, 3.0, 3.0]], requires_grad=True)
    d = modulus_gathered(q, table, torch.tensor([[0, 0]]))
    assert d[0].tolist() == pytest.approx([5.0, 5.0])  # |0 + 0i| + |-3 - 4i|
    d.sum().backward()
    assert q.grad[0].tolist() == pytest.approx([0.0, -1.2, 0.0, -1.6])
    assert table.grad[0].tolist() == pytest.approx([0.0, 1.2, 0.0, 1.6])


@pytest.mark.parametrize("mode", ["head-batch", "tail-batch"])
def test_rotate_per_positive_kernel_equals_the_interaction(mode, monkeypatch):
    # [B, K] negatives: the gathered kernel against interaction() on the
    # gathered rows (the path with compilation off), scores and gradients
    from kge_toy import per_positive_batch, scores_and_grads

    torch.manual_seed(0)
    m = RotatE(40, 5, 8, gamma=6.0)
    batch = per_positive_batch(40, 5)
    assert m.gathers_negatives()
    fused = scores_and_grads(m, *batch, mode)
    monkeypatch.setattr(type(m), "gathers_negatives", lambda self: False)
    _assert_all_close(fused, scores_and_grads(m, *batch, mode))


def test_modulus_gathered_checks_shapes():
    from fedgraph.models.kge.modulus import modulus_gathered

    idx = torch.zeros(3, 2, dtype=torch.long)
    with pytest.raises(ValueError, match="`index` must be"):
        modulus_gathered(torch.zeros(3, 4), torch.zeros(5, 4), idx[:2])
    with pytest.raises(ValueError, match="same 2k"):
        modulus_gathered(torch.zeros(3, 4), torch.zeros(5, 6), idx)
    with pytest.raises(ValueError, match="even number"):
        modulus_gathered(torch.zeros(3, 5), torch.zeros(5, 5), idx)
