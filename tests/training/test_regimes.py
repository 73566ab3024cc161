r"""The training regimes (:mod:`fedgraph.training.regimes`): each loss against
a hand computation on a tiny model, reciprocal relations through training
and evaluation, dropout only in training, and negative sampling, the
default, unchanged."""

import pytest
import torch
import torch.nn.functional as F

from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.eval.ranking import TripleFilter, rank_triples, realistic_ranks
from fedgraph.models.kge import resolve_model
from fedgraph.models.losses import resolve_loss
from fedgraph.models.samplers import UniformNegativeSampler, subsampling_weights
from fedgraph.training.kge_trainer import KGETrainer, train_epochs
from fedgraph.training.regimes import (
    KvsAll,
    NegativeSampling,
    OneVsAll,
    ReciprocalScorer,
    StepContext,
    inverse_triples,
    resolve_regime,
    with_inverse_relations,
)

N, R = 6, 2
TRIPLES = torch.tensor([[0, 0, 1], [0, 0, 2], [1, 1, 2], [3, 0, 4], [5, 1, 0]])


def _model(name="distmult", relations=R, dim=4, seed=0):
    torch.manual_seed(seed)
    return resolve_model(name, N, relations, dim, gamma=2.0)


def _ctx(modes=("head-batch", "tail-batch"), labels=None, seed=0):
    return StepContext(
        None, None, modes, torch.Generator().manual_seed(seed), {}, labels
    )


def _one_step(regime, model, batch, **ctx):
    (value, neg, mode), *rest = list(
        regime.steps(model, batch, batch, None, _ctx(**ctx))
    )
    assert rest == [] and neg is None and mode == "tail-batch"
    return value


def _hand_scores(model, anchor, rel, direction):
    e, r = model.entity_embedding.weight, model.relation_embedding.weight
    if direction == "tail":
        return model.interaction(e[anchor][:, None], r[rel][:, None], e[None])
    return model.interaction(e[None], r[rel][:, None], e[anchor][:, None])


def test_one_vs_all_cross_entropy_is_torch_cross_entropy_on_all_scores():
    model = _model()
    h, r, t = TRIPLES.unbind(1)
    want = F.cross_entropy(_hand_scores(model, h, r, "tail"), t) + F.cross_entropy(
        _hand_scores(model, t, r, "head"), h
    )
    got = _one_step(OneVsAll(), model, TRIPLES)
    torch.testing.assert_close(got, want)
    # FedE's modes (tail corruption only): the tail queries only
    got = _one_step(OneVsAll(), model, TRIPLES, modes=("tail-batch",))
    torch.testing.assert_close(
        got, F.cross_entropy(_hand_scores(model, h, r, "tail"), t)
    )


def test_label_smoothing_and_bce_targets_by_hand():
    model = _model()
    h, r, t = TRIPLES.unbind(1)
    scores = _hand_scores(model, h, r, "tail")
    eps = 0.1
    smooth = torch.full((5, N), eps / N)
    smooth[torch.arange(5), t] += 1 - eps  # (1 - eps) y + eps / N
    want_ce = -(smooth * scores.log_softmax(1)).sum(1).mean()
    regime = OneVsAll(label_smoothing=eps)
    got = _one_step(regime, model, TRIPLES, modes=("tail-batch",))
    torch.testing.assert_close(got, want_ce)
    want_bce = -(smooth * F.logsigmoid(scores) + (1 - smooth) * F.logsigmoid(-scores))
    got = _one_step(
        OneVsAll("bce", label_smoothing=eps), model, TRIPLES, modes=("tail-batch",)
    )
    torch.testing.assert_close(got, want_bce.sum(1).mean())


def test_k_vs_all_queries_and_multi_hot_targets_by_hand():
    regime = KvsAll()
    data = regime.prepare(TRIPLES, None, N, R)
    # the distinct (h, r) tail queries, then the distinct (t, r) head queries
    assert data.items.tolist() == [
        [0, 0, 0], [1, 1, 0], [3, 0, 0], [5, 1, 0],
        [0, 1, 1], [1, 0, 1], [2, 0, 1], [2, 1, 1], [4, 0, 1],
    ]  # fmt: skip
    assert data.weights is None
    model = _model()
    batch = data.items[[0, 6]]  # (0, 0, ?) answers {1, 2}; (?, 0, 2) answers {0}
    target_tail = torch.tensor([[0.0, 1, 1, 0, 0, 0]])
    target_head = torch.tensor([[1.0, 0, 0, 0, 0, 0]])
    s_t = _hand_scores(model, torch.tensor([0]), torch.tensor([0]), "tail")
    s_h = _hand_scores(model, torch.tensor([2]), torch.tensor([0]), "head")
    bce = F.binary_cross_entropy_with_logits
    want = (
        bce(s_t, target_tail, reduction="sum") + bce(s_h, target_head, reduction="sum")
    ) / 2
    got = _one_step(regime, model, batch, labels=data.labels)
    torch.testing.assert_close(got, want)
    # cross-entropy against the answers' uniform distribution
    want_ce = -(target_tail / 2 * s_t.log_softmax(1)).sum()
    got = _one_step(KvsAll("ce"), model, batch[:1], labels=data.labels)
    torch.testing.assert_close(got, want_ce)


@pytest.mark.parametrize("name", ["distmult", "complex"])
def test_n3_and_l2_values_follow_the_definitions(name):
    model = _model(name)
    e, r = model.entity_embedding.weight, model.relation_embedding.weight
    h, rel, t = TRIPLES.unbind(1)

    def modulus(x):
        if x.size(1) == 8:  # ComplEx: [re | im] halves of d = 4
            return (x[:, :4] ** 2 + x[:, 4:] ** 2).sqrt()
        return x.abs()

    parts = [modulus(e[h]), modulus(r[rel]), modulus(e[t])]
    n3 = resolve_regime("1vsall", regularizer="n3", regularizer_weight=0.5)
    want = 0.5 * sum((p**3).sum() for p in parts) / 5
    torch.testing.assert_close(n3.regularization(model, TRIPLES), want)
    l2 = resolve_regime("1vsall", regularizer="l2", regularizer_weight=0.5)
    want = 0.5 * sum((p**2).sum() for p in parts) / 5
    torch.testing.assert_close(l2.regularization(model, TRIPLES), want)
    assert OneVsAll().regularization(model, TRIPLES) is None


def test_reciprocal_triples_model_and_head_ranks():
    assert inverse_triples(TRIPLES[:2], R).tolist() == [
        [0, 0, 1], [0, 0, 2], [1, 2, 0], [2, 2, 0],
    ]  # fmt: skip
    model = _model("complex")
    before = model.relation_embedding.weight.detach().clone()
    assert with_inverse_relations(model, R) is model and model.num_relations == 4
    torch.testing.assert_close(model.relation_embedding.weight[:R], before)
    assert with_inverse_relations(model, R) is model  # already has them
    with pytest.raises(ValueError, match="must have 2 relations, or 4"):
        with_inverse_relations(_model(relations=3), R)
    scorer = ReciprocalScorer(model, R)
    assert scorer.num_relations == R and scorer.num_entities == N
    # head queries (?, r, t) are ranked as (t, r + R, ?), filtered by the
    # original triples: (?, 0, 2) has the answers 0 (target) and none else
    # here; (?, 0, 1) has 0; add (4, 0, 2) to the filter to see it masked
    flt = TripleFilter(torch.cat([TRIPLES, torch.tensor([[4, 0, 2]])]), N, R)
    query = torch.tensor([[0, 0, 2]])
    got = rank_triples(scorer, query, filter=flt, directions=("head",))
    scores = model.score_t(torch.tensor([2]), torch.tensor([0 + R])).detach()
    scores[0, 4] = float("-inf")
    assert got.compute()["mrr"] == pytest.approx(
        1.0 / realistic_ranks(scores, torch.tensor([0])).item()
    )


def test_reciprocal_one_vs_all_trains_both_directions_as_tails():
    regime = OneVsAll(reciprocal=True)
    data = regime.prepare(TRIPLES, torch.ones(5), N, R)
    assert data.items.size(0) == 10 and data.weights.tolist() == [1.0] * 10
    model = regime.adapt(_model(), R)
    h, r, t = data.items.unbind(1)
    want = F.cross_entropy(_hand_scores(model, h, r, "tail"), t)
    torch.testing.assert_close(_one_step(regime, model, data.items), want)


def test_dropout_only_in_training_and_reproducible():
    regime = OneVsAll(entity_dropout=0.5, relation_dropout=0.3)
    model = _model()
    h, r = TRIPLES[:, 0], TRIPLES[:, 1]
    gen = torch.Generator().manual_seed(1)
    model.eval()
    plain = model.score_t(h, r)
    torch.testing.assert_close(
        regime.all_entity_scores(model, h, r, "tail", gen), plain
    )
    model.train()
    a = regime.all_entity_scores(model, h, r, "tail", torch.Generator().manual_seed(1))
    b = regime.all_entity_scores(model, h, r, "tail", torch.Generator().manual_seed(1))
    assert not torch.allclose(a, plain) and torch.equal(a, b)


def _masked(rows, p, gen):
    keep = torch.rand(rows.shape, generator=gen) >= p
    return rows * keep / (1.0 - p)


@pytest.mark.parametrize("shared", [True, False])
def test_negative_sampling_dropout_masks_every_scored_row_by_hand(shared):
    # LibKGE's embedders: dropout on the heads, tails and negatives a step
    # scores and on its relations; a negative shared by the batch is one row
    regime = NegativeSampling(entity_dropout=0.4, relation_dropout=0.2)
    model = _model("complex")
    neg = torch.tensor([1, 4, 5]) if shared else torch.tensor([[1, 4], [2, 3]] * 2)
    batch = TRIPLES[:4]
    model.train()
    pos, scores = model.score_batch(
        batch,
        neg,
        "tail-batch",
        regime.row_dropout(model, torch.Generator().manual_seed(7)),
    )
    gen = torch.Generator().manual_seed(7)
    e, r = model.entity_embedding.weight, model.relation_embedding.weight
    ent = _masked(e[torch.cat([batch[:, 0], batch[:, 2], neg.reshape(-1)])], 0.4, gen)
    rel = _masked(r[batch[:, 1]], 0.2, gen)
    head, tail, negs = ent[:4], ent[4:8], ent[8:].view(*neg.shape, -1)
    torch.testing.assert_close(pos, model.interaction(head, rel, tail))
    want = (
        model.interaction(head[:, None], rel[:, None], negs[None])
        if shared
        else model.interaction(head[:, None], rel[:, None], negs)
    )
    torch.testing.assert_close(scores, want)
    model.eval()  # no dropout in evaluation
    plain = model.score_batch(batch, neg, "tail-batch")
    dropped = model.score_batch(
        batch, neg, "tail-batch", regime.row_dropout(model, torch.Generator())
    )
    torch.testing.assert_close(plain, dropped)
    assert NegativeSampling().row_dropout(model, torch.Generator()) is None


def test_bad_settings_name_the_argument():
    with pytest.raises(
        ValueError, match=r"`regime_loss` must be one of \['ce', 'bce'\]"
    ):
        OneVsAll("kl")
    with pytest.raises(
        ValueError, match=r"`label_smoothing` must be in \[0, 1\) \(got 1.0\)"
    ):
        KvsAll(label_smoothing=1.0)
    with pytest.raises(ValueError, match="`regularizer_weight` needs a `regularizer`"):
        OneVsAll(regularizer_weight=0.1)
    with pytest.raises(ValueError, match="Could not resolve 'nope' among choices"):
        resolve_regime("nope")


def _old_train_epochs(model, triples, *, loss, optimizer, sampler, generator, weights):
    r"""The loop of ``train_epochs`` before the regimes, kept verbatim."""
    model.train()
    total, steps = 0.0, 0
    perm = torch.randperm(triples.size(0), generator=generator)
    for start in range(0, triples.size(0), 2):
        idx = perm[start : start + 2]
        batch, w = triples[idx], weights[idx]
        for mode in ("head-batch", "tail-batch"):
            neg = sampler.sample(batch, mode, generator)
            pos_score, neg_score = model.score_batch(batch, neg, mode)
            value = loss(pos_score, neg_score, w)
            optimizer.zero_grad(set_to_none=True)
            value.backward()
            optimizer.step()
            total += float(value.detach().double())
            steps += 1
    return total / steps


@pytest.mark.parametrize("regime", [None, NegativeSampling()])
def test_negative_sampling_is_the_loop_of_before_bit_for_bit(regime):
    results = []
    for run in ("old", "new"):
        model = _model("distmult")
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        kwargs = dict(
            loss=resolve_loss("nssa"),
            optimizer=opt,
            sampler=UniformNegativeSampler(N, 3),
            generator=torch.Generator().manual_seed(3),
            weights=subsampling_weights(TRIPLES),
        )
        if run == "old":
            mean = _old_train_epochs(model, TRIPLES, **kwargs)
        else:
            mean = train_epochs(model, TRIPLES, batch_size=2, regime=regime, **kwargs)
        results.append((mean, model.entity_embedding.weight.detach().clone()))
    assert results[0][0] == results[1][0]
    assert torch.equal(results[0][1], results[1][1])


@pytest.mark.parametrize(
    "regime, kwargs",
    [("1vsall", {"reciprocal": True, "regularizer": "n3", "regularizer_weight": 0.01}),
     ("kvsall", {"label_smoothing": 0.1, "entity_dropout": 0.1}),
     ("negative-sampling", {"reciprocal": True, "entity_dropout": 0.3,
                            "relation_dropout": 0.3})],
)  # fmt: skip
def test_trainer_learns_and_resumes_under_a_regime(regime, kwargs, tmp_path):
    gen = torch.Generator().manual_seed(0)
    trip = torch.unique(
        torch.randint(N, (40, 3), generator=gen) % torch.tensor([N, R, N]), dim=0
    )
    graph = KnowledgeGraph({"train": trip, "valid": trip[:5], "test": trip[5:10]}, N, R)

    def trainer(epochs, path):
        torch.manual_seed(0)
        return KGETrainer(
            resolve_model("complex", N, R, 8), graph, lr=0.05, eval_every=epochs,
            max_epochs=epochs, batch_size=16, regime=regime, regime_kwargs=kwargs,
            checkpoint=path, subsampling=False,
        )  # fmt: skip

    start = trainer(1, None).evaluate("train").compute()["mrr"]
    whole = trainer(20, tmp_path / "a.pt")
    whole.fit()
    assert whole.evaluate("train").compute()["mrr"] > start + 0.2
    assert whole.model.num_relations == (4 if kwargs.get("reciprocal") else 2)
    half = trainer(10, tmp_path / "b.pt")
    half.fit()
    trainer(20, tmp_path / "b.pt").fit()  # resumes at epoch 10
    a, b = (torch.load(tmp_path / f, weights_only=False) for f in ("a.pt", "b.pt"))
    assert a["epoch"] == b["epoch"] == 20
    for key in a["model"]:  # the same dropout masks and batches after resuming
        assert torch.equal(a["model"][key], b["model"][key])


@pytest.mark.slow  # compiles the fused kernels (about 30 s each on a CPU)
@pytest.mark.parametrize("name", ["transe", "rotate"])
def test_the_all_entity_scores_train_with_the_models_kernels(name):
    # 1-vs-all reuses the all-entity scoring of evaluation (TransE and
    # RotatE: the fused distance kernels, compiled unless FEDGRAPH_COMPILE=0):
    # its gradients equal those of the plain broadcast interaction
    grads = []
    for fused in (True, False):
        model = _model(name)
        h, r, t = TRIPLES.unbind(1)
        if fused:
            scores = model.score_t(h, r)
        else:
            scores = _hand_scores(model, h, r, "tail")
        F.cross_entropy(scores, t).backward()
        grads.append(model.entity_embedding.weight.grad.clone())
    torch.testing.assert_close(grads[0], grads[1], rtol=1e-4, atol=1e-5)


def test_mutual_distillation_over_all_entities():
    import copy

    from fedgraph.training.mutual_regime import (
        all_entity_distillation,
        mutual_regime_epochs,
    )

    regime = OneVsAll()
    student, teacher = _model(seed=0), _model(seed=1)
    s_parts = regime.score_queries(student, TRIPLES, None, _ctx())
    t_parts = regime.score_queries(teacher, TRIPLES, None, _ctx())
    want = sum(
        (q.scores.softmax(1) * (q.scores.log_softmax(1) - p.scores.log_softmax(1)))
        .sum(1)
        .mean()
        for p, q in zip(s_parts, t_parts, strict=True)
    )
    torch.testing.assert_close(all_entity_distillation(s_parts, t_parts), want)
    # mu = 0: the local model takes exactly the steps of train_epochs
    local, glob = _model(seed=0), _model(seed=1)
    alone = copy.deepcopy(local)
    data = regime.prepare(TRIPLES, None, N, R)
    mutual_regime_epochs(
        local, glob, data, regime=regime, epochs=2, batch_size=2, mu_distill=0.0,
        local_optimizer=torch.optim.Adam(local.parameters(), lr=0.1),
        global_optimizer=torch.optim.Adam(glob.parameters(), lr=0.1),
        generator=torch.Generator().manual_seed(5),
    )  # fmt: skip
    train_epochs(
        alone, data.items, epochs=2, batch_size=2, regime=regime,
        optimizer=torch.optim.Adam(alone.parameters(), lr=0.1),
        generator=torch.Generator().manual_seed(5),
    )  # fmt: skip
    for key, value in alone.state_dict().items():
        assert torch.equal(local.state_dict()[key], value), key
