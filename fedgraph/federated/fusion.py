r"""FedE's model fusion (FedE §2.2.3): a per-client linear combination of the
scores of a single-KG model and of the federated model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import Tensor, nn

from fedgraph.eval.metrics import LinkPredState
from fedgraph.models.kge import MODES, TAIL_BATCH, KGEModel
from fedgraph.models.losses import MarginRankingLoss
from fedgraph.models.sampling import NegativeSampler


class ScoreFusion(nn.Module):
    r"""Fusion of two KGE models over the same (local) entities and relations
    (FedE Eq. 5–6):

    .. math::
        s_{(h,r,t)} = \mathbf{W} [f^s_r(h, t); f^f_r(h, t)] + b

    trained with the margin ranking loss
    :math:`\max(0, \beta - s_{(h,r,t)} + s_{(h,r,t')})` (:func:`fit_fusion`).
    The two models are frozen. It exposes the scoring API that
    :func:`~fedgraph.eval.rank_triples` uses (``score_t``, ``score_h``,
    ``score_hrt``), so a fused client is evaluated like any model.

    Args:
        single (KGEModel): trained without federation (FedE's "Single").
        federated (KGEModel): trained with FedE.
    """

    def __init__(self, single: KGEModel, federated: KGEModel) -> None:
        super().__init__()
        if (single.num_entities, single.num_relations) != (
            federated.num_entities,
            federated.num_relations,
        ):
            raise ValueError(
                "`single` and `federated` must share entities and relations (got "
                f"{single.num_entities}/{single.num_relations} and "
                f"{federated.num_entities}/{federated.num_relations})"
            )
        self.single, self.federated = single, federated
        for p in list(single.parameters()) + list(federated.parameters()):
            p.requires_grad_(False)
        self.linear = nn.Linear(2, 1)
        with torch.no_grad():  # start as the plain sum of the two scores
            self.linear.weight.fill_(1.0)
            self.linear.bias.zero_()
        self.num_entities = single.num_entities
        self.num_relations = single.num_relations

    def _fuse(self, a: Tensor, b: Tensor) -> Tensor:
        return self.linear(torch.stack([a, b], dim=-1)).squeeze(-1)

    def score_hrt(self, head: Tensor, rel: Tensor, tail: Tensor) -> Tensor:
        return self._fuse(
            self.single.score_hrt(head, rel, tail),
            self.federated.score_hrt(head, rel, tail),
        )

    def score_t(
        self, head: Tensor, rel: Tensor, candidates: Tensor | None = None
    ) -> Tensor:
        return self._fuse(
            self.single.score_t(head, rel, candidates),
            self.federated.score_t(head, rel, candidates),
        )

    def score_h(
        self, rel: Tensor, tail: Tensor, candidates: Tensor | None = None
    ) -> Tensor:
        return self._fuse(
            self.single.score_h(rel, tail, candidates),
            self.federated.score_h(rel, tail, candidates),
        )

    def score_negatives(
        self, positive: Tensor, negative: Tensor, mode: str = TAIL_BATCH
    ) -> Tensor:
        return self._fuse(
            self.single.score_negatives(positive, negative, mode),
            self.federated.score_negatives(positive, negative, mode),
        )

    def __repr__(self) -> str:
        w = self.linear.weight.detach().view(-1).tolist()
        return f"ScoreFusion(w_single={w[0]:.3f}, w_fed={w[1]:.3f})"


def fit_fusion(
    fusion: ScoreFusion,
    triples: Tensor,
    *,
    epochs: int = 1,
    batch_size: int = 1024,
    num_negatives: int = 16,
    margin: float = 10.0,
    lr: float = 1e-3,
    modes: Sequence[str] = MODES,
    generator: torch.Generator | None = None,
) -> float:
    r"""Trains the fusion layer on ``triples`` with FedE's margin ranking loss
    (:math:`\beta` = ``margin``, FedE: 10) and uniform negatives; returns the
    mean loss of the last epoch (``epochs=0``: no training, ``nan``)."""
    generator = generator or torch.Generator().manual_seed(0)
    sampler = NegativeSampler(fusion.num_entities, num_negatives)
    loss_fn = MarginRankingLoss(margin)
    opt = torch.optim.Adam(fusion.linear.parameters(), lr=lr)
    last = float("nan")
    for _ in range(int(epochs)):
        total, steps = 0.0, 0
        perm = torch.randperm(triples.size(0), generator=generator)
        for start in range(0, triples.size(0), batch_size):
            batch = triples[perm[start : start + batch_size]]
            for mode in modes:
                neg = sampler.sample(batch, mode, generator)
                pos = fusion.score_hrt(batch[:, 0], batch[:, 1], batch[:, 2])
                value = loss_fn(pos, fusion.score_negatives(batch, neg, mode))
                opt.zero_grad(set_to_none=True)
                value.backward()
                opt.step()
                total, steps = total + float(value.detach()), steps + 1
        last = total / max(1, steps)
    return last


#: the three models :func:`fuse_and_evaluate` compares, in its output's order.
FUSION_MODELS = ("fused", "single", "federated")


def fuse_and_evaluate(
    clients: Mapping[int, Any],
    single: Mapping[int, KGEModel],
    federated: Mapping[int, KGEModel],
    *,
    fit_split: str = "valid",
    split: str = "test",
    seed: int = 0,
    **fit_kwargs: Any,
) -> dict[str, Any]:
    r"""FedE's model fusion as a final step: on every client, fits a
    :class:`ScoreFusion` of its single-KG model and its federated model on
    the ``fit_split`` triples (FedE's code fits it on the validation
    triples), then ranks ``split`` with each of the three models under the
    client's protocol (:meth:`KGEClient.rank
    <fedgraph.federated.kge_client.KGEClient.rank>`: its own entities as
    candidates, its own train + valid + test as filter).

    The models are frozen in place (pass copies, e.g.
    :meth:`KGEClient.evaluation_model`).

    Args:
        clients (Mapping[int, KGEClient]): the clients (their shards,
            filters and ranked directions).
        single (Mapping[int, KGEModel]): each client's model trained alone.
        federated (Mapping[int, KGEModel]): each client's federated model.
        fit_split (str, optional): triples the fusion layer is fitted on.
            (default: ``"valid"``)
        split (str, optional): triples ranked. (default: ``"test"``)
        seed (int, optional): seed of the negatives (client ``c`` draws from
            ``seed * 7919 + c``). (default: :obj:`0`)
        **fit_kwargs: :func:`fit_fusion` options (``epochs``, ``lr``, …).

    Returns:
        ``{"weighted", "weighted_single", "weighted_federated", "clients"}``:
        the merged (query-weighted) metrics of the fused, single and
        federated models, and per client ``{"client", "n_test", <fused
        metrics>, "single", "federated", "fusion": {"w_single",
        "w_federated", "bias", "fit_loss"}}``.
    """
    missing = sorted(set(clients) - set(single)) + sorted(set(clients) - set(federated))
    if missing:
        raise ValueError(f"No single or federated model for clients {missing}")
    states: dict[str, list[LinkPredState]] = {m: [] for m in FUSION_MODELS}
    rows = []
    for c in sorted(clients):
        client = clients[c]
        fusion = ScoreFusion(single[c], federated[c])
        loss = fit_fusion(
            fusion,
            client.shard.graph.triples(fit_split),
            generator=torch.Generator().manual_seed(int(seed) * 7919 + int(c)),
            **fit_kwargs,
        )
        triples = client.shard.graph.triples(split)
        row: dict[str, Any] = {"client": int(c), "n_test": int(triples.size(0))}
        models = {"fused": fusion, "single": single[c], "federated": federated[c]}
        for name, model in models.items():
            state = client.rank(triples, model)
            states[name].append(state)
            metrics = state.compute()
            if name == "fused":
                row.update(metrics)
            else:
                row[name] = metrics
        w_single, w_fed = fusion.linear.weight.detach().view(-1).tolist()
        bias = float(fusion.linear.bias.detach())
        row["fusion"] = {
            "w_single": w_single,
            "w_federated": w_fed,
            "bias": bias,
            "fit_loss": None if loss != loss else loss,  # nan: not fitted
        }
        rows.append(row)
    merged = {m: LinkPredState.merged(states[m]).compute() for m in FUSION_MODELS}
    return {
        "weighted": merged["fused"],
        "weighted_single": merged["single"],
        "weighted_federated": merged["federated"],
        "clients": rows,
    }


__all__ = ["ScoreFusion", "fit_fusion", "fuse_and_evaluate", "FUSION_MODELS"]
