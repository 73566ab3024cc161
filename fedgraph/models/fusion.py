r"""FedE's model fusion (FedE §2.2.3): a per-client linear combination of the
scores of a single-KG model and of the federated model (the model; its
fitting is :mod:`fedgraph.training.fusion`)."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from fedgraph.models.kge import TAIL_BATCH, KGEModel


class ScoreFusion(nn.Module):
    r"""Fusion of two KGE models over the same (local) entities and relations
    (FedE Eq. 5–6):

    .. math::
        s_{(h,r,t)} = \mathbf{W} [f^s_r(h, t); f^f_r(h, t)] + b

    trained with the margin ranking loss
    :math:`\max(0, \beta - s_{(h,r,t)} + s_{(h,r,t')})` (:func:`~fedgraph.training.fusion.fit_fusion`).
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


__all__ = ["ScoreFusion"]
