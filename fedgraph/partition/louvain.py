r"""Relations grouped by the Louvain communities of the relation graph."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.partition.base import RelationPartitioner
from fedgraph.partition.relation_cluster import canonical_labels, cooccurrence_matrix
from fedgraph.partition.split import DEFAULT_RATIOS


class LouvainRelationPartitioner(RelationPartitioner):
    r"""A relation partition along the communities that `"Fast unfolding of
    communities in large networks" <https://arxiv.org/abs/0803.0476>`_
    (Blondel et al., 2008, the Louvain method) finds in the relation graph:
    relations are nodes, and :math:`r_1 \neq r_2` are joined with weight
    :math:`M_{r_1 r_2}`, the number of entities incident to both (FedLU's
    co-occurrence, :func:`~fedgraph.partition.relation_cluster.cooccurrence_matrix`).
    Louvain maximises the modularity

    .. math::
        Q = \frac{1}{2m} \sum_{r_1, r_2} \Big( M_{r_1 r_2}
        - \gamma \frac{k_{r_1} k_{r_2}}{2m} \Big) \,
        \delta(c_{r_1}, c_{r_2})

    (:func:`networkx.algorithms.community.louvain_communities`, seeded with
    :obj:`seed`), whose resolution :math:`\gamma` sets how many communities
    it finds; unlike the spectral partition, their number is not given. The
    communities, largest first (by triples), are dealt to the
    ``num_clients`` clients, each to the client with the fewest triples so
    far, and every triple follows its relation. Clients are numbered by
    their smallest relation id; each is re-split 8:1:1
    (:func:`~fedgraph.partition.split.resplit`).

    Args:
        num_clients (int): number of clients.
        resolution (float, optional): the resolution :math:`\gamma > 0`;
            larger finds more, smaller communities. (default: :obj:`1.0`)
        seed (int, optional): random seed. (default: :obj:`0`)
        ratios (Sequence[float], optional): per-client ``(train, valid,
            test)`` fractions. (default: :obj:`(0.8, 0.1, 0.1)`)
        splits (Sequence[str], optional): source splits pooled for the
            relation graph and the clients (default: :obj:`None`, all).

    Raises:
        ValueError: a ``resolution`` that is not a positive number, or a
            graph in which Louvain finds fewer communities than
            ``num_clients`` (raise ``resolution``).
    """

    name = "louvain"

    def __init__(
        self,
        num_clients: int,
        *,
        resolution: float = 1.0,
        seed: int = 0,
        ratios: Sequence[float] = DEFAULT_RATIOS,
        splits: Sequence[str] | None = None,
    ) -> None:
        super().__init__(num_clients, seed=seed, ratios=ratios, splits=splits)
        if isinstance(resolution, bool) or not isinstance(resolution, int | float):
            raise ValueError(f"`resolution` must be a number (got {resolution!r})")
        if not (math.isfinite(resolution) and resolution > 0):
            raise ValueError(
                f"`resolution` must be a positive number (got {resolution!r})"
            )
        self.resolution = float(resolution)

    def get_params(self) -> dict[str, Any]:
        params = super().get_params()
        return {
            "num_clients": params.pop("num_clients"),
            "seed": params.pop("seed"),
            "resolution": self.resolution,
            **params,
        }

    def communities(self, graph: KnowledgeGraph) -> list[list[int]]:
        r"""The Louvain communities of the relation graph, each a sorted list
        of relation ids, ordered by their smallest id."""
        import networkx as nx

        m = cooccurrence_matrix(
            graph.all_triples(self.splits), graph.num_entities, graph.num_relations
        )
        found = nx.community.louvain_communities(
            nx.from_numpy_array(m.astype(float)),
            weight="weight",
            resolution=self.resolution,
            seed=int(self.seed),
        )
        return sorted((sorted(int(r) for r in c) for c in found), key=lambda c: c[0])

    def assign(
        self, graph: KnowledgeGraph, generator: torch.Generator | None = None
    ) -> Tensor:
        r"""The ``[num_relations]`` client of each relation (Louvain is
        seeded with :obj:`seed`; ``generator`` is not drawn from)."""
        found = self.communities(graph)
        if len(found) < self.num_clients:
            raise ValueError(
                f"Louvain found {len(found)} communities of the relation graph at "
                f"`resolution`={self.resolution}, fewer than `num_clients`="
                f"{self.num_clients}: raise `resolution` or lower `num_clients`"
            )
        sizes = torch.bincount(
            graph.all_triples(self.splits)[:, 1], minlength=graph.num_relations
        )
        load = [0] * self.num_clients
        owner = torch.empty(graph.num_relations, dtype=torch.long)
        for c in sorted(found, key=lambda c: (-int(sizes[c].sum()), c[0])):
            client = min(range(self.num_clients), key=lambda k: (load[k], k))
            owner[c] = client
            load[client] += int(sizes[c].sum())
        return canonical_labels(owner, self.num_clients)


__all__ = ["LouvainRelationPartitioner"]
