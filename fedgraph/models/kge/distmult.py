r"""DistMult (Yang et al., ICLR 2015)."""

from __future__ import annotations

from torch import Tensor

from fedgraph.models.kge.base import KGEModel


class DistMult(KGEModel):
    r"""DistMult from `"Embedding Entities and Relations for Learning and
    Inference in Knowledge Bases" <https://arxiv.org/abs/1412.6575>`_:

    .. math::
        f(h, r, t) = \langle \mathbf{e}_h, \mathbf{r}_r, \mathbf{e}_t \rangle

    :math:`\gamma` only sets the initial embedding range (as in the RotatE
    code). PyG's :class:`torch_geometric.nn.kge.DistMult` is not reused
    because it cannot score a candidate matrix in one product; here
    :meth:`score_tails` is ``(h * r) @ cand.T``.

    Its arguments are those of :class:`~fedgraph.models.KGEModel`, except:

    Args:
        gamma (float, optional): no margin, it only sets the initialisation
            range :math:`\rho`. (default: :obj:`9.0`)
    """

    def interaction(self, head: Tensor, rel: Tensor, tail: Tensor) -> Tensor:
        return (head * rel * tail).sum(-1)

    def score_tails(self, head: Tensor, rel: Tensor, cand: Tensor) -> Tensor:
        return (head * rel) @ cand.t()

    def score_heads(self, rel: Tensor, tail: Tensor, cand: Tensor) -> Tensor:
        return (rel * tail) @ cand.t()


__all__ = ["DistMult"]
