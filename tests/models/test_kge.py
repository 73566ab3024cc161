import math

import pytest
import torch

from fedgraph.models.kge import (
    ComplEx,
    DistMult,
    RotatE,
    TransE,
    models,
    resolve_model,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def _set(model, ent, rel):
    with torch.no_grad():
        model.entity_embedding.weight.copy_(torch.tensor(ent, dtype=torch.float))
        model.relation_embedding.weight.copy_(torch.tensor(rel, dtype=torch.float))


def test_transe_hand_computed():
    m = TransE(3, 1, 2, gamma=9.0)
    _set(m, [[0, 0], [1, 2], [3, -1]], [[1, 1]])
    # h=0, r=0, t=1: |0+1-1| + |0+1-2| = 1 -> 8
    h, r, t = torch.tensor([0, 1]), torch.tensor([0, 0]), torch.tensor([1, 2])
    # h=1, t=2: |1+1-3| + |2+1+1| = 1 + 4 = 5 -> 4
    assert m.score_hrt(h, r, t).tolist() == [8.0, 4.0]
    m2 = TransE(3, 1, 2, gamma=9.0, p_norm=2)
    _set(m2, [[0, 0], [1, 2], [3, -1]], [[1, 1]])
    assert m2.score_hrt(h, r, t)[1].item() == pytest.approx(9 - math.sqrt(17))


def test_distmult_complex_hand_computed():
    m = DistMult(2, 1, 2)
    _set(m, [[1, 2], [3, 4]], [[2, -1]])
    # 1*2*3 + 2*(-1)*4 = -2
    assert (
        m.score_hrt(torch.tensor([0]), torch.tensor([0]), torch.tensor([1])).item()
        == -2
    )
    c = ComplEx(2, 1, 1)
    # h = 1 + 2i, r = 0 + 1i, t = 3 - 1i: Re(h r conj(t)) = Re((-2 + i)(3 + i))
    # = Re(-6 - 2i + 3i - 1) = -7
    _set(c, [[1, 2], [3, -1]], [[0, 1]])
    assert (
        c.score_hrt(torch.tensor([0]), torch.tensor([0]), torch.tensor([1])).item()
        == -7
    )


def test_rotate_hand_computed():
    m = RotatE(2, 1, 1, gamma=6.0, epsilon=2.0)  # embedding_range = 8
    # phase = r / (8 / pi) = pi / 2 when r = 4: rotation by i
    _set(m, [[1, 0], [0, 1]], [[4.0]])
    s = m.score_hrt(torch.tensor([0, 1]), torch.tensor([0, 0]), torch.tensor([1, 0]))
    # 1 * i = i = t -> distance 0; i * i = -1 vs t = 1 -> distance 2
    assert s.tolist() == pytest.approx([6.0, 4.0], abs=1e-6)
    assert m.entity_embedding.weight.shape == (2, 2)
    assert m.relation_embedding.weight.shape == (1, 1)


@pytest.mark.parametrize("cls", models)
def test_candidate_scoring_matches_triple_scoring(cls):
    torch.manual_seed(0)
    m = cls(10, 5, 8, gamma=9.0)
    h = torch.randint(0, 10, (6,))
    r = torch.randint(0, 5, (6,))
    t = torch.randint(0, 10, (6,))
    all_t = m.score_t(h, r)
    all_h = m.score_h(r, t)
    assert all_t.shape == (6, 10) and all_h.shape == (6, 10)
    ent = torch.arange(10)
    ref_t = m.score_hrt(
        h[:, None].expand(6, 10), r[:, None].expand(6, 10), ent.expand(6, 10)
    )
    ref_h = m.score_hrt(
        ent.expand(6, 10), r[:, None].expand(6, 10), t[:, None].expand(6, 10)
    )
    assert torch.allclose(all_t, ref_t, atol=1e-4)
    assert torch.allclose(all_h, ref_h, atol=1e-4)
    cand = torch.tensor([7, 2, 5])
    assert torch.allclose(m.score_t(h, r, cand), ref_t[:, cand], atol=1e-4)
    # shared [K] negatives == per-positive [B, K] with the same rows
    pos = torch.stack([h, r, t], 1)
    for mode in ("head-batch", "tail-batch"):
        shared = m.score_negatives(pos, cand, mode)
        per = m.score_negatives(pos, cand.expand(6, 3), mode)
        assert torch.allclose(shared, per, atol=1e-4)
        pos_score, _ = m.score_batch(pos, cand, mode)
        assert torch.allclose(pos_score, m.score_hrt(h, r, t), atol=1e-5)


@pytest.mark.parametrize("p_norm", [1.0, 2.0])
@pytest.mark.parametrize("cls", models)
def test_grouped_candidate_scoring_is_per_group_scoring(cls, p_norm):
    torch.manual_seed(0)
    kw = {"p_norm": p_norm} if cls is TransE else {}
    m = cls(10, 5, 8, gamma=9.0, **kw)
    de, dr = m.entity_embedding.weight.size(1), m.relation_embedding.weight.size(1)
    head, tail = torch.randn(3, 6, de), torch.randn(3, 6, de)
    rel, cand = torch.randn(3, 6, dr), torch.randn(3, 4, de)
    tails = m.score_tails_grouped(head, rel, cand)
    heads = m.score_heads_grouped(rel, tail, cand)
    assert tails.shape == heads.shape == (3, 6, 4)
    for g in range(3):
        ref_t = m.interaction(head[g][:, None], rel[g][:, None], cand[g][None])
        ref_h = m.interaction(cand[g][None], rel[g][:, None], tail[g][:, None])
        assert torch.allclose(tails[g], ref_t, atol=1e-4)
        assert torch.allclose(heads[g], ref_h, atol=1e-4)


@pytest.mark.parametrize("cls", models)
def test_init_range_repr_and_registry(cls):
    m = cls(10, 5, 16, gamma=10.0, epsilon=2.0)
    rho = 12.0 / 16
    assert m.entity_embedding.weight.abs().max() <= rho
    assert m.embedding_range == pytest.approx(rho)
    assert (
        str(m) == f"{cls.__name__}(10, num_relations=5, hidden_channels=16, gamma=10.0)"
    )
    assert type(resolve_model(cls.__name__.lower(), 10, 5, 16)) is cls


def test_errors():
    with pytest.raises(ValueError, match="`hidden_channels`"):
        TransE(10, 5, 0)
    with pytest.raises(ValueError, match="`p_norm`"):
        TransE(10, 5, 4, p_norm=3)
    m = TransE(10, 5, 4)
    with pytest.raises(ValueError, match="`mode`"):
        m.score_negatives(
            torch.zeros(2, 3, dtype=torch.long), torch.zeros(3, dtype=torch.long), "x"
        )
    with pytest.raises(ValueError, match="Could not resolve"):
        resolve_model("nope", 10, 5, 4)


def test_gradients_flow_through_cdist():
    m = TransE(10, 5, 8)
    pos = torch.tensor([[0, 1, 2], [3, 4, 5]])
    m.score_negatives(pos, torch.tensor([1, 2, 3]), "tail-batch").sum().backward()
    assert m.entity_embedding.weight.grad[[0, 1, 2, 3]].abs().sum() > 0
    assert m.relation_embedding.weight.grad[[1, 4]].abs().sum() > 0


def _rotate_reference(model, head, rel, tail):
    # RotatE's score as written before the zero-modulus guard
    h_re, h_im = head.chunk(2, dim=-1)
    t_re, t_im = tail.chunk(2, dim=-1)
    r_re, r_im = model._phase(rel)
    d_re = h_re * r_re - h_im * r_im - t_re
    d_im = h_re * r_im + h_im * r_re - t_im
    return model.gamma - torch.sqrt(d_re * d_re + d_im * d_im).sum(-1)


def test_rotate_self_loop_at_zero_phase_trains_without_nan():
    # (h, r, h) with r's phases all 0: every complex difference is exactly 0.
    # sqrt's derivative there is infinite (NaN gradient, a NaN model after the
    # step); the guarded score gives gradient 0 in those coordinates.
    from fedgraph.models import RotatE

    torch.manual_seed(0)
    m = RotatE(4, 2, 3, gamma=6.0)
    with torch.no_grad():
        m.relation_embedding.weight[0] = 0.0
    pos = torch.tensor([[1, 0, 1], [2, 1, 3]])
    ps, ns = m.score_batch(pos, torch.tensor([0, 3]), "tail-batch")
    assert ps[0] == 6.0
    (ps.sum() - ns.sum()).backward()
    for p in m.parameters():
        assert torch.isfinite(p.grad).all()
    ref = RotatE(4, 2, 3, gamma=6.0)
    ref.load_state_dict(m.state_dict())
    h = ref.entity_embedding.weight[pos[:, 0]]
    t = ref.entity_embedding.weight[pos[:, 2]]
    _rotate_reference(ref, h, ref.relation_embedding.weight[pos[:, 1]], t)[0].backward()
    assert torch.isnan(ref.entity_embedding.weight.grad).any()


def test_rotate_score_and_gradient_away_from_zero_are_bit_for_bit_unguarded():
    from fedgraph.models import RotatE

    torch.manual_seed(0)
    m = RotatE(50, 5, 16, gamma=9.0)
    g = torch.Generator().manual_seed(1)
    h, t = (torch.randint(50, (64,), generator=g) for _ in range(2))
    r = torch.randint(5, (64,), generator=g)
    grads = []
    for score in (m.interaction, lambda *a: _rotate_reference(m, *a)):
        m.zero_grad(set_to_none=True)
        ent, rel = m.entity_embedding.weight, m.relation_embedding.weight
        s = score(ent[h][:, None], rel[r][:, None], ent[t][None])  # [64, 64]
        (s * torch.linspace(-1, 1, s.numel()).view_as(s)).sum().backward()
        grads.append((s.detach(), ent.grad.clone(), rel.grad.clone()))
    for a, b in zip(*grads, strict=True):
        assert torch.equal(a, b)
