r"""The partitioner contract."""

from __future__ import annotations

import functools
import hashlib
import types
import typing
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor

from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.data.shard import FederatedKG
from fedgraph.partition.split import (
    DEFAULT_RATIOS,
    check_ratios,
    shards_from_relation_clients,
)
from fedgraph.validate import check_instance, check_integer
from fedgraph.version import __version__


class Partitioner(ABC):
    r"""Splits one graph into client shards.

    A partitioner is a seeded, deterministic object (scikit-learn style: its
    constructor arguments are stored unchanged under their own names and all
    randomness comes from ``seed``): calling it twice on the same input gives
    byte-identical output.

    Calling a partitioner first checks that its ``graph`` is of the type its
    ``__call__`` annotates (``KnowledgeGraph``, ``RDFGraph``): anything else
    raises a one-line :class:`TypeError` naming ``graph``, never an error
    from inside the partitioning.

    Args:
        num_clients (int): number of client shards to produce.
        seed (int, optional): random seed, ``>= 0``. (default: :obj:`0`)
    """

    def __init__(self, num_clients: int, *, seed: int = 0) -> None:
        self.num_clients = check_integer(num_clients, "num_clients")
        self.seed = check_integer(seed, "seed", low=0)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        call = cls.__dict__.get("__call__")
        if call is not None:
            cls.__call__ = _checking_graph(call)  # type: ignore[method-assign]

    @abstractmethod
    def __call__(self, graph: Any) -> Any:
        r"""Partitions ``graph`` and returns the federated dataset."""

    def check_feasible(self, graph: Any) -> None:
        r"""Raises :class:`ValueError` before any work when ``graph`` cannot
        give ``num_clients`` clients with training data (default: the bound
        of :func:`~fedgraph.partition.feasible.max_clients`, i.e. the
        relations of a KG or the labelled training nodes of an RDF graph)."""
        from fedgraph.partition.feasible import check_num_clients

        check_num_clients(self.num_clients, graph)

    def get_params(self) -> dict[str, Any]:
        r"""The constructor arguments, for metadata and replay."""
        return {"num_clients": self.num_clients, "seed": self.seed}

    def generator(self) -> torch.Generator:
        r"""A fresh :class:`torch.Generator` seeded with :attr:`seed`."""
        gen = torch.Generator()
        gen.manual_seed(int(self.seed))
        return gen

    def provenance(self, graph: Any) -> dict[str, Any]:
        r"""The metadata stored with a partition of ``graph``: partitioner,
        its arguments, seed, source name and checksum, library version."""
        return {
            "partitioner": self.__class__.__name__,
            "params": self.get_params(),
            "seed": self.seed,
            "source": getattr(graph, "name", "") or "",
            "source_checksum": source_checksum(graph),
            "fedgraph_version": __version__,
        }

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{self.__class__.__name__}({args})"


def _checking_graph(call: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    r"""``call`` (a partitioner's ``__call__``) preceded by the check that
    its ``graph`` has the annotated type."""

    @functools.wraps(call)
    def checked(self: Partitioner, graph: Any) -> Any:
        check_instance(graph, "graph", _annotated_type(call))
        return call(self, graph)

    return checked


def _annotated_type(call: Callable[..., Any]) -> type | tuple[type, ...]:
    r"""The class (or classes, for a union) that ``call`` annotates its
    ``graph`` argument with; :class:`object` when there is none."""
    try:
        hint = typing.get_type_hints(call).get("graph", object)
    except (NameError, TypeError):  # an annotation not importable at run time
        return object
    if isinstance(hint, type):
        return hint
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        kinds = tuple(a for a in typing.get_args(hint) if isinstance(a, type))
        return kinds or object
    return object


def source_checksum(graph: Any) -> str:
    r"""SHA-256 of a source graph's content: the sizes and every split's
    triples (name and bytes), and the names when present. Graph types other
    than :class:`~fedgraph.data.KnowledgeGraph` may define
    ``checksum() -> str`` instead."""
    if hasattr(graph, "checksum"):
        return str(graph.checksum())
    h = hashlib.sha256()
    h.update(f"{graph.num_entities},{graph.num_relations}".encode())
    for split in graph.split_names:
        t = graph.triples(split).to(torch.int64).contiguous()
        h.update(split.encode())
        h.update(t.numpy().tobytes())
    for names in (graph.entity_names, graph.relation_names):
        if names is not None:
            h.update("\n".join(names).encode())
    return "sha256:" + h.hexdigest()


class RelationPartitioner(Partitioner):
    r"""Base class of the partitioners that give each relation to one
    client: :meth:`assign` maps relations to clients, every triple follows
    its relation, and each client's pooled triples are re-split
    (:func:`~fedgraph.partition.split.shards_from_relation_clients`); the
    relation → client map is stored in the metadata as
    ``relation_clients``.

    Args:
        num_clients (int): number of clients.
        seed (int, optional): random seed. (default: :obj:`0`)
        ratios (Sequence[float], optional): per-client ``(train, valid,
            test)`` fractions. (default: :obj:`(0.8, 0.1, 0.1)`)
        splits (Sequence[str], optional): source splits to pool
            (default: :obj:`None`, all of them).
    """

    def __init__(
        self,
        num_clients: int,
        *,
        seed: int = 0,
        ratios: Sequence[float] = DEFAULT_RATIOS,
        splits: Sequence[str] | None = None,
    ) -> None:
        super().__init__(num_clients, seed=seed)
        self.ratios = check_ratios(ratios)
        self.splits = list(splits) if splits is not None else None

    def get_params(self) -> dict[str, Any]:
        return {
            **super().get_params(),
            "ratios": list(self.ratios),
            "splits": self.splits,
        }

    @abstractmethod
    def assign(
        self, graph: KnowledgeGraph, generator: torch.Generator | None = None
    ) -> Tensor:
        r"""The ``[num_relations]`` client of each relation of ``graph``.

        Args:
            graph (KnowledgeGraph): the source graph.
            generator (torch.Generator, optional): the stream the re-split
                continues with, for a partitioner that draws from it
                (default: :obj:`None`, a fresh :meth:`generator`).
        """

    def __call__(self, graph: KnowledgeGraph) -> FederatedKG:
        gen = self.generator()
        owner = self.assign(graph, gen)
        meta = self.provenance(graph)
        meta["relation_clients"] = owner.tolist()
        return shards_from_relation_clients(
            graph,
            owner,
            num_clients=self.num_clients,
            splits=self.splits,
            ratios=self.ratios,
            generator=gen,
            meta=meta,
        )


__all__ = ["Partitioner", "RelationPartitioner", "source_checksum"]
