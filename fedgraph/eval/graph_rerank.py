r"""Graph-based re-ranking: a bonus for candidates near the query entity."""

from __future__ import annotations

import torch
from torch import Tensor


class GraphReranker:
    r"""The re-ranking rule of SimKGC as used by FedMKGC (Eq. 3): a candidate
    :math:`t_i` gains :math:`\alpha` when it lies within :math:`k` hops of the
    query entity :math:`h` in the client's graph :math:`G_i`,

    .. math::
        s'(h, r, t_i) = \cos(\mathbf{e}_{hr}, \mathbf{e}_{t_i})
        + \alpha\, \mathbb{I}\big(t_i \in \mathcal{E}_i^k(h)\big),

    with :math:`\mathcal{E}_i^k(h) = \{e \ne h : d(h, e) \le k\}` and
    :math:`d` the hop distance in the graph of ``edge_index`` taken as
    undirected (an edge links its two entities whatever the relation or
    direction). Pass the *training* edges, so that no test fact leaks into
    the bonus. The query entity itself gets no bonus (it is not its own
    neighbour; SimKGC's code gives it one).

    Neighbourhoods of a batch of queries are found at once: :math:`k`
    sparse-dense products of the adjacency matrix with the ``[N, B]``
    frontier.

    Args:
        edge_index (Tensor): ``[2, E]`` entity pairs (e.g. training ``(h, t)``).
        num_entities (int): :math:`N`.
        alpha (float, optional): the bonus :math:`\alpha`; ``0`` disables
            re-ranking. (default: :obj:`0.01`)
        num_hops (int, optional): :math:`k`; ``0`` disables re-ranking.
            (default: :obj:`5`)
    """

    def __init__(
        self,
        edge_index: Tensor,
        num_entities: int,
        *,
        alpha: float = 0.01,
        num_hops: int = 5,
    ) -> None:
        edge_index = torch.as_tensor(edge_index, dtype=torch.long)
        if edge_index.dim() != 2 or edge_index.size(0) != 2:
            raise ValueError(
                f"`edge_index` must be [2, E] (got {tuple(edge_index.shape)})"
            )
        if num_hops < 0:
            raise ValueError(f"`num_hops` must be non-negative (got {num_hops})")
        if alpha < 0:
            raise ValueError(f"`alpha` must be non-negative (got {alpha})")
        if edge_index.numel() and (
            int(edge_index.min()) < 0 or int(edge_index.max()) >= num_entities
        ):
            raise ValueError(
                f"`edge_index` holds an entity id outside [0, {num_entities})"
            )
        self.num_entities = int(num_entities)
        self.alpha = float(alpha)
        self.num_hops = int(num_hops)
        both = torch.cat([edge_index, edge_index.flip(0)], dim=1)
        both = both[:, both[0] != both[1]]  # self-loops add nobody
        self.adjacency = torch.sparse_coo_tensor(
            both,
            torch.ones(both.size(1)),
            (self.num_entities, self.num_entities),
            check_invariants=True,
        ).coalesce()
        # Repeated pairs summed into values > 1; reachability only needs > 0.

    @property
    def enabled(self) -> bool:
        return self.alpha > 0 and self.num_hops > 0

    def neighbourhood(self, sources: Tensor) -> Tensor:
        r"""``[B, N]`` bool: entity ``j`` is within ``num_hops`` hops of
        ``sources[b]`` (and is not ``sources[b]``).

        Args:
            sources (Tensor): ``[B]`` query entity ids.
        """
        sources = torch.as_tensor(sources, dtype=torch.long)
        cols = torch.arange(sources.numel())
        reach = torch.zeros(self.num_entities, sources.numel(), dtype=torch.bool)
        reach[sources, cols] = True
        frontier = reach.clone()
        for _ in range(self.num_hops):
            step = torch.sparse.mm(self.adjacency, frontier.float()) > 0
            frontier = step & ~reach
            if not bool(frontier.any()):
                break
            reach |= frontier
        reach[sources, cols] = False
        return reach.t()

    def bonus(self, sources: Tensor) -> Tensor:
        r"""``[B, N]``: :math:`\alpha` on each query's neighbourhood, else 0."""
        sources = torch.as_tensor(sources, dtype=torch.long)
        if not self.enabled:
            return torch.zeros(sources.numel(), self.num_entities)
        return self.neighbourhood(sources).float() * self.alpha

    def __repr__(self) -> str:
        return (
            f"GraphReranker(entities={self.num_entities}, alpha={self.alpha}, "
            f"num_hops={self.num_hops})"
        )


__all__ = ["GraphReranker"]
