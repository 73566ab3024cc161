r"""Partitioners, client shards, their on-disk format and statistics.

The registry :data:`partitioners` (:class:`~fedgraph.registry.Registry`)
holds every concrete :class:`Partitioner` that a module of this package
lists in ``__all__``, so a new partitioner is one new file. Resolve a name
with :func:`resolve_partitioner`: a class's ``name`` (``"relation"``,
``"spectral"``, ``"dirichlet"``, ``"rdf-type"``), one of its ``aliases``, or
its class name, ignoring case, ``-``/``_`` and the ``Partitioner`` suffix.
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
from fedgraph.registry import Registry

#: The partitioners (``fedgraph partition --strategy``), found by module.
partitioners = Registry("partitioner", Partitioner)


def resolve_partitioner(query: Any, *args: Any, **kwargs: Any) -> Partitioner:
    r"""Builds the partitioner named ``query`` with the given arguments."""
    return partitioners.resolve(query, *args, **kwargs)


__all__ = [
    "Partitioner",
    "RandomRelationPartitioner",
    "SpectralRelationPartitioner",
    "DirichletRelationPartitioner",
    "RDFTypePartitioner",
    "KGShard",
    "FederatedKG",
    "partitioners",
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
