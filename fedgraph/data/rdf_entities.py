r"""The RDF entity-classification benchmarks of Ristoski et al. (2016): AIFB,
MUTAG, BGS and AM, as R-GCN codebases distribute them (PyG ``Entities``, DGL).

Each dataset is an :class:`RDFSpec` (archive, URL, checksum, label columns and
the node-category rule) and :func:`load_rdf` turns its archive into an
:class:`~fedgraph.data.rdf_graph.RDFGraph`, caching the result under
``get_cache_dir() / "rdf"`` keyed by the archive's SHA-256.

Node categories follow DGL's ``dgl.data.rdf`` loaders, made a property of the
node (DGL decides per statement and keys nodes by ``category/id``, which
duplicates some URIs); nodes DGL drops get an extra category that is not in
:attr:`RDFSpec.core` (see ``docs/rdf.md``):

* AIFB: ``http://www.aifb.uni-karlsruhe.de/<Category>/<view>/<id>`` →
  ``<Category>`` (``Personen``, ``Publikationen``, …); literals → ``_Literal``;
  blank nodes → ``_BNode`` and other URIs (ontology terms, incl. the one
  ``…/WBS/dvr/owltools/merge/type`` property) → ``SCHEMA`` (DGL drops both).
* MUTAG: ``carcinogenesis#d…`` → ``d`` (compounds and atoms), ``#bond…`` →
  ``bond``; literals → ``_Literal``; another URI that is the object of a
  ``carcinogenesis#`` predicate → that predicate's name (``hasStructure``),
  else ``SCHEMA``; blank nodes → ``_BNode`` (dropped by DGL).
* BGS: ``http://data.bgs.ac.uk/(ref|id)/<Major>/<Sub>/<instance>`` →
  ``<Major>/<Sub>``; literals, blank nodes, other URIs and
  ``ref/CurrentStatus`` terms → ``_Literal``/``_BNode``/``SCHEMA`` (dropped).
* AM: ``http://purl.org/collections/nl/am/<type>-<id>`` → ``<type>``, other
  ``am/`` terms → ``TYPE``; blank nodes → ``_BNode``; literals and other URIs
  → ``_Literal``/``SCHEMA`` (dropped).
"""

from __future__ import annotations

import hashlib
import os
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import Tensor

from fedgraph.data.rdf_graph import RDFGraph
from fedgraph.data.rdf_parse import (
    index_triples,
    parse_ntriples,
    read_archive,
    read_labels,
)
from fedgraph.data.root import get_cache_dir, get_data_root

LOADER_VERSION = 2  # bump whenever a category rule or the parsing changes
Categorizer = Callable[[Sequence[str], Tensor, Tensor, Sequence[str]], list[str]]


def _basic(name: str) -> str | None:
    if name.startswith('"'):
        return "_Literal"
    if name.startswith("_:"):
        return "_BNode"
    return None


def categorize_aifb(
    names: Sequence[str],
    edge_index: Tensor,
    edge_type: Tensor,
    relations: Sequence[str],
) -> list[str]:
    prefix = "<http://www.aifb.uni-karlsruhe.de/"

    def one(n: str) -> str:
        if (c := _basic(n)) is not None:
            return c
        parts = n[1:-1].split("/")
        if n.startswith(prefix) and len(parts) == 6:  # <Category>/<view>/<id>
            return parts[3]
        return "SCHEMA"

    return [one(n) for n in names]


def categorize_mutag(
    names: Sequence[str],
    edge_index: Tensor,
    edge_type: Tensor,
    relations: Sequence[str],
) -> list[str]:
    ns = "http://dl-learner.org/carcinogenesis#"
    d_re, bond_re = re.compile(r"d[0-9]"), re.compile(r"bond[0-9]")
    # Objects of namespace predicates take the predicate's name (the smallest
    # such name when there are several): one pass over the edges, vectorised.
    in_ns = torch.tensor([r.startswith(ns) for r in relations], dtype=torch.bool)
    mask = in_ns[edge_type]
    by_obj = torch.full((len(names),), len(relations), dtype=torch.long)
    by_obj.scatter_reduce_(0, edge_index[1, mask], edge_type[mask], reduce="amin")
    by_obj = by_obj.tolist()

    def one(i: int, n: str) -> str:
        if (c := _basic(n)) is not None:
            return c
        local = n[1 + len(ns) : -1] if n.startswith("<" + ns) else None
        if local is not None and d_re.match(local):
            return "d"
        if local is not None and bond_re.match(local):
            return "bond"
        if by_obj[i] < len(relations):
            return relations[by_obj[i]][len(ns) :]
        return "SCHEMA"

    return [one(i, n) for i, n in enumerate(names)]


def categorize_bgs(
    names: Sequence[str],
    edge_index: Tensor,
    edge_type: Tensor,
    relations: Sequence[str],
) -> list[str]:
    def one(n: str) -> str:
        if (c := _basic(n)) is not None:
            return c
        if n.startswith("<http://data.bgs.ac.uk/") and not n.startswith(
            "<http://data.bgs.ac.uk/ref/CurrentStatus"
        ):
            sp = n[1:-1].split("/")
            if len(sp) == 7:
                return f"{sp[4]}/{sp[5]}"
        return "SCHEMA"

    return [one(n) for n in names]


def categorize_am(
    names: Sequence[str],
    edge_index: Tensor,
    edge_type: Tensor,
    relations: Sequence[str],
) -> list[str]:
    prefix = "<http://purl.org/collections/nl/am/"

    def one(n: str) -> str:
        if (c := _basic(n)) is not None:
            return c
        if n.startswith(prefix):
            parts = n[len(prefix) : -1].split("-")
            return parts[0] if len(parts) == 2 else "TYPE"
        return "SCHEMA"

    return [one(n) for n in names]


@dataclass(frozen=True)
class RDFSpec:
    r"""One registered RDF benchmark.

    Args:
        name (str): registry name (``"aifb"``).
        url (str): public download URL of the archive (PyG ``Entities``').
        sha256 (str or None): SHA-256 of the archive (``None``: not checked).
        categorize (Callable): the node-category rule.
        non_core (tuple[str, ...]): categories DGL's loader drops.
        entity_column (int): column of the entity URI in the label files.
        label_column (int): column of the class label.
    """

    name: str
    url: str
    sha256: str | None
    categorize: Categorizer
    non_core: tuple[str, ...] = ("_BNode", "SCHEMA")
    entity_column: int = 0
    label_column: int = -1
    stats: dict = field(default_factory=dict)

    @property
    def path(self) -> str:
        r"""Path of the archive under the data root."""
        return f"rdf/{self.name}.tgz"


_URL = "https://data.dgl.ai/dataset/{}.tgz"  # as torch_geometric.datasets.Entities
RDF_DATASETS: dict[str, RDFSpec] = {
    "aifb": RDFSpec(
        "aifb",
        _URL.format("aifb"),
        "11823f0265dbc4928c055303f6dd5520935c3b9f19de402928c921da37482690",
        categorize_aifb,
        stats={"nodes": 8285, "triples": 29043, "predicates": 45, "classes": 4},
    ),
    "mutag": RDFSpec(
        "mutag",
        _URL.format("mutag"),
        "53cc2fbbc278d0d70c00353c6885e7b19d0ee8f5bd5d1da8c84ff9d8aee01c2a",
        categorize_mutag,
        non_core=("_BNode",),
        stats={"nodes": 23644, "triples": 74227, "predicates": 23, "classes": 2},
    ),
    "bgs": RDFSpec(
        "bgs",
        _URL.format("bgs"),
        None,
        categorize_bgs,
        non_core=("_BNode", "_Literal", "SCHEMA"),
        entity_column=1,
        stats={"nodes": 333845, "triples": 916199, "predicates": 103, "classes": 2},
    ),
    "am": RDFSpec(
        "am",
        _URL.format("am"),
        None,
        categorize_am,
        non_core=("_Literal", "SCHEMA"),
        stats={"nodes": 1666764, "triples": 5988321, "predicates": 133, "classes": 11},
    ),
}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def build_rdf_graph(archive: str | os.PathLike[str], spec: RDFSpec) -> RDFGraph:
    r"""Parses ``archive`` (R-GCN layout) into an :class:`RDFGraph` following
    ``spec``. Train/test masks come from ``trainingSet.tsv``/``testSet.tsv``;
    ``valid_mask`` is empty (see :meth:`RDFGraph.with_valid_split`).

    Raises:
        ValueError: on a truncated archive, malformed N-Triples, a label file
            naming an entity absent from the graph, or an entity labelled twice
            (each naming the file and line).
    """
    raw = read_archive(archive)
    graph_name = f"{archive}:{raw['graph_name'].decode()}"
    triples = parse_ntriples(raw["graph"], graph_name)
    edge_index, edge_type, names, relations, dup = index_triples(triples)
    if dup:
        warnings.warn(
            f"'{graph_name}': dropped {dup} duplicate statements", stacklevel=2
        )
    cats = spec.categorize(names, edge_index, edge_type, relations)
    type_names = sorted(set(cats))
    type_id = {c: i for i, c in enumerate(type_names)}
    node_type = torch.tensor([type_id[c] for c in cats], dtype=torch.long)
    node_id = {n: i for i, n in enumerate(names)}
    split_ids: dict[str, list[int]] = {}
    split_labels: dict[str, list[str]] = {}
    for key, fname in (("train_mask", "trainingSet.tsv"), ("test_mask", "testSet.tsv")):
        split_ids[key], split_labels[key] = read_labels(
            raw[fname],
            f"{archive}:{fname}",
            node_id,
            entity_column=spec.entity_column,
            label_column=spec.label_column,
        )
    class_names = sorted(
        set(split_labels["train_mask"]) | set(split_labels["test_mask"])
    )
    class_id = {c: i for i, c in enumerate(class_names)}
    y = torch.full((len(names),), -1, dtype=torch.long)
    masks = {}
    for key, ids in split_ids.items():
        idx = torch.tensor(ids, dtype=torch.long)
        if bool((y[idx] >= 0).any()) or idx.unique().numel() != idx.numel():
            raise ValueError(f"'{archive}': an entity of {key} is labelled twice")
        y[idx] = torch.tensor(
            [class_id[c] for c in split_labels[key]], dtype=torch.long
        )
        masks[key] = torch.zeros(len(names), dtype=torch.bool)
        masks[key][idx] = True
    core = [c for c in type_names if c not in spec.non_core]
    return RDFGraph(
        edge_index,
        edge_type,
        node_type,
        y,
        masks,
        names,
        relations,
        type_names,
        class_names,
        core_types=core,
        name=spec.name,
    )


def load_rdf(
    name: str,
    root: str | os.PathLike[str] | None = None,
    *,
    valid_ratio: float = 0.0,
    seed: int = 0,
    force_reload: bool = False,
) -> RDFGraph:
    r"""Loads a registered RDF benchmark (``"aifb"``, ``"mutag"``, ``"bgs"``,
    ``"am"``) from ``root / "rdf/NAME.tgz"`` (``root``: the argument, else
    ``FEDGRAPH_DATA``, else the user cache).

    Args:
        name (str): dataset name (case-insensitive).
        root (str or Path, optional): the data root. (default: :obj:`None`)
        valid_ratio (float, optional): share of the training nodes moved to a
            seeded validation split. (default: :obj:`0.0`)
        seed (int, optional): seed of the validation split. (default: :obj:`0`)
        force_reload (bool, optional): ignore the processed cache.
            (default: :obj:`False`)

    Raises:
        ValueError: for an unknown name, a checksum mismatch or bad raw data.
        FileNotFoundError: if the archive is absent (says where to get it).
    """
    key = name.lower().replace("-", "").replace("_", "")
    if key not in RDF_DATASETS:
        raise ValueError(
            f"Unknown RDF dataset `name`='{name}' (choices: {sorted(RDF_DATASETS)})"
        )
    spec = RDF_DATASETS[key]
    archive = get_data_root(root) / spec.path
    if not archive.is_file():
        raise FileNotFoundError(
            f"RDF dataset '{spec.name}' not found at {archive}: download it from "
            f"{spec.url} to that path, or point FEDGRAPH_DATA (or `root=`) at a "
            "folder holding `rdf/`, e.g. a copy of the benchmark data folder."
        )
    digest = _sha256(archive)
    if spec.sha256 is not None and digest != spec.sha256:
        raise ValueError(
            f"Archive '{archive}' has SHA-256 {digest}, expected {spec.sha256}: "
            "the file is corrupt or a different release"
        )
    cache = get_cache_dir() / "rdf" / f"{spec.name}-v{LOADER_VERSION}-{digest[:16]}.pt"
    graph = None
    if cache.is_file() and not force_reload:
        try:
            graph = RDFGraph.load(cache)
        except Exception as exc:  # noqa: BLE001 - a corrupt cache is rebuilt
            warnings.warn(f"Ignoring unreadable cache {cache} ({exc})", stacklevel=2)
    if graph is None:
        graph = build_rdf_graph(archive, spec)
        try:
            graph.save(cache)
        except OSError as exc:
            warnings.warn(f"Could not write the cache {cache} ({exc})", stacklevel=2)
    if valid_ratio:
        graph = graph.with_valid_split(valid_ratio, seed)
    return graph


__all__ = ["RDFSpec", "RDF_DATASETS", "build_rdf_graph", "load_rdf"]
