r"""Label-skew Dirichlet partition over relations: many non-IID clients from
one knowledge graph."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.data.shard import FederatedKG
from fedgraph.partition.base import Partitioner
from fedgraph.partition.split import DEFAULT_RATIOS, check_ratios, resplit, to_local


class DirichletRelationPartitioner(Partitioner):
    r"""The Dirichlet label-skew partition of `"Measuring the Effects of
    Non-Identical Data Distribution for Federated Visual Classification"
    <https://arxiv.org/abs/1909.06335>`_ (Hsu et al., 2019), the standard
    non-IID recipe of federated learning (Flower Datasets'
    ``DirichletPartitioner``), with the relation of a triple as its label.

    For every relation :math:`r` with :math:`n_r` triples, client shares are
    drawn from a symmetric Dirichlet and the relation's triples, shuffled,
    are cut at the cumulative shares:

    .. math::
        \mathbf{p}_r \sim \operatorname{Dir}(\alpha \mathbf{1}_K), \qquad
        |\mathcal{G}^k_r| = \lfloor n_r P_{r,k} \rfloor -
        \lfloor n_r P_{r,k-1} \rfloor, \quad
        P_{r,k} = \textstyle\sum_{j \le k} p_{r,j}.

    Every triple goes to exactly one client (the clients are disjoint and
    cover the graph). Small :math:`\alpha` gives each relation to few
    clients (:math:`\alpha \to 0`: a relation partition, as FedE's), large
    :math:`\alpha` a near-IID split of every relation. Unlike the relation
    partitions, the number of clients is not bounded by the number of
    relations (FB15k-237: 237), so it makes 100 clients from one KG.

    As in Flower's partitioner, a draw is retried (up to ``max_tries``
    draws, each from the same seeded stream) until every client holds at
    least ``min_triples`` triples; if none does, a :class:`ValueError` says
    so. Each client's triples are then re-split 8:1:1 so that valid/test
    entities and relations occur in train
    (:func:`~fedgraph.partition.split.resplit`). Local ids are the global
    ids in increasing order. The shares come from a NumPy generator and the
    shuffles from a torch generator, both seeded with :obj:`seed`.

    Args:
        num_clients (int): number of clients :math:`K`.
        alpha (float, optional): concentration :math:`\alpha > 0`.
            (default: :obj:`0.5`)
        seed (int, optional): random seed. (default: :obj:`0`)
        min_triples (int, optional): smallest number of (pooled) triples of a
            client. (default: :obj:`10`)
        max_tries (int, optional): Dirichlet draws before giving up.
            (default: :obj:`10`)
        ratios (Sequence[float], optional): per-client ``(train, valid,
            test)`` fractions. (default: :obj:`(0.8, 0.1, 0.1)`)
        splits (Sequence[str], optional): source splits to pool
            (default: :obj:`None`, all of them).
    """

    name = "dirichlet"

    def __init__(
        self,
        num_clients: int,
        *,
        alpha: float = 0.5,
        seed: int = 0,
        min_triples: int = 10,
        max_tries: int = 10,
        ratios: Sequence[float] = DEFAULT_RATIOS,
        splits: Sequence[str] | None = None,
    ) -> None:
        super().__init__(num_clients, seed=seed)
        if not float(alpha) > 0 or not np.isfinite(float(alpha)):
            raise ValueError(f"`alpha` must be a positive number (got {alpha!r})")
        for name, value in (("min_triples", min_triples), ("max_tries", max_tries)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"`{name}` must be a positive integer (got {value!r})")
        self.alpha = float(alpha)
        self.min_triples, self.max_tries = min_triples, max_tries
        self.ratios = check_ratios(ratios)
        self.splits = list(splits) if splits is not None else None

    def get_params(self) -> dict[str, Any]:
        return {
            **super().get_params(),
            "alpha": self.alpha,
            "min_triples": self.min_triples,
            "max_tries": self.max_tries,
            "ratios": list(self.ratios),
            "splits": self.splits,
        }

    def check_feasible(self, graph: KnowledgeGraph) -> None:
        r"""Raises :class:`ValueError` when ``graph`` has fewer than
        ``num_clients * min_triples`` triples (no draw could succeed)."""
        n = int(graph.all_triples(self.splits).size(0))
        if self.num_clients * self.min_triples > n:
            name = getattr(graph, "name", "") or type(graph).__name__
            raise ValueError(
                f"`num_clients`={self.num_clients} with `min_triples`="
                f"{self.min_triples} needs {self.num_clients * self.min_triples} "
                f"triples: {name} has {n}"
            )

    def assign(
        self, relations: Tensor, rng: np.random.Generator, generator: torch.Generator
    ) -> Tensor:
        r"""One draw: the ``[n]`` client of each triple, given the ``[n]``
        relation ids of the pooled triples."""
        n, k = relations.numel(), self.num_clients
        num_rel = int(relations.max()) + 1 if n else 1
        shares = rng.dirichlet(np.full(k, self.alpha), size=num_rel)  # [R, K]
        # rank of each triple among its relation's triples, in a random order
        order = torch.randperm(n, generator=generator)
        order = order[torch.sort(relations[order], stable=True).indices]
        counts = torch.bincount(relations, minlength=num_rel)
        starts = torch.cumsum(counts, 0) - counts
        rank = torch.empty(n, dtype=torch.long)
        rank[order] = torch.arange(n) - starts[relations[order]]
        # cut points floor(n_r * P_{r,k}); the last is n_r exactly
        cuts = np.floor(np.cumsum(shares, axis=1) * counts.numpy()[:, None])
        cuts[:, -1] = counts.numpy()
        cuts_t = torch.from_numpy(cuts.astype(np.int64))
        return (cuts_t[relations] <= rank[:, None]).sum(1)

    def __call__(self, graph: KnowledgeGraph) -> FederatedKG:
        self.check_feasible(graph)
        gen = self.generator()
        rng = np.random.default_rng(self.seed)
        pooled = graph.all_triples(self.splits)
        for _ in range(self.max_tries):
            owner = self.assign(pooled[:, 1], rng, gen)
            sizes = torch.bincount(owner, minlength=self.num_clients)
            if int(sizes.min()) >= self.min_triples:
                break
        else:
            raise ValueError(
                f"no Dirichlet draw in `max_tries`={self.max_tries} gave every one "
                f"of `num_clients`={self.num_clients} clients `min_triples`="
                f"{self.min_triples} (smallest: {int(sizes.min())}): raise `alpha` "
                "or lower `num_clients`"
            )
        order = torch.sort(owner, stable=True).indices
        shards = [
            to_local(c, resplit(part, self.ratios, generator=gen), graph.num_entities)
            for c, part in enumerate(torch.split(pooled[order], sizes.tolist()))
        ]
        meta = self.provenance(graph)
        meta["client_sizes"] = sizes.tolist()
        return FederatedKG(
            shards,
            num_entities=graph.num_entities,
            num_relations=graph.num_relations,
            entity_names=graph.entity_names,
            relation_names=graph.relation_names,
            meta=meta,
        )


__all__ = ["DirichletRelationPartitioner"]
