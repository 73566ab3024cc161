r"""PairRE (Chao et al., ACL 2021)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from fedgraph.models.kge.base import NormBasedModel


class PairRE(NormBasedModel):
    r"""PairRE from `"PairRE: Knowledge Graph Embeddings via Paired Relation
    Vectors" <https://arxiv.org/abs/2011.03798>`_: each relation holds a pair
    of vectors that rescale the head and the tail,

    .. math::
        f(h, r, t) = \gamma - \big\| \bar{\mathbf{e}}_h \circ \mathbf{r}^H_r
        - \bar{\mathbf{e}}_t \circ \mathbf{r}^T_r \big\|_p,
        \qquad \bar{\mathbf{e}} = \mathbf{e} / \|\mathbf{e}\|_2,

    with the entity vectors L2-normalised inside the score, as in the
    authors' code. The relation table is :math:`2d` wide,
    ``[r^H | r^T]``; the entity table is the usual :math:`d`, so a
    federated client shares it with the other models' machinery.

    Its arguments are those of
    :class:`~fedgraph.models.kge.base.NormBasedModel`; the default
    ``p_norm=1`` is the paper's.
    """

    relation_factor = 2

    def interaction(self, head: Tensor, rel: Tensor, tail: Tensor) -> Tensor:
        r_head, r_tail = rel.chunk(2, dim=-1)
        head, tail = F.normalize(head, dim=-1), F.normalize(tail, dim=-1)
        return self.gamma - torch.linalg.vector_norm(
            head * r_head - tail * r_tail, ord=self.p_norm, dim=-1
        )


__all__ = ["PairRE"]
