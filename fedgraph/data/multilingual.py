r"""A set of aligned knowledge graphs (one per language), e.g. DBP-5L."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import Tensor

from fedgraph.data.knowledge_graph import KnowledgeGraph


class MultilingualKG:
    r"""Per-language :class:`KnowledgeGraph` objects plus entity alignments.

    Each language keeps its own entity ids; relation ids are shared when the
    source has one relation vocabulary (DBP-5L's ``relations.txt``).

    Args:
        graphs (Mapping[str, KnowledgeGraph]): language → graph.
        alignments (Mapping[tuple[str, str], Tensor]): ``(a, b)`` → ``[n, 2]``
            long tensor of aligned entity pairs (column 0 an id of ``a``,
            column 1 an id of ``b``).
        relation_names (Sequence[str], optional): the shared relation names.
        name (str, optional): the dataset's name.
    """

    def __init__(
        self,
        graphs: Mapping[str, KnowledgeGraph],
        alignments: Mapping[tuple[str, str], Tensor],
        relation_names: Sequence[str] | None = None,
        name: str = "",
    ) -> None:
        self.graphs = dict(graphs)
        self.alignments: dict[tuple[str, str], Tensor] = {}
        for (a, b), pairs in alignments.items():
            for lang in (a, b):
                if lang not in self.graphs:
                    raise ValueError(
                        f"Alignment ({a!r}, {b!r}) names unknown language "
                        f"{lang!r} (got languages {self.languages})"
                    )
            pairs = torch.as_tensor(pairs, dtype=torch.long)
            if pairs.dim() != 2 or pairs.size(1) != 2:
                raise ValueError(
                    f"Alignment ({a!r}, {b!r}) must be [n, 2] "
                    f"(got shape {tuple(pairs.shape)})"
                )
            self.alignments[(a, b)] = pairs
        self.relation_names = list(relation_names) if relation_names else None
        self.name = name

    @property
    def languages(self) -> list[str]:
        return list(self.graphs)

    def __getitem__(self, language: str) -> KnowledgeGraph:
        if language not in self.graphs:
            raise KeyError(f"Unknown language {language!r} (got {self.languages})")
        return self.graphs[language]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.graphs.items())

    def __len__(self) -> int:
        return len(self.graphs)

    def alignment(self, a: str, b: str) -> Tensor:
        r"""``[n, 2]`` aligned pairs with column 0 in ``a``, column 1 in ``b``
        (a stored ``(b, a)`` link set is flipped)."""
        if (a, b) in self.alignments:
            return self.alignments[(a, b)]
        if (b, a) in self.alignments:
            return self.alignments[(b, a)].flip(1)
        raise KeyError(f"No alignment between {a!r} and {b!r}")

    def stats(self) -> dict[str, Any]:
        r"""Totals over languages (``entities`` is the sum of the languages'
        entity counts; ``triples`` per split summed) plus ``languages`` (each
        language's :meth:`KnowledgeGraph.stats`) and ``alignments``
        (pairs per link file)."""
        langs = {k: g.stats() for k, g in self.graphs.items()}
        totals: dict[str, int] = {}
        for s in langs.values():
            for split, n in s["triples"].items():
                totals[split] = totals.get(split, 0) + n
        return {
            "entities": sum(s["entities"] for s in langs.values()),
            "relations": len(self.relation_names)
            if self.relation_names
            else max((g.num_relations for g in self.graphs.values()), default=0),
            "triples": totals,
            "languages": langs,
            "alignments": {
                f"{a}-{b}": int(p.size(0)) for (a, b), p in self.alignments.items()
            },
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "relation_names": self.relation_names,
            "graphs": {k: g.to_dict() for k, g in self.graphs.items()},
            "alignments": [[a, b, p] for (a, b), p in self.alignments.items()],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> MultilingualKG:
        return cls(
            {k: KnowledgeGraph.from_dict(g) for k, g in d["graphs"].items()},
            {(a, b): p for a, b, p in d["alignments"]},
            relation_names=d.get("relation_names"),
            name=d.get("name", ""),
        )

    def __repr__(self) -> str:
        langs = ", ".join(
            f"{k}={g.num_entities}/{g.num_triples()}" for k, g in self.graphs.items()
        )
        return (
            f"MultilingualKG('{self.name}', {langs}, alignments={len(self.alignments)})"
        )


__all__ = ["MultilingualKG"]
