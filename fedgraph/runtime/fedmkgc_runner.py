r"""One FedMKGC experiment: language KGs → clients, strategy, rounds.

``mkgc_algorithms`` names the runnable settings: ``"fedmkgc"`` (the paper's
main setting: one client per round in an agreed order), ``"fedmkgc-parallel"``
(all clients every round, equal-weight average: FedMKGC\ :sub:`WA` of the
paper's Table 3) and ``"independent"`` (each language alone, nothing
shared: the single-KG SimKGC-style baseline).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from torch import nn

from fedgraph.data.dbp5l import LANGUAGES, read_dbp5l
from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.federated.text.setup import (
    MKGCSettings,
    build_fedmkgc,
    build_fedmkgc_clients,
    build_text_strategy,
    compact_relations,
    default_encoder,
    load_text_model,
    mkgc_algorithms,
)
from fedgraph.runtime.result import SimulationResult
from fedgraph.runtime.simulation import run_simulation


def run_fedmkgc(
    algorithm: str,
    graphs: Sequence[KnowledgeGraph] | Mapping[str, KnowledgeGraph],
    encoder: nn.Module,
    tokenizer: Any,
    settings: MKGCSettings | None = None,
    *,
    num_rounds: int = 50,
    eval_every: int = 5,
    patience: int = 3,
    texts: Sequence[Sequence[str]] | None = None,
    **kwargs: Any,
) -> SimulationResult:
    r"""Builds ``algorithm`` (:func:`build_fedmkgc`) on ``graphs`` (a mapping
    such as a :class:`~fedgraph.data.MultilingualKG`'s ``graphs`` keeps its
    order; relations are compacted per graph with :func:`compact_relations`)
    and runs it with :func:`~fedgraph.runtime.run_simulation` (``kwargs`` go
    there, e.g. ``checkpoint_dir``, ``progress``); the monitored metric is
    the weighted validation MRR.
    """
    settings = MKGCSettings() if settings is None else settings
    seq = list(graphs.values()) if isinstance(graphs, Mapping) else list(graphs)
    seq = [compact_relations(g) for g in seq]
    strategy, clients = build_fedmkgc(
        algorithm, seq, encoder, tokenizer, settings, texts=texts
    )
    kwargs.setdefault("progress", False)
    kwargs.setdefault("seed", settings.seed)
    return run_simulation(
        strategy,
        clients,
        num_rounds=num_rounds,
        eval_every=eval_every,
        patience=patience,
        monitor="mrr",
        **kwargs,
    )


def folder_languages(folder: str | os.PathLike[str]) -> list[str]:
    r"""The languages of a folder in the DBP-5L layout: those with an
    ``entity/LANG.tsv`` (DBP-5L's five in its order, then any other in
    alphabetical order)."""
    found = {p.stem for p in (Path(folder) / "entity").glob("*.tsv")}
    return [x for x in LANGUAGES if x in found] + sorted(found - set(LANGUAGES))


def load_language_graphs(
    data: str | os.PathLike[str],
    languages: Sequence[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    *,
    what: tuple[str, str] = ("`data`", "`languages`"),
) -> dict[str, KnowledgeGraph]:
    r"""The language KGs of a FedMKGC run, language → graph (relations
    compacted per graph, :func:`compact_relations`), in ``languages`` order.

    Args:
        data (str or Path): a multilingual dataset name (``dbp-5l``, read
            under ``root``) or a folder in the DBP-5L layout
            (``relations.txt``, ``entity/LANG.tsv``, ``kg/LANG-{train,val,test}.tsv``).
        languages (Sequence[str], optional): the clients' languages, one
            client each. (default: every language of ``data``)
        root (str or Path, optional): the data root of a dataset name
            (default: ``FEDGRAPH_DATA``).
        what (tuple[str, str], optional): how errors name ``data`` and
            ``languages`` (the command line's ``DATASET``, ``--languages``).

    Raises:
        ValueError: ``data`` is neither, or names no language of ``languages``.
    """
    known, read = _source(data, root, what[0])
    chosen = _check_languages(languages, known, str(data), what[1])
    mkg = read(chosen)
    return {x: compact_relations(mkg[x]) for x in chosen}


def dataset_languages(
    data: str | os.PathLike[str],
    root: str | os.PathLike[str] | None = None,
    what: str = "`data`",
) -> list[str]:
    r"""The languages of ``data`` (as :func:`load_language_graphs` reads
    it), in the dataset's order."""
    return _source(data, root, what)[0]


def _source(
    data: str | os.PathLike[str], root: str | os.PathLike[str] | None, what: str
) -> tuple[list[str], Callable[[list[str]], Any]]:
    r"""The languages of ``data`` and a reader of the chosen ones."""
    folder = Path(data)
    if folder.is_dir():
        if not (folder / "relations.txt").is_file():
            raise ValueError(
                f"{what} folder {folder} is not in the DBP-5L layout (no "
                "relations.txt; expected relations.txt, entity/LANG.tsv and "
                "kg/LANG-{train,val,test}.tsv)"
            )

        def read(chosen: list[str]) -> Any:
            return read_dbp5l(folder, languages=tuple(chosen), name=folder.name)

        return folder_languages(folder), read
    from fedgraph.data.load import load_dataset
    from fedgraph.data.multilingual import MultilingualKG

    mkg = load_dataset(str(data), root)
    if not isinstance(mkg, MultilingualKG):
        raise ValueError(
            f"{what} {str(data)!r} is a {type(mkg).__name__}, not a "
            "multilingual KG (one KG per language, e.g. dbp-5l)"
        )
    return mkg.languages, lambda chosen: mkg


def _check_languages(
    languages: Sequence[str] | None, known: Sequence[str], data: str, what: str
) -> list[str]:
    chosen = list(known) if not languages else [str(x) for x in languages]
    unknown = [x for x in chosen if x not in known]
    if unknown or len(set(chosen)) != len(chosen) or not chosen:
        raise ValueError(
            f"{what} must name distinct languages of {data} (it has "
            f"{list(known)}; got {chosen})"
        )
    return chosen


__all__ = [
    "folder_languages",
    "dataset_languages",
    "load_language_graphs",
    "build_text_strategy",
    "default_encoder",
    "MKGCSettings",
    "mkgc_algorithms",
    "load_text_model",
    "compact_relations",
    "build_fedmkgc_clients",
    "build_fedmkgc",
    "run_fedmkgc",
]
