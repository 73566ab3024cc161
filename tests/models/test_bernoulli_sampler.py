r"""The Bernoulli negative sampler (TransH): its per-relation head
probabilities against a hand computation, its sides' frequencies on a seeded
run, its filtered redraw on mixed sides, and the one training step that
scores each positive on its own side."""

import pytest
import torch

from fedgraph.models.kge import resolve_model
from fedgraph.models.losses import resolve_loss
from fedgraph.models.samplers import (
    BernoulliNegativeSampler,
    UniformNegativeSampler,
    resolve_sampler,
    samplers,
    triple_keys,
)
from fedgraph.models.samplers.bernoulli import head_probabilities
from fedgraph.training.kge_trainer import train_epochs
from fedgraph.training.regimes import NegativeSampling, StepContext

pytestmark = pytest.mark.usefixtures("one_thread")

N, R = 8, 3
# relation 0, one-to-many: heads {0, 4}, tails {1, 2, 3, 5}, 4 triples
#   tph = 4/2 = 2, hpt = 4/4 = 1 -> p = 2 / (2 + 1) = 2/3
# relation 1, many-to-one: heads {1, 2, 3}, tails {0}, 3 triples
#   tph = 3/3 = 1, hpt = 3/1 = 3 -> p = 1 / (1 + 3) = 1/4
# relation 2: no triple -> 1/2
TRIPLES = torch.tensor([
    [0, 0, 1], [0, 0, 2], [0, 0, 3], [4, 0, 5], [0, 0, 1],  # a repeat
    [1, 1, 0], [2, 1, 0], [3, 1, 0],
])  # fmt: skip


def test_head_probabilities_are_the_hand_computed_tph_over_tph_plus_hpt():
    p = head_probabilities(TRIPLES, R)
    assert p.dtype == torch.float32
    assert p.tolist() == pytest.approx([2 / 3, 1 / 4, 1 / 2], abs=1e-7)
    s = BernoulliNegativeSampler(N, 4, triples=TRIPLES, num_relations=R)
    assert torch.equal(s.head_probability, p)
    # without num_relations: the triples' max relation id + 1
    assert BernoulliNegativeSampler(N, 4, triples=TRIPLES).num_relations == 2


def test_seeded_sides_follow_the_probabilities():
    s = BernoulliNegativeSampler(N, 4, triples=TRIPLES, num_relations=R)
    n = 4000
    positive = torch.cat([
        TRIPLES[0].expand(n, 3), TRIPLES[5].expand(n, 3),
        torch.tensor([[0, 2, 1]]).expand(n, 3),
    ])  # fmt: skip
    heads = s.sides(positive, torch.Generator().manual_seed(0))
    again = s.sides(positive, torch.Generator().manual_seed(0))
    assert heads.dtype == torch.bool and heads.shape == (3 * n,)
    assert torch.equal(heads, again)
    freq = heads.view(3, n).float().mean(1)
    # 4 standard deviations of a binomial mean over 4000 draws: < 0.03
    assert freq.tolist() == pytest.approx([2 / 3, 1 / 4, 1 / 2], abs=0.03)
    neg = s.sample(positive, heads, torch.Generator().manual_seed(1))
    assert neg.shape == (3 * n, 4) and 0 <= int(neg.min()) and int(neg.max()) < N


def test_filtered_redraw_checks_each_positive_on_its_own_side():
    # (0, 0, t) is true for t in 1..7 and (h, 0, 1) for h in 0..6: a tail
    # corruption of (0, 0, 1) can only give 0, a head corruption only 7
    known = torch.tensor(
        [[0, 0, t] for t in range(1, 8)] + [[h, 0, 1] for h in range(1, 7)]
    )
    s = BernoulliNegativeSampler(N, 30, triples=known, filtered=True, max_redraws=400)
    positive = torch.tensor([[0, 0, 1], [0, 0, 1]])
    heads = torch.tensor([True, False])
    for sync_free in (False, True):
        gen = torch.Generator().manual_seed(0)
        neg = s.sample(positive, heads, gen, sync_free=sync_free)
        assert neg[0].tolist() == [7] * 30 and neg[1].tolist() == [0] * 30
        trip = torch.stack([
            torch.where(heads[:, None], neg, 0), torch.zeros_like(neg),
            torch.where(heads[:, None], 1, neg),
        ], -1).view(-1, 3)  # fmt: skip
        assert not torch.isin(triple_keys(trip, N, 1), triple_keys(known, N, 1)).any()


def test_one_step_scores_each_positive_on_its_own_side():
    torch.manual_seed(0)
    model = resolve_model("transe", N, R, 4, gamma=2.0)
    s = BernoulliNegativeSampler(N, 5, triples=TRIPLES, num_relations=R)
    loss = resolve_loss("nssa")
    batch = TRIPLES[[0, 3, 5, 6]]
    ctx = StepContext(loss, s, ("head-batch", "tail-batch"), torch.Generator())
    ctx.generator.manual_seed(7)
    (value, neg, mode), *rest = list(
        NegativeSampling().steps(model, batch, batch, None, ctx)
    )
    assert rest == [] and mode == "sided"
    gen = torch.Generator().manual_seed(7)
    heads = s.sides(batch, gen)
    want_neg = s.sample(batch, heads, gen)
    assert torch.equal(neg, want_neg)
    e, r = model.entity_embedding.weight, model.relation_embedding.weight
    h, rel, t = batch.unbind(1)
    head_side = model.interaction(e[neg], r[rel][:, None], e[t][:, None])
    tail_side = model.interaction(e[h][:, None], r[rel][:, None], e[neg])
    pos = model.interaction(e[h], r[rel], e[t])
    want = loss(pos, torch.where(heads[:, None], head_side, tail_side))
    assert torch.allclose(value, want, atol=1e-6)


def test_training_takes_one_step_per_batch_with_the_bernoulli_sampler():
    torch.manual_seed(0)
    model = resolve_model("distmult", N, R, 4, gamma=2.0)
    steps = []

    def count(model, batch, neg, mode):
        steps.append(mode)
        return torch.zeros(())

    kwargs = dict(
        batch_size=4,
        loss=resolve_loss("sigmoid-ns"),
        optimizer=torch.optim.Adam(model.parameters(), lr=0.01),
        generator=torch.Generator().manual_seed(0),
    )
    uniform = UniformNegativeSampler(N, 3)
    train_epochs(model, TRIPLES, sampler=uniform, extra_loss=count, **kwargs)
    assert steps == ["head-batch", "tail-batch"] * 2  # 8 triples, 2 batches
    bernoulli = BernoulliNegativeSampler(N, 3, triples=TRIPLES)
    mean = train_epochs(model, TRIPLES, sampler=bernoulli, **kwargs)
    assert mean > 0
    with pytest.raises(ValueError) as exc:
        train_epochs(model, TRIPLES, sampler=bernoulli, extra_loss=count, **kwargs)
    assert str(exc.value) == (
        "loss terms that rescore the negatives (FedLU's distillation, FedEC's "
        "contrast …) need a sampler that corrupts one side per step: use the "
        "uniform sampler"
    )


def test_bernoulli_errors_name_the_argument():
    with pytest.raises(ValueError) as exc:
        BernoulliNegativeSampler(N, 4)
    assert str(exc.value) == (
        "BernoulliNegativeSampler needs the training `triples` its head "
        "probabilities are computed from"
    )
    s = BernoulliNegativeSampler(N, 4, triples=TRIPLES)
    with pytest.raises(ValueError) as exc:
        s.sample(TRIPLES, "tail-batch")
    assert str(exc.value) == (
        "BernoulliNegativeSampler corrupts the side `sides` draws for each "
        "positive, not one side for the batch (got 'tail-batch'): this "
        "training path needs the uniform sampler"
    )
    with pytest.raises(ValueError) as exc:
        head_probabilities(TRIPLES, 1)
    assert str(exc.value) == "`triples` hold relation id 1 but `num_relations` is 1"
    ctx = StepContext(resolve_loss("nssa"), s, (), torch.Generator())
    model = resolve_model("transe", N, 2 * R, 4, gamma=2.0)
    with pytest.raises(ValueError) as exc:
        list(
            NegativeSampling(reciprocal=True).steps(model, TRIPLES, TRIPLES, None, ctx)
        )
    assert str(exc.value) == (
        "BernoulliNegativeSampler draws a side per positive; with reciprocal "
        "relations only tails are corrupted (set `reciprocal=False` or use the "
        "uniform sampler)"
    )


def test_the_registry_resolves_and_checks_the_samplers():
    assert samplers.names() == ["bernoulli", "uniform"]
    s = resolve_sampler("Bernoulli", N, 4, triples=TRIPLES, num_relations=R)
    assert isinstance(s, BernoulliNegativeSampler)
    assert repr(s) == (
        "BernoulliNegativeSampler(num_entities=8, num_negatives=4, shared=False, "
        "filtered=False)"
    )
    assert samplers.hyperparameters("uniform") == {
        "filtered": False,
        "max_redraws": 10,
    }
    assert samplers.check_kwargs("bernoulli", {"max_redraws": 3.0}) == {
        "max_redraws": 3
    }
    with pytest.raises(ValueError) as exc:
        samplers.check_kwargs("bernoulli", {"triples": TRIPLES})
    assert str(exc.value) == (
        "`sampler_kwargs` key 'triples' is set by the client's training triples"
    )
    with pytest.raises(ValueError) as exc:
        samplers.check_kwargs("uniform", {"alpha": 1})
    assert str(exc.value) == (
        "`sampler_kwargs` key 'alpha' is not an argument of "
        "UniformNegativeSampler (its arguments: filtered, max_redraws)"
    )
