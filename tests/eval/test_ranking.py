import pytest
import torch

from fedgraph.eval.metrics import LinkPredState
from fedgraph.eval.ranking import TripleFilter, rank_triples, realistic_ranks
from fedgraph.models.kge import DistMult, TransE

pytestmark = pytest.mark.usefixtures("one_thread")


def line_model():
    # 10 entities on a line (e_i = i), relation 0 = +1, gamma = 0:
    # f(h, 0, t) = -|h + 1 - t|
    m = TransE(10, 2, 1, gamma=0.0)
    with torch.no_grad():
        m.entity_embedding.weight.copy_(torch.arange(10.0)[:, None])
        m.relation_embedding.weight.copy_(torch.tensor([[1.0], [5.0]]))
    return m


def ranks(m, triples, **kw):
    st = rank_triples(m, torch.tensor(triples), **kw)
    return {d: st.sums[d]["rank"] for d in ("head", "tail")}, st


def test_realistic_rank_ties():
    s = torch.tensor([[3.0, 1.0, 3.0, 3.0, 0.0]])
    # target col 2: one greater? no: 3 == 3 for cols 0, 3 -> 1 + 0 + 2/2 = 2
    assert realistic_ranks(s, torch.tensor([2])).tolist() == [2.0]
    assert realistic_ranks(s, torch.tensor([1])).tolist() == [4.0]


def test_hand_computed_raw_and_filtered_both_directions():
    m = line_model()
    # (2, 0, 4): tail scores -|3 - t|: t=3 beats, t=2 ties -> 1 + 1 + .5
    #            head scores -|h - 3|: h=3 beats, h=4 ties -> 2.5
    r, st = ranks(m, [[2, 0, 4]])
    assert r == {"head": 2.5, "tail": 2.5}
    flt = TripleFilter(torch.tensor([[2, 0, 4], [2, 0, 3], [4, 0, 4]]), 10, 2)
    r, _ = ranks(m, [[2, 0, 4]], filter=flt)
    # tail: 3 filtered -> 1.5; head: (4, 0, 4) filtered -> 1 + 1 = 2
    assert r == {"head": 2.0, "tail": 1.5}
    # the target itself is never filtered, only the others
    r, _ = ranks(m, [[2, 0, 3]], filter=flt)
    assert r == {"head": 1.0, "tail": 1.0}
    m_ = st.compute()
    assert m_["mrr"] == pytest.approx(0.4) and m_["hits@3"] == 1.0 and m_["hits@1"] == 0


def test_candidate_subset_and_direction():
    m = line_model()
    cand = torch.tensor([2, 4, 7])
    r, st = ranks(m, [[2, 0, 4]], candidates=cand, directions=("head",))
    assert r["head"] == 1.5 and st.sums["tail"]["count"] == 0
    with pytest.raises(ValueError, match="not among `candidates`"):
        ranks(m, [[2, 0, 5]], candidates=cand)


def test_vectorised_equals_reference_loop():
    torch.manual_seed(0)
    m = DistMult(10, 5, 4)
    trip = torch.stack(
        [
            torch.randint(0, 10, (40,)),
            torch.randint(0, 5, (40,)),
            torch.randint(0, 10, (40,)),
        ],
        1,
    )
    flt = TripleFilter(trip, 10, 5)
    st = rank_triples(m, trip[:15], filter=flt, batch_size=4)
    known = {tuple(x) for x in trip.tolist()}
    ref = {"head": [], "tail": []}
    with torch.no_grad():
        for h, r, t in trip[:15].tolist():
            for d in ("head", "tail"):
                if d == "tail":
                    s = m.score_t(torch.tensor([h]), torch.tensor([r]))[0]
                    tgt = t
                    bad = [e for e in range(10) if e != t and (h, r, e) in known]
                else:
                    s = m.score_h(torch.tensor([r]), torch.tensor([t]))[0]
                    tgt = h
                    bad = [e for e in range(10) if e != h and (e, r, t) in known]
                keep = [e for e in range(10) if e not in bad and e != tgt]
                gt = sum(float(s[e]) > float(s[tgt]) for e in keep)
                eq = sum(float(s[e]) == float(s[tgt]) for e in keep)
                ref[d].append(1 + gt + eq / 2)
    for d in ("head", "tail"):
        assert st.sums[d]["rank"] == pytest.approx(sum(ref[d]))
        assert st.sums[d]["rr"] == pytest.approx(sum(1 / x for x in ref[d]))


def test_merged_clients_equal_pooled_queries():
    torch.manual_seed(1)
    m = DistMult(10, 5, 4)
    trip = torch.stack(
        [
            torch.randint(0, 10, (30,)),
            torch.randint(0, 5, (30,)),
            torch.randint(0, 10, (30,)),
        ],
        1,
    )
    flt = TripleFilter(trip, 10, 5)
    a = rank_triples(m, trip[:7], filter=flt)
    b = rank_triples(m, trip[7:], filter=flt)
    pooled = rank_triples(m, trip, filter=flt).compute()
    merged = LinkPredState.merged([a, b]).compute()
    assert merged == pytest.approx(pooled)
    # == the query-weighted mean of the client MRRs
    ma, mb = a.compute(), b.compute()
    w = (ma["mrr"] * 14 + mb["mrr"] * 46) / 60
    assert merged["mrr"] == pytest.approx(w)
    assert LinkPredState.from_dict(a.to_dict()).compute() == pytest.approx(ma)


def test_nan_and_infinite_scores_rank_last():
    nan, inf = float("nan"), float("inf")
    scores = torch.tensor(
        [
            [nan, nan, nan],  # a diverged model: last, never first
            [1.0, nan, 2.0],  # a NaN candidate is not above the target
            [0.0, inf, -inf],  # nor an infinite one; -inf is masked
            [nan, 1.0, -inf],  # last among the unmasked candidates
            [-inf, 1.0, 2.0],  # a target scored -inf: last
        ]
    )
    ranks = realistic_ranks(scores, torch.tensor([0, 0, 0, 0, 0]))
    assert ranks.tolist() == [3.0, 2.0, 1.0, 2.0, 3.0]


def test_a_nan_model_cannot_win_by_ranking():
    model = TransE(5, 2, 4)
    with torch.no_grad():
        model.entity_embedding.weight.fill_(float("nan"))
    triples = torch.tensor([[0, 0, 1], [2, 1, 3]])
    m = rank_triples(model, triples).compute()
    assert m["mrr"] == pytest.approx(1 / 5) and m["hits@1"] == 0.0
