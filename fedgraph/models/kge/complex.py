r"""ComplEx (Trouillon et al., ICML 2016)."""

from __future__ import annotations

import torch
from torch import Tensor

from fedgraph.models.kge.base import KGEModel


class ComplEx(KGEModel):
    r"""ComplEx from `"Complex Embeddings for Simple Link Prediction"
    <https://arxiv.org/abs/1606.06357>`_:

    .. math::
        f(h, r, t) = \operatorname{Re}\Big(\sum_i h_i\, r_i\, \bar t_i\Big)

    Entities and relations are complex vectors stored as ``[re | im]`` halves
    of ``2 d`` reals (``double_entity_embedding`` and
    ``double_relation_embedding`` of the RotatE/FedLU code). PyG's
    :class:`torch_geometric.nn.kge.ComplEx` keeps real and imaginary parts in
    *four* tables, which breaks the one-entity-table contract federated
    clients rely on; hence this class.

    Its arguments are those of :class:`~fedgraph.models.KGEModel`; two
    mean something else here:

    Args:
        hidden_channels (int): the complex dimension :math:`d` (:math:`2d`
            reals per entity and relation).
        gamma (float, optional): no margin, it only sets the initialisation
            range :math:`\rho`. (default: :obj:`9.0`)
    """

    entity_factor = 2
    relation_factor = 2

    def interaction(self, head: Tensor, rel: Tensor, tail: Tensor) -> Tensor:
        h_re, h_im = head.chunk(2, dim=-1)
        r_re, r_im = rel.chunk(2, dim=-1)
        t_re, t_im = tail.chunk(2, dim=-1)
        return (
            (h_re * r_re - h_im * r_im) * t_re + (h_re * r_im + h_im * r_re) * t_im
        ).sum(-1)

    def score_tails(self, head: Tensor, rel: Tensor, cand: Tensor) -> Tensor:
        h_re, h_im = head.chunk(2, dim=-1)
        r_re, r_im = rel.chunk(2, dim=-1)
        q = torch.cat([h_re * r_re - h_im * r_im, h_re * r_im + h_im * r_re], -1)
        return q @ cand.t()

    def score_heads(self, rel: Tensor, tail: Tensor, cand: Tensor) -> Tensor:
        r_re, r_im = rel.chunk(2, dim=-1)
        t_re, t_im = tail.chunk(2, dim=-1)
        q = torch.cat([r_re * t_re + r_im * t_im, r_re * t_im - r_im * t_re], -1)
        return q @ cand.t()


__all__ = ["ComplEx"]
