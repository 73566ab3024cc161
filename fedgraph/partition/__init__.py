r"""Partitioners, client shards, their on-disk format and statistics.

The registry :data:`partitioners` is an explicit list; resolve a name with
:func:`resolve_partitioner` (``"relation"``, ``"spectral"``, ``"dirichlet"``, ``"rdf-type"``,
or any class name, ignoring case, ``-``/``_`` and the ``Partitioner``
suffix).
"""

from __future__ import annotations

from typing import Any

from fedgraph.data.shard import FederatedKG, KGShard
from fedgraph.partition.base import Partitioner, source_checksum
from fedgraph.partition.benchmarks import benchmark_names, load_benchmark
from fedgraph.partition.dirichlet import DirichletRelationPartitioner
from fedgraph.partition.io import (
    PartitionFormatError,
    load_partition,
    read_meta,
    save_partition,
)
from fedgraph.partition.rdf_type import RDFTypePartitioner
from fedgraph.partition.relation_cluster import SpectralRelationPartitioner
from fedgraph.partition.relation_random import RandomRelationPartitioner
from fedgraph.partition.stats import describe, format_table
from fedgraph.registry import resolve

# The registry of partitioners (drives `fedgraph partition --strategy`).
partitioners: list[type[Partitioner]] = [
    RandomRelationPartitioner,
    SpectralRelationPartitioner,
    DirichletRelationPartitioner,
    RDFTypePartitioner,
]

# Short names of the CLI; class names (minus "Partitioner") also resolve.
aliases: dict[str, type[Partitioner]] = {
    "relation": RandomRelationPartitioner,
    "random": RandomRelationPartitioner,
    "spectral": SpectralRelationPartitioner,
    "cluster": SpectralRelationPartitioner,
    "dirichlet": DirichletRelationPartitioner,
    "rdf-type": RDFTypePartitioner,
}


def resolve_partitioner(query: Any, *args: Any, **kwargs: Any) -> Partitioner:
    r"""Builds the partitioner named ``query`` with the given arguments."""
    return resolve(
        query, partitioners, *args, suffix="Partitioner", aliases=aliases, **kwargs
    )


__all__ = [
    "Partitioner",
    "RandomRelationPartitioner",
    "SpectralRelationPartitioner",
    "DirichletRelationPartitioner",
    "RDFTypePartitioner",
    "KGShard",
    "FederatedKG",
    "partitioners",
    "aliases",
    "resolve_partitioner",
    "save_partition",
    "load_partition",
    "read_meta",
    "PartitionFormatError",
    "describe",
    "format_table",
    "load_benchmark",
    "benchmark_names",
    "source_checksum",
]
