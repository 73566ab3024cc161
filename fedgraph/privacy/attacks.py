r"""Inference attacks by an honest-but-curious server, run as an audit on
recorded uploads (:mod:`fedgraph.privacy.record`).

**Triple inference** (the server-initiated attack of Hu et al., "Quantifying
and Defending against Privacy Threats on Federated Knowledge Graph
Embedding", WWW 2023, and the KG reconstruction attack on FedE of Zhang et
al., FedR, Findings of EMNLP 2022). *Attacker's knowledge*: the entity rows
the server holds for the victim (its upload; under secure aggregation only
the aggregate table, for every entity some client holds), the score function
(the run's KGE model) and a share ``known_fraction`` of the victim's
training triples (as a colluding party would give it; under private
alignment in the server's token space). The attacker fits the relation
embeddings on the known triples with the entity rows frozen (the sigmoid
loss against its own corruptions), picks the score threshold that best
separates the known triples from its corruptions, and declares a candidate
triple present when it scores above the threshold. *Scored* (Hu et al.'s
protocol): the victim's other training triples against as many negatives (a
head or tail replaced by an entity of the candidate set, never a triple of
the victim's train/valid/test), by precision, recall, F1, accuracy and AUC;
a random guess scores 0.5 on every one of them.

**Entity membership**: the server's score that the victim holds each entity
of the federation's vocabulary: the ids it uploads (a certainty) when they
are in the clear; the presence counts over the clients, divided by their
number, under secure aggregation; no information (the prior) under private
alignment, where it holds tokens it cannot map to entities without the
federation secret. Scored by AUC, and precision/recall/F1 of the decision
``score > 0.5``, against the victim's true entities; the random-guess
baseline predicts "member" with the victim's prior share :math:`n_c/N`.

The attacks' arithmetic is permutation-equivariant in the entity index, so
rows keyed by tokens are evaluated after mapping the tokens back to global
ids with the secret (an auditor's step, not the attacker's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

ATTACKS = ("triple-inference", "membership")


@dataclass
class ServerView:
    r"""What the server holds about one client's entities after a round.

    Attributes:
        entity_ids (Tensor or None): global ids of the rows (mapped from
            tokens by the auditor where needed), or :obj:`None`.
        entity_rows (Tensor or None): the rows, ``[n, d]``.
        source (str): ``"upload"`` (the client's own rows), ``"aggregate"``
            (the aggregated table: secure aggregation) or ``"none"``.
        membership (Tensor or None): the server's ``[N]`` membership score
            per global id, or :obj:`None` for no information.
    """

    entity_ids: Tensor | None
    entity_rows: Tensor | None
    source: str
    membership: Tensor | None


def _keys(triples: Tensor, num_entities: int, num_relations: int) -> Tensor:
    t = triples.long()
    return (t[:, 0] * num_relations + t[:, 1]) * num_entities + t[:, 2]


def binary_metrics(
    pred: Tensor, truth: Tensor, scores: Tensor | None = None
) -> dict[str, float]:
    r"""Precision, recall, F1, accuracy (and AUC from ``scores``) of boolean
    predictions against boolean ``truth``."""
    pred, truth = pred.bool(), truth.bool()
    tp = int((pred & truth).sum())
    fp = int((pred & ~truth).sum())
    fn = int((~pred & truth).sum())
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    out = {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "accuracy": float((pred == truth).double().mean()) if truth.numel() else 0.0,
    }
    if scores is not None:
        out["auc"] = auc(scores, truth)
    return out


def auc(scores: Tensor, truth: Tensor) -> float:
    r"""Area under the ROC curve (ties count one half; NaN when one class is
    empty)."""
    truth = truth.bool()
    pos, neg = int(truth.sum()), int((~truth).sum())
    if pos == 0 or neg == 0:
        return float("nan")
    from scipy.stats import rankdata

    ranks = torch.from_numpy(rankdata(scores.double().numpy()))
    return float((ranks[truth].sum() - pos * (pos + 1) / 2) / (pos * neg))


def best_threshold(scores: Tensor, truth: Tensor) -> float:
    r"""The cut that classifies ``scores >= cut`` as positive with the best
    accuracy against ``truth``, halfway between two consecutive scores (one
    sort and two cumulative sums)."""
    order = torch.argsort(scores, descending=True)
    s, y = scores[order].double(), truth[order].long()
    n, n_neg = y.numel(), int((y == 0).sum())
    tp = torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(y, 0)])
    k = torch.arange(n + 1)  # the top k are called positive
    correct = tp + (n_neg - (k - tp))
    # a cut can only fall between distinct scores
    valid = torch.ones(n + 1, dtype=torch.bool)
    valid[1:n] = s[:-1] > s[1:]
    best = int(torch.argmax(torch.where(valid, correct, -1)))
    if best == 0:
        return float(s[0]) + 1.0
    if best == n:
        return float(s[-1]) - 1.0
    return float((s[best - 1] + s[best]) / 2)


def _corrupt(
    triples: Tensor,
    candidates: Tensor,
    generator: torch.Generator,
    exclude: Tensor | None,
    num_entities: int,
    num_relations: int,
    tries: int = 20,
) -> Tensor:
    r"""One corruption per triple (head or tail from ``candidates``), avoiding
    the keys in ``exclude``; triples left without one after ``tries`` are
    dropped."""
    out = triples.clone()
    todo = torch.ones(len(triples), dtype=torch.bool)
    for _ in range(tries):
        idx = todo.nonzero().squeeze(1)
        if idx.numel() == 0:
            break
        side = torch.randint(0, 2, (idx.numel(),), generator=generator) * 2
        ent = candidates[
            torch.randint(0, candidates.numel(), (idx.numel(),), generator=generator)
        ]
        cand = triples[idx].clone()
        cand[torch.arange(idx.numel()), side] = ent
        ok = torch.ones(idx.numel(), dtype=torch.bool)
        if exclude is not None:
            ok = ~torch.isin(_keys(cand, num_entities, num_relations), exclude)
        out[idx[ok]] = cand[ok]
        todo[idx[ok]] = False
    return out[~todo]


def _guess(
    out: dict[str, Any], targets: Tensor, gen: torch.Generator
) -> dict[str, Any]:
    r"""The attack without entity rows: a coin flip per target and negative."""
    coin = torch.rand(2 * targets.size(0), generator=gen)
    truth = torch.arange(2 * targets.size(0)) < targets.size(0)
    out.update(binary_metrics(coin > 0.5, truth, coin))
    out.update(target_triples=int(targets.size(0)), negatives=int(targets.size(0)))
    out["note"] = "no entity rows reach the server: the attacker guesses"
    return out


def _to_local(t: Tensor, local: Tensor) -> Tensor:
    r"""``t`` with its entities renumbered by ``local`` (global → row)."""
    t = t.clone()
    t[:, 0], t[:, 2] = local[t[:, 0]], local[t[:, 2]]
    return t


def _seen(t: Tensor, local: Tensor) -> Tensor:
    r"""Which triples of ``t`` have both entities among the rows."""
    return (local[t[:, 0]] >= 0) & (local[t[:, 2]] >= 0)


def _fit_relations(
    rows: Tensor,
    n: int,
    known_l: Tensor,
    gen: torch.Generator,
    common: dict[str, Any],
) -> Any:
    r"""A ``model`` over the uploaded entity ``rows`` (frozen) whose relation
    embeddings are fitted to the known triples (``known_l``, row ids) against
    random corruptions (``n``: the number of rows; ``common``:
    :func:`triple_inference`'s settings)."""
    from fedgraph.models.kge import models

    model, num_relations, gamma = (
        common[k] for k in ("model", "num_relations", "gamma")
    )
    seed, steps, lr = common["seed"], common["steps"], common["lr"]
    num_negatives = common["num_negatives"]

    with torch.random.fork_rng(devices=[]):  # the caller's global RNG untouched
        torch.manual_seed(int(seed))
        cls = models.resolve_class(model)  # its entity width per dimension
        kge = cls(n, num_relations, rows.size(1) // cls.entity_factor, gamma=gamma)
    with torch.no_grad():
        kge.entity_embedding.weight.copy_(rows)
    kge.entity_embedding.weight.requires_grad_(False)
    opt = torch.optim.Adam(kge.relation_embedding.parameters(), lr=lr)
    for _ in range(steps):
        neg = known_l.repeat(num_negatives, 1)
        side = torch.randint(0, 2, (neg.size(0),), generator=gen) * 2
        neg[torch.arange(neg.size(0)), side] = torch.randint(
            0, n, (neg.size(0),), generator=gen
        )
        pos_s = kge.score_hrt(known_l[:, 0], known_l[:, 1], known_l[:, 2])
        neg_s = kge.score_hrt(neg[:, 0], neg[:, 1], neg[:, 2])
        loss = -F.logsigmoid(pos_s).mean() - F.logsigmoid(-neg_s).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return kge


def _score_targets(
    kge: Any,
    known_l: Tensor,
    targets: Tensor,
    ids: Tensor,
    local: Tensor,
    gen: torch.Generator,
    exclude: Any,
    num_entities: int,
    num_relations: int,
) -> tuple[float, Tensor, Tensor, Tensor, Tensor]:
    r"""The decision threshold (best accuracy on the known triples against
    the attacker's corruptions), and the scores of the unknown training
    triples the rows cover and of as many true negatives, with the truth."""
    cand_local = torch.arange(ids.numel())
    with torch.no_grad():
        # threshold: best accuracy on the known triples vs the attacker's corruptions
        own_neg = _corrupt(known_l, cand_local, gen, None, ids.numel(), num_relations)
        s_pos = kge.score_hrt(known_l[:, 0], known_l[:, 1], known_l[:, 2])
        s_neg = kge.score_hrt(own_neg[:, 0], own_neg[:, 1], own_neg[:, 2])
        s = torch.cat([s_pos, s_neg])
        y = torch.cat([torch.ones_like(s_pos), torch.zeros_like(s_neg)]).bool()
        threshold = best_threshold(s, y)
        # evaluation: unknown training triples vs as many true negatives
        targets = targets[_seen(targets, local)]
        negatives = _corrupt(targets, ids, gen, exclude, num_entities, num_relations)
        evald = torch.cat([targets, negatives])
        truth = torch.arange(evald.size(0)) < targets.size(0)
        el = _to_local(evald, local)
        scores = (
            torch.cat(
                [
                    kge.score_hrt(
                        el[i : i + 65536, 0], el[i : i + 65536, 1], el[i : i + 65536, 2]
                    )
                    for i in range(0, el.size(0), 65536)
                ]
            )
            if el.size(0)
            else torch.empty(0)
        )
    return threshold, targets, negatives, scores, truth


def _prepare(
    view: ServerView,
    train_triples: Tensor,
    all_triples: Tensor,
    common: dict[str, Any],
) -> tuple[torch.Generator, Tensor, Tensor, Any, dict[str, Any]]:
    r"""The attack's generator, the known share of the training triples and
    the rest (the targets), the triples never used as negatives, and the
    report's header (``common``: :func:`triple_inference`'s settings)."""
    known_fraction, seed = common["known_fraction"], common["seed"]
    num_entities, num_relations = common["num_entities"], common["num_relations"]
    if not 0 < known_fraction < 1:
        raise ValueError(f"`known_fraction` must lie in (0, 1) (got {known_fraction})")
    baseline = {"precision": 0.5, "recall": 0.5, "f1": 0.5, "accuracy": 0.5, "auc": 0.5}
    gen = torch.Generator().manual_seed(int(seed))
    train = train_triples.long()
    perm = torch.randperm(train.size(0), generator=gen)
    n_known = max(1, int(round(known_fraction * train.size(0))))
    known, targets = train[perm[:n_known]], train[perm[n_known:]]
    exclude = _keys(all_triples, num_entities, num_relations)
    out: dict[str, Any] = {
        "source": view.source,
        "known_triples": int(known.size(0)),
        "baseline": baseline,
    }
    return gen, known, targets, exclude, out


def _knowledge_only(
    ids: Tensor,
    rows: Tensor,
    train_triples: Tensor,
    all_triples: Tensor,
    common: dict[str, Any],
) -> dict[str, float]:
    r"""The attack with the rows replaced by i.i.d. Gaussian rows of the same
    scale: what the attacker's knowledge alone achieves."""
    g = torch.Generator().manual_seed(int(common["seed"]) + 1)
    noise = torch.randn(rows.shape, generator=g) * rows.std()
    blind = triple_inference(
        ServerView(ids, noise, "none", None),
        train_triples,
        all_triples,
        **common,
        knowledge_baseline=False,
    )
    return {k: blind[k] for k in ("precision", "recall", "f1", "accuracy", "auc")}


def triple_inference(
    view: ServerView,
    train_triples: Tensor,
    all_triples: Tensor,
    *,
    num_entities: int,
    num_relations: int,
    model: str = "transe",
    gamma: float = 9.0,
    known_fraction: float = 0.1,
    steps: int = 300,
    lr: float = 0.05,
    num_negatives: int = 16,
    seed: int = 0,
    knowledge_baseline: bool = True,
) -> dict[str, Any]:
    r"""The triple-inference attack on one victim (see the module).

    Args:
        view (ServerView): what the server holds about the victim.
        train_triples (Tensor): the victim's ``[m, 3]`` training triples in
            global ids (the ground truth).
        all_triples (Tensor): every triple of the victim (train, valid,
            test): never used as a negative.
        num_entities (int), num_relations (int): vocabulary sizes.
        model (str): the KGE model (score function). (default: ``"transe"``)
        gamma (float): its margin.
        known_fraction (float): share of the training triples the attacker
            knows. (default: 0.1)
        steps (int), lr (float), num_negatives (int): the relation fit.
        seed (int): seeds the known share, corruptions and fit.
        knowledge_baseline (bool): also run the attack with the rows
            replaced by i.i.d. Gaussian rows of the same scale (the
            attacker's knowledge without the uploads: e.g. entity degrees
            learnt from the known triples): ``knowledge_only``.

    Returns:
        dict: ``precision``, ``recall``, ``f1``, ``accuracy``, ``auc``, the
        counts, ``baseline`` (a random guess) and ``knowledge_only``.
    """

    common = dict(
        num_entities=num_entities,
        num_relations=num_relations,
        model=model,
        gamma=gamma,
        known_fraction=known_fraction,
        steps=steps,
        lr=lr,
        num_negatives=num_negatives,
        seed=seed,
    )
    gen, known, targets, exclude, out = _prepare(
        view, train_triples, all_triples, common
    )
    if view.entity_rows is None or view.entity_ids is None:
        return _guess(out, targets, gen)  # nothing to score with
    ids = view.entity_ids.long()
    local = torch.full((num_entities,), -1, dtype=torch.long)
    local[ids] = torch.arange(ids.numel())
    rows = view.entity_rows.detach().float()
    known_l = _to_local(known[_seen(known, local)], local)
    kge = _fit_relations(rows, ids.numel(), known_l, gen, common)
    threshold, targets, negatives, scores, truth = _score_targets(
        kge, known_l, targets, ids, local, gen, exclude, num_entities, num_relations
    )
    out.update(binary_metrics(scores >= threshold, truth, scores))
    if knowledge_baseline:
        out["knowledge_only"] = _knowledge_only(
            ids, rows, train_triples, all_triples, common
        )
    out.update(
        threshold=threshold,
        target_triples=int(targets.size(0)),
        negatives=int(negatives.size(0)),
    )
    return out


def membership_inference(
    view: ServerView,
    true_entities: Tensor,
    num_entities: int,
    *,
    unit: str = "entities",
) -> dict[str, Any]:
    r"""The entity-membership attack on one victim (see the module); with
    ``unit="relations"``, the same attack on the relations a
    relation-sharing client (FedR) holds, ``true_entities`` and
    ``num_entities`` then being its relation ids and the vocabulary's size."""
    truth = torch.zeros(num_entities, dtype=torch.bool)
    truth[true_entities.long()] = True
    prior = float(truth.double().mean())
    scores = view.membership
    out: dict[str, Any] = {
        unit: int(truth.sum()),
        "vocabulary": num_entities,
        "baseline": {
            "precision": prior,
            "recall": prior,
            "f1": prior,
            "accuracy": prior**2 + (1 - prior) ** 2,
            "auc": 0.5,
        },
    }
    if scores is None:
        scores = torch.full((num_entities,), prior, dtype=torch.float64)
        out["note"] = f"the server cannot map what it holds to {unit}"
    out.update(binary_metrics(scores > 0.5, truth, scores.double()))
    return out


__all__ = [
    "ATTACKS",
    "ServerView",
    "triple_inference",
    "membership_inference",
    "binary_metrics",
    "auc",
]
