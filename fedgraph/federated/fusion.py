r"""FedE's model fusion (FedE §2.2.3): a per-client linear combination of the
scores of a single-KG model and of the federated model."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

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
    mean loss of the last epoch."""
    generator = generator or torch.Generator().manual_seed(0)
    sampler = NegativeSampler(fusion.num_entities, num_negatives)
    loss_fn = MarginRankingLoss(margin)
    opt = torch.optim.Adam(fusion.linear.parameters(), lr=lr)
    last = 0.0
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


__all__ = ["ScoreFusion", "fit_fusion"]
