r"""TransE (Bordes et al., NeurIPS 2013)."""

from __future__ import annotations

import torch
from torch import Tensor

from fedgraph.models.kge.base import TAIL_BATCH, NormBasedModel
from fedgraph.models.kge.l1 import (
    compile_enabled,
    l1_distance,
    l1_distance_grouped,
    l1_gathered,
)


class TransE(NormBasedModel):
    r"""TransE from `"Translating Embeddings for Modeling Multi-Relational Data"
    <https://proceedings.neurips.cc/paper/2013/file/1cecc7a77928ca8133fa24680a88d2f9-Paper.pdf>`_,
    with the margin of the RotatE/FedE/FedLU code:

    .. math::
        f(h, r, t) = \gamma - \| \mathbf{e}_h + \mathbf{r}_r - \mathbf{e}_t \|_p

    FedLU's code uses :math:`p = 1` and forces :math:`\gamma = 9`; FedE uses
    :math:`\gamma = 10`. PyG's :class:`torch_geometric.nn.kge.TransE` is not
    reused because it L2-normalises entities in ``forward`` and has no
    :math:`\gamma`.

    Against many candidates, the distance is computed without materialising
    ``[B, C, d]``: a compiled L1 kernel (:func:`~fedgraph.models.kge.l1.l1_distance`,
    falling back to :func:`torch.cdist`) for ``p=1``, or the identity
    :math:`\|q - t\|^2 = \|q\|^2 + \|t\|^2 - 2 q^\top t` (``p=2``).

    Its arguments are those of
    :class:`~fedgraph.models.kge.base.NormBasedModel`.
    """

    def interaction(self, head: Tensor, rel: Tensor, tail: Tensor) -> Tensor:
        return self.gamma - torch.linalg.vector_norm(
            head + rel - tail, ord=self.p_norm, dim=-1
        )

    def _dist(self, query: Tensor, cand: Tensor) -> Tensor:
        if self.p_norm == 1:
            return l1_distance(query, cand)
        sq = (query * query).sum(-1, keepdim=True) + (cand * cand).sum(-1)
        return (sq - 2.0 * query @ cand.t()).clamp_min(1e-12).sqrt()

    def _dist_grouped(self, query: Tensor, cand: Tensor) -> Tensor:
        if self.p_norm == 1:
            return l1_distance_grouped(query, cand)
        sq = (query * query).sum(-1, keepdim=True) + (cand * cand).sum(-1)[:, None]
        return (sq - 2.0 * query @ cand.transpose(1, 2)).clamp_min(1e-12).sqrt()

    def gathers_negatives(self) -> bool:
        r"""The compiled gathered L1 kernel serves ``p=1`` when compilation
        is on."""
        return self.p_norm == 1 and compile_enabled()

    def score_gathered(
        self, head: Tensor, rel: Tensor, tail: Tensor, negative: Tensor, mode: str
    ) -> Tensor:
        r"""Per-positive negatives with the compiled gathered L1 kernel
        (:func:`~fedgraph.models.kge.l1.l1_gathered`)."""
        query = head + rel if mode == TAIL_BATCH else tail - rel
        return self.gamma - l1_gathered(query, self.entity_embedding.weight, negative)

    def score_tails(self, head: Tensor, rel: Tensor, cand: Tensor) -> Tensor:
        return self.gamma - self._dist(head + rel, cand)

    def score_heads(self, rel: Tensor, tail: Tensor, cand: Tensor) -> Tensor:
        # ||h + r - t|| = ||h - (t - r)||
        return self.gamma - self._dist(tail - rel, cand)

    def score_tails_grouped(self, head: Tensor, rel: Tensor, cand: Tensor) -> Tensor:
        r"""All groups in one distance call (the compiled grouped L1 kernel,
        :func:`~fedgraph.models.kge.l1.l1_distance_grouped`, for ``p=1``)."""
        return self.gamma - self._dist_grouped(head + rel, cand)

    def score_heads_grouped(self, rel: Tensor, tail: Tensor, cand: Tensor) -> Tensor:
        return self.gamma - self._dist_grouped(tail - rel, cand)


__all__ = ["TransE"]
