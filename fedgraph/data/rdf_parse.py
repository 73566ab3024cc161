r"""Reading the RDF benchmark archives (R-GCN layout) with rdflib.

An archive ``NAME.tgz`` (flat) holds ``NAME_stripped.nt.gz`` (N-Triples with
the target predicate removed), ``trainingSet.tsv`` and ``testSet.tsv`` (a
header line, then ``entity … label`` rows). Terms are kept as their N-Triples
spelling (``<uri>``, ``"lexical"^^<datatype>`` / ``"lexical"@lang``,
``_:label``), so URIs, literals and blank nodes never collide and blank-node
labels are the file's own (rdflib would otherwise rename them at random).
Text is decoded with :func:`~fedgraph.data.io.decode_utf8`, the rule of every
other data file: a leading byte-order mark is dropped with a warning, and a
byte that is not UTF-8 is an error naming its own line.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import zlib
from collections.abc import Sequence
from pathlib import Path

import torch
from torch import Tensor

from fedgraph.data.io import decode_utf8

GRAPH_SUFFIX = "_stripped.nt.gz"
LABEL_FILES = ("trainingSet.tsv", "testSet.tsv")


def read_archive(path: str | Path) -> dict[str, bytes]:
    r"""Returns ``{"graph": decompressed N-Triples, "trainingSet.tsv": …,
    "testSet.tsv": …}`` from the archive at ``path``.

    Raises:
        ValueError: if the archive (or the graph inside it) is truncated or
            corrupt, or a required member is missing; the message names the
            archive and member.
    """
    path = Path(path)
    out: dict[str, bytes] = {}
    member = "?"
    try:
        with tarfile.open(path, "r:gz") as tar:
            for info in tar:
                base = Path(info.name).name
                if not info.isfile():
                    continue
                if base.endswith(GRAPH_SUFFIX) or base in LABEL_FILES:
                    member = base
                    f = tar.extractfile(info)
                    raw = f.read() if f is not None else b""
                    if base.endswith(GRAPH_SUFFIX):
                        out["graph"] = gzip.decompress(raw)
                        out["graph_name"] = base.encode()
                    else:
                        out[base] = raw
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise ValueError(
            f"Archive '{path}' is truncated or corrupt (while reading member "
            f"'{member}'): {exc}. Delete it so it can be downloaded again."
        ) from exc
    missing = [m for m in ("graph", *LABEL_FILES) if m not in out]
    if missing:
        names = [f"*{GRAPH_SUFFIX}" if m == "graph" else m for m in missing]
        raise ValueError(f"Archive '{path}' lacks the member(s) {names}")
    return out


class _KeepLabels(dict):
    # rdflib maps each blank-node label to a fresh random BNode unless the
    # context already knows it: answering with the label itself keeps the
    # file's labels, so ids are the same on every run.
    def get(self, key, default=None):  # type: ignore[override]
        return key


class _Sink:
    def __init__(self) -> None:
        self.triples: list[tuple[str, str, str]] = []

    def triple(self, s, p, o) -> None:  # rdflib sink protocol
        self.triples.append((s.n3(), str(p), o.n3()))


def parse_ntriples(data: bytes, filename: str) -> list[tuple[str, str, str]]:
    r"""Parses N-Triples with rdflib into ``(subject, predicate, object)``
    strings (N-Triples spelling for nodes, the URI for predicates).

    Raises:
        ValueError: on a malformed line or a byte that is not UTF-8, naming
            ``filename`` and the line.
    """
    from rdflib.plugins.parsers.ntriples import W3CNTriplesParser

    class _CountingParser(W3CNTriplesParser):
        lines = 0

        def readline(self):  # type: ignore[no-untyped-def]
            line = super().readline()
            self.lines += line is not None
            return line

    # Decoded whole first (not by a streaming reader), so a byte that is not
    # UTF-8 is reported on its own line, not on the line being parsed.
    text = decode_utf8(data, filename)
    sink = _Sink()
    context = _KeepLabels()
    parser = _CountingParser(sink, bnode_context=context)
    try:
        parser.parse(io.StringIO(text), bnode_context=context)
    except Exception as exc:  # rdflib's ParseError, …
        raise ValueError(
            f"Malformed N-Triples in '{filename}' line {max(parser.lines, 1)}: {exc}"
        ) from exc
    if not sink.triples:
        raise ValueError(f"'{filename}' holds no triples")
    return sink.triples


def index_triples(
    triples: Sequence[tuple[str, str, str]],
) -> tuple[Tensor, Tensor, list[str], list[str], int]:
    r"""Dense, sorted ids for nodes and predicates.

    Returns:
        ``(edge_index [2, E], edge_type [E], node_names, relation_names,
        num_duplicates)`` with edges sorted by ``(subject, predicate, object)``
        and duplicate statements removed (an RDF graph is a set).
    """
    subj, pred, obj = zip(*triples, strict=True)
    node_names = sorted(set(subj) | set(obj))
    relation_names = sorted(set(pred))
    node_id = {n: i for i, n in enumerate(node_names)}
    rel_id = {r: i for i, r in enumerate(relation_names)}
    t = torch.tensor(
        [
            list(map(node_id.__getitem__, subj)),
            list(map(rel_id.__getitem__, pred)),
            list(map(node_id.__getitem__, obj)),
        ],
        dtype=torch.long,
    ).t()
    t = torch.unique(t, dim=0)  # sorted rows, duplicates dropped
    num_dup = len(triples) - t.size(0)
    return (
        t[:, [0, 2]].t().contiguous(),
        t[:, 1].contiguous(),
        node_names,
        relation_names,
        num_dup,
    )


def read_labels(
    data: bytes,
    filename: str,
    node_id: dict[str, int],
    *,
    entity_column: int = 0,
    label_column: int = -1,
) -> tuple[list[int], list[str]]:
    r"""Reads a label file (header line, then tab-separated rows).

    Returns:
        ``(node ids, label strings)`` in file order.

    Raises:
        ValueError: on a short row or an entity absent from the graph, naming
            ``filename`` and the 1-based line number.
    """
    text = decode_utf8(data, filename)
    # split on LF only (``splitlines`` also breaks on U+2028, U+0085, …, which
    # would shift every line number after one)
    lines = text.replace("\r\n", "\n").split("\n")
    if not text.strip():
        raise ValueError(f"Label file '{filename}' is empty")
    ids: list[int] = []
    labels: list[str] = []
    width = len(lines[0].split("\t"))
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cols = line.rstrip("\r").split("\t")
        if len(cols) != width:
            raise ValueError(
                f"'{filename}' line {lineno}: expected {width} tab-separated "
                f"columns (got {len(cols)})"
            )
        key = f"<{cols[entity_column]}>"
        if key not in node_id:
            raise ValueError(
                f"'{filename}' line {lineno}: entity {cols[entity_column]} does "
                "not occur in the graph"
            )
        ids.append(node_id[key])
        labels.append(cols[label_column])
    return ids, labels


__all__ = ["read_archive", "parse_ntriples", "index_triples", "read_labels"]
