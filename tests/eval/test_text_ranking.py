import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")

import torch  # noqa: E402
from torch import nn  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
from text_toy import EN, tiny_bert, tiny_tokenizer, toy_graph  # noqa: E402

from fedgraph.eval import (  # noqa: E402
    GraphReranker,
    LinkPredState,
    TripleFilter,
    encode_all_entities,
    rank_text_triples,
)
from fedgraph.models.text import BiEncoder, EntityTokens  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")

# A chain 0 - 1 - 2 - 3 plus an isolated entity 4 (training edges).
CHAIN = torch.tensor([[0, 1, 2], [1, 2, 3]])


def test_neighbourhood_is_k_hops_without_the_query_entity():
    rr = GraphReranker(CHAIN, 5, alpha=0.1, num_hops=1)
    assert rr.neighbourhood(torch.tensor([0, 2, 4])).tolist() == [
        [False, True, False, False, False],
        [False, True, False, True, False],
        [False, False, False, False, False],
    ]
    rr2 = GraphReranker(CHAIN, 5, num_hops=2)
    assert rr2.neighbourhood(torch.tensor([0]))[0].tolist() == [
        False,
        True,
        True,
        False,
        False,
    ]
    rr5 = GraphReranker(CHAIN, 5, num_hops=5)
    assert rr5.neighbourhood(torch.tensor([3]))[0].tolist() == [
        True,
        True,
        True,
        False,
        False,
    ]
    # direction is ignored, and a cycle back to the source gives it no bonus
    cyc = GraphReranker(torch.tensor([[0, 1], [1, 0]]), 3, num_hops=4)
    assert cyc.neighbourhood(torch.tensor([0]))[0].tolist() == [False, True, False]


def test_bonus_and_disabling():
    rr = GraphReranker(CHAIN, 5, alpha=0.25, num_hops=1)
    assert rr.bonus(torch.tensor([1])).tolist() == [[0.25, 0.0, 0.25, 0.0, 0.0]]
    for kw in ({"alpha": 0.0}, {"num_hops": 0}):
        off = GraphReranker(CHAIN, 5, **kw)
        assert not off.enabled
        assert off.bonus(torch.tensor([1])).abs().sum() == 0
    with pytest.raises(ValueError, match="num_hops"):
        GraphReranker(CHAIN, 5, num_hops=-1)
    with pytest.raises(ValueError, match="edge_index"):
        GraphReranker(CHAIN, 3)
    assert repr(rr) == "GraphReranker(entities=5, alpha=0.25, num_hops=1)"


class FixedScores(nn.Module):
    r"""A stand-in bi-encoder whose query embedding is a fixed score row per
    (relation, entity): with one-hot entity embeddings, score = that row."""

    def __init__(self, rows: dict[tuple[int, int], list[float]], num_relations: int):
        super().__init__()
        self.rows = rows
        self.num_relations = num_relations

    def encode_queries(self, relation, input_ids, attention_mask):
        return torch.tensor(
            [
                self.rows[(int(r), int(e))]
                for r, e in zip(relation, input_ids[:, 0], strict=True)
            ]
        )


def test_filtered_reranked_ranks_match_a_hand_computation():
    # One relation (R = 1), five entities; the test triple is (0, r0, 2).
    tokens = EntityTokens(torch.arange(5)[:, None], torch.ones(5, 1))
    entity_emb = torch.eye(5)
    rows = {
        # tail query (0, r0, ?): target 2
        (0, 0): [0.9, 0.5, 0.6, 0.95, 0.55],
        # head query (?, r0, 2) = (2, r0^-1, ?): target 0
        (1, 2): [0.4, 0.7, 0.0, 0.3, 0.45],
    }
    model = FixedScores(rows, num_relations=1)
    test = torch.tensor([[0, 0, 2]])
    # known: (0, r0, 3) in train, (1, r0, 2) in valid
    known = torch.tensor([[0, 0, 3], [1, 0, 2], [0, 0, 2]])
    filt = TripleFilter(known, 5, 1)

    def ranks(**kw):
        state = rank_text_triples(
            model, tokens, test, entity_embeddings=entity_emb, **kw
        )
        s = state.sums
        return round(1 / s["tail"]["rr"], 9), round(1 / s["head"]["rr"], 9)

    # raw: tail 0.6 < 0.9, 0.95 -> 3; head 0.4 < 0.7, 0.45 -> 3
    assert ranks() == (3.0, 3.0)
    # filtered: entity 3 (tail) and entity 1 (head) masked -> 2 and 2
    assert ranks(filter=filt) == (2.0, 2.0)
    # + alpha 0.35 within k = 2 hops on the chain:
    #   tail: N(0) = {1, 2}: [0.9, 0.85, 0.95, -inf, 0.55] -> rank 1
    #   head: N(2) = {0, 1, 3}: [0.75, -inf, 0, 0.65, 0.45] -> rank 1
    rr2 = GraphReranker(CHAIN, 5, alpha=0.35, num_hops=2)
    assert ranks(filter=filt, reranker=rr2) == (1.0, 1.0)
    #   k = 1: N(0) = {1}: [0.9, 0.85, 0.6, -inf, 0.55] -> rank 3
    #          N(2) = {1, 3}: [0.4, -inf, 0, 0.65, 0.45] -> rank 3
    rr1 = GraphReranker(CHAIN, 5, alpha=0.35, num_hops=1)
    assert ranks(filter=filt, reranker=rr1) == (3.0, 3.0)
    # alpha = 0 disables the bonus
    off = GraphReranker(CHAIN, 5, alpha=0.0, num_hops=5)
    assert ranks(filter=filt, reranker=off) == (2.0, 2.0)
    tie = {(0, 0): [0.6, 0.5, 0.6, 0.6, 0.1], (1, 2): [0.4, 0.7, 0.0, 0.3, 0.45]}
    state = rank_text_triples(
        FixedScores(tie, 1),
        tokens,
        test,
        entity_embeddings=entity_emb,
        directions=["tail"],
    )
    assert 1 / state.sums["tail"]["rr"] == pytest.approx(2.0)  # 1 + 0.5 * 2 ties


def test_vectorised_ranking_equals_a_per_query_loop():
    graph = toy_graph("en")
    tok = tiny_tokenizer()
    tokens = EntityTokens.from_texts(tok, EN, max_length=6)
    model = BiEncoder(tiny_bert(), num_relations=3).eval()
    filt = TripleFilter(graph.all_triples(), 8, 3)
    rr = GraphReranker(graph.edge_index("train"), 8, alpha=0.01, num_hops=5)
    triples = graph.all_triples()
    state = rank_text_triples(
        model, tokens, triples, filter=filt, reranker=rr, batch_size=3
    )
    ref = LinkPredState()
    known = {tuple(x) for x in graph.all_triples().tolist()}
    emb = encode_all_entities(model, tokens, batch_size=2)
    with torch.no_grad():
        for h, r, t in triples.tolist():
            for direction, anchor, rel, target in (
                ("tail", h, r, t),
                ("head", t, r + 3, h),
            ):
                ids, mask = tokens[torch.tensor([anchor])]
                q = model.encode_queries(torch.tensor([rel]), ids, mask)[0]
                near = rr.neighbourhood(torch.tensor([anchor]))[0]
                scores = []
                for e in range(8):
                    triple = (h, r, e) if direction == "tail" else (e, r, t)
                    if e != target and triple in known:
                        continue
                    scores.append(float(q @ emb[e]) + 0.01 * float(near[e]))
                own = float(q @ emb[target]) + 0.01 * float(near[target])
                greater = sum(s > own for s in scores)
                equal = sum(s == own for s in scores) - 1
                ref.update(torch.tensor([1.0 + greater + 0.5 * equal]), direction)
    got, want = state.compute(), ref.compute()
    for k in ("mrr", "mr", "hits@1", "hits@3", "hits@10", "head_mrr", "tail_mrr"):
        assert got[k] == pytest.approx(want[k], abs=1e-9)
    assert got["n_queries"] == 2 * triples.size(0)


def test_entity_embeddings_are_batch_size_independent():
    tokens = EntityTokens.from_texts(tiny_tokenizer(), EN, max_length=6)
    model = BiEncoder(tiny_bert(), num_relations=3)
    a = encode_all_entities(model, tokens, batch_size=3)
    b = encode_all_entities(model, tokens, batch_size=8)
    assert a.shape == (8, 16) and torch.allclose(a, b, atol=1e-6)
    assert model.training  # restored
