r"""RotatE (Sun et al., ICLR 2019)."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from fedgraph.models.kge.base import TAIL_BATCH, KGEModel
from fedgraph.models.kge.modulus import (
    EPS,
    gathered_enabled,
    modulus_distance,
    modulus_gathered,
)


class RotatE(KGEModel):
    r"""RotatE from `"RotatE: Knowledge Graph Embedding by Relational Rotation
    in Complex Space" <https://arxiv.org/abs/1902.10197>`_:

    .. math::
        f(h, r, t) = \gamma - \sum_i \big| h_i \, e^{\mathrm{i}\theta_{r,i}}
        - t_i \big|, \qquad \theta_r = \mathbf{r}_r / (\rho / \pi)

    with the phase convention of the RotatE code (FedE, FedLU):
    :math:`\rho = (\gamma + \epsilon)/d` is the embedding range, relations
    hold :math:`d` phases and entities :math:`2d` reals ``[re | im]``
    (``double_entity_embedding``), and the distance is the sum of complex
    moduli. PyG's :class:`torch_geometric.nn.kge.RotatE` uses two entity
    tables (real and imaginary) and a different phase scaling, so it is not
    reused. Against candidates (shared negatives, evaluation) the moduli go
    through the compiled kernel :func:`~fedgraph.models.kge.modulus.modulus_distance`,
    which never stores ``[B, C, d]`` (falling back to the chunked broadcast),
    and per-positive negatives through its gathered form
    :func:`~fedgraph.models.kge.modulus.modulus_gathered`;
    :math:`|h e^{i\theta} - t| = |h - t e^{-i\theta}|` turns head scoring
    into the same kernels.

    Its arguments are those of :class:`~fedgraph.models.KGEModel`, except:

    Args:
        hidden_channels (int): the complex dimension :math:`d` (:math:`2d`
            reals per entity, :math:`d` phases per relation).
    """

    entity_factor = 2

    def _phase(self, rel: Tensor) -> tuple[Tensor, Tensor]:
        phase = rel / (self.embedding_range / math.pi)
        return torch.cos(phase), torch.sin(phase)

    def interaction(self, head: Tensor, rel: Tensor, tail: Tensor) -> Tensor:
        h_re, h_im = head.chunk(2, dim=-1)
        t_re, t_im = tail.chunk(2, dim=-1)
        r_re, r_im = self._phase(rel)
        d_re = h_re * r_re - h_im * r_im - t_re
        d_im = h_re * r_im + h_im * r_re - t_im
        # A modulus that rounds to exactly 0 (a self-loop (h, r, h) whose phase
        # has shrunk to ~1e-8 in a coordinate: cos = 1 in float32) would give
        # sqrt an infinite derivative and the step NaN. Clamping the square at
        # EPS² gives that coordinate gradient 0 (the subgradient the compiled
        # kernel and torch.norm in the RotatE code use) and leaves every
        # modulus >= EPS, its value and its gradient, bit for bit unchanged.
        sq = (d_re * d_re + d_im * d_im).clamp_min(EPS * EPS)
        return self.gamma - torch.sqrt(sq).sum(-1)

    def _tail_query(self, head: Tensor, rel: Tensor) -> Tensor:
        h_re, h_im = head.chunk(2, dim=-1)
        r_re, r_im = self._phase(rel)  # h * r
        return torch.cat([h_re * r_re - h_im * r_im, h_re * r_im + h_im * r_re], -1)

    def _head_query(self, rel: Tensor, tail: Tensor) -> Tensor:
        t_re, t_im = tail.chunk(2, dim=-1)
        r_re, r_im = self._phase(rel)  # t * conj(r)
        return torch.cat([t_re * r_re + t_im * r_im, t_im * r_re - t_re * r_im], -1)

    def score_tails(self, head: Tensor, rel: Tensor, cand: Tensor) -> Tensor:
        return self.gamma - modulus_distance(self._tail_query(head, rel), cand)

    def score_heads(self, rel: Tensor, tail: Tensor, cand: Tensor) -> Tensor:
        return self.gamma - modulus_distance(self._head_query(rel, tail), cand)

    def gathers_negatives(self) -> bool:
        r"""Per-positive negatives go through the compiled gathered modulus
        kernel when compilation is on (else :meth:`interaction` on the
        gathered rows, the path of runs made before the kernel)."""
        return gathered_enabled()

    def score_gathered(
        self, head: Tensor, rel: Tensor, tail: Tensor, negative: Tensor, mode: str
    ) -> Tensor:
        r"""Per-positive negatives with
        :func:`~fedgraph.models.kge.modulus.modulus_gathered`."""
        if mode == TAIL_BATCH:
            query = self._tail_query(head, rel)
        else:
            query = self._head_query(rel, tail)
        weight = self.entity_embedding.weight
        return self.gamma - modulus_gathered(query, weight, negative)


__all__ = ["RotatE"]
