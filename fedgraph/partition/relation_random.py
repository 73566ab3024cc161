r"""FedE's random relation partition (FB15k-237-Fed3/5/10, NELL-995-Fed3)."""

from __future__ import annotations

import torch

from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.partition.base import RelationPartitioner


class RandomRelationPartitioner(RelationPartitioner):
    r"""The random relation partition of `"Federated Knowledge Graph Embedding"
    <https://arxiv.org/abs/2012.02979>`_ (FedE, also FedLU's R3/R5/R10).

    The relations are shuffled with :obj:`seed` and dealt evenly (client
    sizes differ by at most one); every triple follows its relation:

    .. math::
        \mathcal{G}^k = \{(h, r, t) \in \mathcal{G} \mid r \in \mathcal{R}^k\},
        \qquad \mathcal{R}^k \cap \mathcal{R}^j = \emptyset,
        \quad \textstyle\bigcup_k \mathcal{R}^k = \mathcal{R}.

    The source's splits are pooled and each client's triples are re-split
    8:1:1 (seeded) so that valid/test entities and relations occur in train
    (see :func:`~fedgraph.partition.split.resplit`). Local ids are the
    global ids in increasing order.

    Args:
        num_clients (int): number of clients.
        seed (int, optional): random seed. (default: :obj:`0`)
        ratios (Sequence[float], optional): per-client ``(train, valid, test)``
            fractions. (default: :obj:`(0.8, 0.1, 0.1)`)
        splits (Sequence[str], optional): source splits to pool
            (default: :obj:`None`, all of them).
    """

    name = "relation"
    aliases = ("random",)

    def assign(
        self, graph: KnowledgeGraph, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        r"""The ``[num_relations]`` client of each relation, drawn from
        ``generator`` (default: a fresh :meth:`generator`)."""
        if graph.num_relations < self.num_clients:
            raise ValueError(
                f"`num_clients`={self.num_clients} exceeds the number of "
                f"relations (got {graph.num_relations}): some client would be empty"
            )
        generator = self.generator() if generator is None else generator
        perm = torch.randperm(graph.num_relations, generator=generator)
        owner = torch.empty(graph.num_relations, dtype=torch.long)
        # Deal evenly: shuffled position p goes to client floor(p * K / R).
        owner[perm] = (
            torch.arange(graph.num_relations) * self.num_clients // graph.num_relations
        )
        return owner


__all__ = ["RandomRelationPartitioner"]
