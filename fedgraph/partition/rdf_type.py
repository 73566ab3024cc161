r"""FedAlign's type-sampling partitioner for RDF entity classification."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from fedgraph.data.rdf_graph import MASKS, RDFGraph
from fedgraph.partition.base import Partitioner
from fedgraph.partition.feasible import check_num_clients
from fedgraph.partition.rdf_shard import FederatedRDF, RDFShard


class RDFTypePartitioner(Partitioner):
    r"""Splits an RDF graph into clients by node-type sampling, as FedAlign
    (Lin et al., "Improving Federated Relational Data Modeling via Basis
    Alignment and Weight Constraint", §5.1) builds its
    10-client AIFB, MUTAG and BGS.

    For each client :math:`i`:

    1. pick ``num_types`` distinct categories among those of the unlabelled
       nodes (restricted to ``types``, default the graph's
       :attr:`~fedgraph.data.rdf_graph.RDFGraph.core_types`, i.e. DGL's);
    2. for each picked category :math:`t` draw
       :math:`k \sim \mathcal{U}\{0, \dots, |V^{\text{unl}}_t|\}` and keep
       :math:`k` of its unlabelled nodes, uniformly without replacement;
    3. add the :math:`i`-th of ``num_clients`` near-equal parts of the
       shuffled training nodes (and likewise of the validation nodes), and a
       copy of every test node (labelled, but never trained on);
    4. keep an edge when both its ends are in the client.

    All draws come from one generator seeded with ``seed``, in this order, so
    the same graph and seed give byte-identical shards.

    Args:
        num_clients (int): number of clients. (FedAlign: :obj:`10`)
        num_types (int, optional): categories sampled per client (FedAlign:
            6, 5 for MUTAG). (default: :obj:`6`)
        types (Sequence[str], optional): the categories to draw from.
            (default: :obj:`None`, the graph's core types)
        seed (int, optional): random seed. (default: :obj:`0`)
    """

    name = "rdf-type"

    def __init__(
        self,
        num_clients: int,
        *,
        num_types: int = 6,
        types: Sequence[str] | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__(num_clients, seed=seed)
        if not isinstance(num_types, int) or num_types < 1:
            raise ValueError(
                f"`num_types` must be a positive integer (got {num_types!r})"
            )
        self.num_types = num_types
        self.types = list(types) if types is not None else None

    def get_params(self) -> dict[str, Any]:
        return {
            **super().get_params(),
            "num_types": self.num_types,
            "types": self.types,
        }

    def _candidates(self, graph: RDFGraph, unlabelled: Tensor) -> Tensor:
        r"""The sorted ids of the pool's categories that have unlabelled nodes
        (at least ``num_types`` of them)."""
        pool_names = self.types if self.types is not None else graph.core_types
        unknown = set(pool_names) - set(graph.node_type_names)
        if unknown:
            raise ValueError(f"`types` names unknown categories {sorted(unknown)}")
        pool_ids = torch.tensor(
            [graph.node_type_names.index(t) for t in pool_names], dtype=torch.long
        )
        present = torch.unique(graph.node_type[unlabelled])
        candidates = pool_ids[torch.isin(pool_ids, present)].sort().values
        if candidates.numel() < self.num_types:
            raise ValueError(
                f"`num_types`={self.num_types} but the unlabelled nodes have only "
                f"{candidates.numel()} eligible categories"
            )
        return candidates

    def _sample_nodes(
        self, candidates: Tensor, by_type: dict[int, Tensor], gen: torch.Generator
    ) -> list[Tensor]:
        r"""One client's draw: ``num_types`` categories, and of each a uniform
        number (0 to all) of its unlabelled nodes, uniformly."""
        picked = candidates[
            torch.randperm(candidates.numel(), generator=gen)[: self.num_types]
        ]
        chosen = []
        for t in picked.tolist():
            nodes = by_type[t]
            k = int(torch.randint(0, nodes.numel() + 1, (1,), generator=gen))
            chosen.append(nodes[torch.randperm(nodes.numel(), generator=gen)[:k]])
        return chosen

    def __call__(self, graph: RDFGraph) -> FederatedRDF:
        if not isinstance(graph, RDFGraph):
            raise ValueError(
                f"`graph` must be an RDFGraph (got {type(graph).__name__})"
            )
        check_num_clients(self.num_clients, graph)
        gen = torch.Generator().manual_seed(int(self.seed))
        unlabelled = ~graph.labelled_mask
        candidates = self._candidates(graph, unlabelled)
        by_type = {
            int(t): (unlabelled & (graph.node_type == t)).nonzero().view(-1)
            for t in candidates.tolist()
        }
        parts = {}
        for key in ("train_mask", "valid_mask"):
            ids = graph.masks[key].nonzero().view(-1)
            ids = ids[torch.randperm(ids.numel(), generator=gen)]
            parts[key] = torch.tensor_split(ids, self.num_clients)
        test = graph.test_mask.nonzero().view(-1)
        shards = []
        for i in range(self.num_clients):
            chosen = self._sample_nodes(candidates, by_type, gen)
            masks = {k: torch.zeros(graph.num_nodes, dtype=torch.bool) for k in MASKS}
            masks["train_mask"][parts["train_mask"][i]] = True
            masks["valid_mask"][parts["valid_mask"][i]] = True
            masks["test_mask"][test] = True
            node_ids = torch.unique(
                torch.cat(
                    [*chosen, parts["train_mask"][i], parts["valid_mask"][i], test]
                )
            )
            shards.append(RDFShard(i, graph.subgraph(node_ids, masks), node_ids))
        meta = {
            "partitioner": type(self).__name__,
            "params": self.get_params(),
            "seed": self.seed,
            "source": graph.name,
            "source_checksum": graph.checksum(),
        }
        return FederatedRDF(
            shards, graph.num_nodes, graph.num_relations, graph.num_classes, meta
        )


__all__ = ["RDFTypePartitioner"]
