import pytest
import torch

from fedgraph.models.kge import l1 as l1_mod
from fedgraph.models.kge.l1 import l1_distance


def _data():
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(37, 16, generator=gen, dtype=torch.float64)
    c = torch.randn(23, 16, generator=gen, dtype=torch.float64)
    return q, c


def _reference(q, c):
    return (q[:, None, :] - c[None, :, :]).abs().sum(-1)


@pytest.mark.parametrize("compiled", ["1", "0"])
def test_l1_distance_and_gradients_match_the_definition(compiled, monkeypatch):
    monkeypatch.setenv("FEDGRAPH_COMPILE", compiled)
    q, c = _data()
    qa, ca = q.clone().requires_grad_(), c.clone().requires_grad_()
    qb, cb = q.clone().requires_grad_(), c.clone().requires_grad_()
    weight = torch.linspace(-1, 2, 37 * 23, dtype=torch.float64).view(37, 23)
    out = l1_distance(qa, ca)
    ref = _reference(qb, cb)
    torch.testing.assert_close(out, ref)
    (out * weight).sum().backward()
    (ref * weight).sum().backward()
    torch.testing.assert_close(qa.grad, qb.grad)
    torch.testing.assert_close(ca.grad, cb.grad)


def test_l1_distance_hand_computed_and_one_sided_grad():
    q = torch.tensor([[0.0, 1.0], [2.0, -1.0]], requires_grad=True)
    c = torch.tensor([[1.0, 1.5], [0.5, 0.0], [-1.0, 2.0]])
    d = l1_distance(q, c)
    assert d.tolist() == [[1.5, 1.5, 2.0], [3.5, 2.5, 6.0]]
    d[0, 2].backward()  # sign(q0 - c2) = (+1, -1)
    assert q.grad.tolist() == [[1.0, -1.0], [0.0, 0.0]]


def test_l1_distance_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match=r"same d \(got \(2, 3\) and \(4, 5\)\)"):
        l1_distance(torch.zeros(2, 3), torch.zeros(4, 5))


def test_compile_failure_falls_back_to_cdist(monkeypatch):
    def broken(*args):
        raise RuntimeError("no compiler")

    monkeypatch.setattr(
        l1_mod, "_KERNELS", {k: broken for k in ("forward", "grad_query", "grad_cand")}
    )
    monkeypatch.setattr(l1_mod, "_DISABLED", False)
    q, c = _data()
    with pytest.warns(UserWarning, match="falling back to torch.cdist"):
        out = l1_distance(q, c)
    torch.testing.assert_close(out, _reference(q, c))
    assert not l1_mod.compile_enabled()


def test_candidate_blocks_give_the_same_distances_and_gradients(monkeypatch):
    # 700 candidates of 64 floats in ~16 KiB blocks: several uneven blocks.
    gen = torch.Generator().manual_seed(3)
    q = torch.randn(9, 64, generator=gen, requires_grad=True)
    c = torch.randn(700, 64, generator=gen, requires_grad=True)
    g = torch.randn(9, 700, generator=gen)
    results = []
    for block in (None, 16 * 1024):
        monkeypatch.setattr(l1_mod._KERNEL_SET, "block_bytes", block)
        if block is not None:
            assert len(l1_mod._KERNEL_SET.blocks(c)) > 2
        d = l1_distance(q, c)
        results.append((d, *torch.autograd.grad((d * g).sum(), (q, c))))
    # Float rounding only: the compiled kernel may vectorise the d-reduction
    # differently for another block shape, and the query gradient sums the
    # blocks in another order.
    torch.testing.assert_close(results[0][0], results[1][0], rtol=1e-6, atol=1e-5)
    for a, b in zip(results[0][1:], results[1][1:], strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode", ["head-batch", "tail-batch"])
def test_per_positive_negatives_fused_equal_the_gathered_path(mode, monkeypatch):
    from kge_toy import per_positive_batch, scores_and_grads

    from fedgraph.models import TransE
    from fedgraph.models.kge import l1

    torch.manual_seed(0)
    model = TransE(40, 5, 16, gamma=4.0)
    batch = per_positive_batch(40, 5)
    fused = scores_and_grads(model, *batch, mode)
    monkeypatch.setattr(l1, "compile_enabled", lambda: False)
    monkeypatch.setattr("fedgraph.models.kge.transe.compile_enabled", lambda: False)
    plain = scores_and_grads(model, *batch, mode)  # the [B, K, d] gather and autograd
    for a, b in zip(fused, plain, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


def test_l1_gathered_checks_shapes():
    from fedgraph.models.kge.l1 import l1_gathered

    with pytest.raises(ValueError, match="`index` must be"):
        l1_gathered(
            torch.zeros(3, 4), torch.zeros(5, 4), torch.zeros(2, 2, dtype=torch.long)
        )
    with pytest.raises(ValueError, match="same d"):
        l1_gathered(
            torch.zeros(3, 4), torch.zeros(5, 3), torch.zeros(3, 2, dtype=torch.long)
        )


@pytest.mark.parametrize("compiled", ["1", "0"])
def test_l1_distance_grouped_is_l1_distance_per_group(compiled, monkeypatch):
    from fedgraph.models.kge.l1 import l1_distance_grouped

    monkeypatch.setenv("FEDGRAPH_COMPILE", compiled)
    gen = torch.Generator().manual_seed(1)
    q = torch.randn(3, 7, 5, generator=gen, dtype=torch.float64)
    c = torch.randn(3, 4, 5, generator=gen, dtype=torch.float64)
    weight = torch.randn(3, 7, 4, generator=gen, dtype=torch.float64)
    qa, ca = q.clone().requires_grad_(), c.clone().requires_grad_()
    qb, cb = q.clone().requires_grad_(), c.clone().requires_grad_()
    out = l1_distance_grouped(qa, ca)
    ref = torch.stack([_reference(qb[g], cb[g]) for g in range(3)])
    torch.testing.assert_close(out, ref)
    (out * weight).sum().backward()
    (ref * weight).sum().backward()
    torch.testing.assert_close(qa.grad, qb.grad)
    torch.testing.assert_close(ca.grad, cb.grad)
    with pytest.raises(ValueError, match=r"\[G, B, d\] and \[G, C, d\]"):
        l1_distance_grouped(q, c[:2])
