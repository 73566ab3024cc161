r"""FedLU's clustering-based relation partition (FB15k-237-C3/C5/C10)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.partition.base import RelationPartitioner
from fedgraph.partition.split import DEFAULT_RATIOS
from fedgraph.typing import Triples


def incidence_matrix(
    triples: Triples, num_entities: int, num_relations: int
) -> sp.csr_matrix:
    r"""The binary ``[num_entities, num_relations]`` matrix :math:`B` with
    :math:`B_{e,r} = 1` iff entity :math:`e` is the head or tail of some
    triple of relation :math:`r`."""
    ent = torch.cat([triples[:, 0], triples[:, 2]]).numpy()
    rel = torch.cat([triples[:, 1], triples[:, 1]]).numpy()
    data = np.ones(ent.shape[0], dtype=np.int64)
    b = sp.csr_matrix((data, (ent, rel)), shape=(num_entities, num_relations))
    b.data[:] = 1  # duplicates were summed: binarise
    return b


def cooccurrence_matrix(
    triples: Triples, num_entities: int, num_relations: int
) -> np.ndarray:
    r"""The relation co-occurrence matrix of FedLU's Algorithm 2.

    .. math::
        M = B^\top B - \operatorname{diag}(B^\top B), \qquad
        M_{r_1 r_2} = |\{e : e \text{ is incident to } r_1 \text{ and } r_2\}|,
        \; r_1 \neq r_2,

    with :math:`B` the binary entity–relation incidence matrix (see
    :func:`incidence_matrix`); the diagonal is zero as in the paper
    (:math:`r_1 \neq r_2`). Returns a dense ``[R, R]`` ``int64`` array.
    """
    b = incidence_matrix(triples, num_entities, num_relations)
    m = (b.T @ b).toarray()
    np.fill_diagonal(m, 0)
    return m


class SpectralRelationPartitioner(RelationPartitioner):
    r"""The clustering-based partition of `"Heterogeneous Federated Knowledge
    Graph Embedding Learning and Unlearning" <https://arxiv.org/abs/2302.02069>`_
    (FedLU's FB15k-237-C3/C5/C10, Algorithm 2).

    Relations are clustered by scikit-learn's
    :class:`~sklearn.cluster.SpectralClustering` on the precomputed
    co-occurrence affinity :math:`M` (:func:`cooccurrence_matrix`, built with
    one sparse product, unnormalised, zero diagonal, as FedLU's
    ``partition_data_C.py``), seeded with :obj:`seed`; each cluster is a
    client and every triple follows its relation. As in FedLU, all source
    splits are pooled before clustering; each client's triples are then
    re-split 8:1:1 (:func:`~fedgraph.partition.split.resplit`).

    Clients are numbered by the smallest global relation id they contain, so
    the numbering does not depend on scikit-learn's arbitrary label order.

    Args:
        num_clients (int): number of clusters (clients).
        seed (int, optional): ``random_state`` of the clustering and seed of
            the re-split. (default: :obj:`0`)
        ratios (Sequence[float], optional): per-client ``(train, valid, test)``
            fractions. (default: :obj:`(0.8, 0.1, 0.1)`)
        splits (Sequence[str], optional): source splits pooled for the
            co-occurrence and the clients (default: :obj:`None`, all).
        n_init (int, optional): k-means restarts of the clustering.
            (default: :obj:`10`, scikit-learn's)
    """

    name = "spectral"
    aliases = ("cluster",)

    def __init__(
        self,
        num_clients: int,
        *,
        seed: int = 0,
        ratios: Sequence[float] = DEFAULT_RATIOS,
        splits: Sequence[str] | None = None,
        n_init: int = 10,
    ) -> None:
        super().__init__(num_clients, seed=seed, ratios=ratios, splits=splits)
        if n_init < 1:
            raise ValueError(f"`n_init` must be a positive integer (got {n_init})")
        self.n_init = int(n_init)

    def get_params(self) -> dict[str, Any]:
        return {**super().get_params(), "n_init": self.n_init}

    def assign(
        self, graph: KnowledgeGraph, generator: torch.Generator | None = None
    ) -> Tensor:
        r"""The ``[num_relations]`` cluster (client) of each relation (the
        clustering is seeded with :obj:`seed`; ``generator`` is not drawn
        from)."""
        from sklearn.cluster import SpectralClustering

        if graph.num_relations < self.num_clients:
            raise ValueError(
                f"`num_clients`={self.num_clients} exceeds the number of "
                f"relations (got {graph.num_relations})"
            )
        if self.num_clients == 1:  # nothing to cluster
            return torch.zeros(graph.num_relations, dtype=torch.long)
        if self.num_clients == graph.num_relations:  # one relation per client
            return torch.arange(graph.num_relations)
        m = cooccurrence_matrix(
            graph.all_triples(self.splits), graph.num_entities, graph.num_relations
        )
        sc = SpectralClustering(
            n_clusters=self.num_clients,
            affinity="precomputed",
            random_state=int(self.seed),
            n_init=self.n_init,
        )
        with warnings.catch_warnings():
            # A disconnected affinity graph is legal here (isolated relations).
            warnings.filterwarnings("ignore", message="Graph is not fully connected")
            labels = torch.as_tensor(sc.fit_predict(m.astype(np.float64)))
        return canonical_labels(labels, self.num_clients)


def canonical_labels(labels: Tensor, num_clusters: int) -> Tensor:
    r"""Renumbers cluster labels by the smallest item index in each cluster
    (empty clusters last), so equal clusterings get equal labels."""
    first = torch.full((num_clusters,), labels.numel(), dtype=torch.long)
    first = first.scatter_reduce(
        0, labels.long(), torch.arange(labels.numel()), reduce="amin"
    )
    rank = torch.empty(num_clusters, dtype=torch.long)
    rank[torch.sort(first, stable=True).indices] = torch.arange(num_clusters)
    return rank[labels.long()]


__all__ = [
    "SpectralRelationPartitioner",
    "cooccurrence_matrix",
    "incidence_matrix",
    "canonical_labels",
]
