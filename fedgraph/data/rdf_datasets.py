r"""AIFB, MUTAG, BGS and AM as registered datasets (``fedgraph datasets``,
:func:`~fedgraph.data.load_dataset`), wrapping :mod:`fedgraph.data.rdf_entities`.

The archive's pinned SHA-256 is checked every time a dataset object is made
(``fedgraph info aifb``, ``load_dataset("aifb")``, ``fedgraph partition
aifb``), before the processed cache or the parser sees the file, exactly as
:func:`~fedgraph.data.rdf_entities.load_rdf` does: a local copy that is
another file under the pinned name is refused with a ``ValueError`` naming
both digests, never read."""

from __future__ import annotations

from typing import Any, ClassVar

from fedgraph.data.dataset import KGDataset, RemoteFile
from fedgraph.data.download import verify_sha256
from fedgraph.data.rdf_entities import RDF_DATASETS, RDFSpec, build_rdf_graph
from fedgraph.data.rdf_graph import RDFGraph


class _RDFDataset(KGDataset):
    kind = "rdf"
    folder = "rdf"
    spec: ClassVar[RDFSpec]

    def cache_key(self) -> str:
        r"""Checks each archive against its pinned SHA-256 (a mismatch raises
        :class:`~fedgraph.data.download.ChecksumError`), then keys the cache
        as :meth:`KGDataset.cache_key` does."""
        for f, path in zip(self.remote_files, self.raw_paths, strict=True):
            verify_sha256(path, f.sha256)
        return super().cache_key()

    def process(self) -> RDFGraph:
        return build_rdf_graph(self.raw_paths[0], self.spec)

    def serialize(self, obj: RDFGraph) -> Any:
        return obj.to_dict()

    def deserialize(self, state: Any) -> RDFGraph:
        return RDFGraph.from_dict(state)


def _remote(spec: RDFSpec) -> tuple[RemoteFile, ...]:
    # BGS and AM are not in the benchmark data folder, so their checksum is not pinned
    # here (None: the download is not verified).
    return (RemoteFile(f"{spec.name}.tgz", spec.url, spec.sha256),)  # type: ignore[arg-type]


class AIFB(_RDFDataset):
    r"""AIFB (Ristoski et al., 2016): the AIFB institute's people, groups,
    projects and publications; classify 176 people by research group.

    **STATS:** 8,285 nodes, 29,043 triples, 45 predicates, 4 classes,
    140 / 36 labelled (train / test).
    """

    name = "aifb"
    spec = RDF_DATASETS["aifb"]
    remote_files = _remote(spec)


class MUTAG(_RDFDataset):
    r"""MUTAG (Ristoski et al., 2016): molecules (DL-Learner carcinogenesis);
    classify 340 compounds as mutagenic or not.

    **STATS:** 23,644 nodes, 74,227 triples, 23 predicates, 2 classes,
    272 / 68 labelled (train / test).
    """

    name = "mutag"
    spec = RDF_DATASETS["mutag"]
    remote_files = _remote(spec)


class BGS(_RDFDataset):
    r"""BGS (Ristoski et al., 2016): British Geological Survey named rock
    units; 2 classes, 117 / 29 labelled. Not in the benchmark data folder: downloaded."""

    name = "bgs"
    spec = RDF_DATASETS["bgs"]
    remote_files = _remote(spec)


class AM(_RDFDataset):
    r"""AM (Ristoski et al., 2016): Amsterdam Museum artefacts; 11 classes,
    802 / 198 labelled. Not in the benchmark data folder: downloaded."""

    name = "am"
    spec = RDF_DATASETS["am"]
    remote_files = _remote(spec)


__all__ = ["AIFB", "MUTAG", "BGS", "AM"]
