r"""Saving and loading partitions: a documented, checksummed folder layout.

Layout (``kind = "kg"``; every text file is UTF-8, ``\n``-terminated)::

    DIR/
      META.json          format, format_version, kind, fedgraph_version,
                         partitioner, params, seed, source, source_checksum,
                         num_clients, num_entities, num_relations, clients
                         (per client: dir, splits {name: n}, num_entities,
                         num_relations) and files {relative path: sha256}
      entities.txt       line i = name of global entity i   (when known)
      relations.txt      line i = name of global relation i (when known)
      ids/client0/
        entity_ids.txt   line i = global id of local entity i
        relation_ids.txt line i = global id of local relation i
      client0/           one organisation's KG, complete by itself:
        META.json        format "fedgraph.client", format_version, client,
                         num_clients, source, num_entities, num_relations,
                         splits {name: n}, files {name: sha256}
        entities.txt     line i = name of local entity i
        relations.txt    line i = name of local relation i
        train.txt        head<TAB>relation<TAB>tail, local ids
        valid.txt, test.txt, … (one file per split, in META order)
      client1/ …

A client folder holds no global id and no global vocabulary: its own names
(the dataset's names; the decimal ids of a dataset without names, which are
then its names) and its triples in its own ids. One organisation's node reads
it alone (:func:`load_client_folder`) and aligns with the others by keyed
hashes of those names. The top level (``META.json``, the global name lists
and ``ids/``) is the simulation's view: it fixes the global id order, so a
loaded partition has the shards and ids it was saved with.

A folder is written to a temporary sibling and renamed into place, so a
crash never leaves a half-written partition under ``DIR``. Loading checks the
format and version fields, that the folder holds exactly the ``num_clients``
client folders listed (no more, no fewer), that every listed file exists,
each file's SHA-256, that each id map is one-to-one, and the parsed sizes
against ``META.json``; any mismatch raises :class:`PartitionFormatError`
naming the file (and line). A folder of an older ``format_version`` is
refused with the command that writes it again.

Other shard kinds (e.g. RDF shards) plug in with :func:`register_kind`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from fedgraph.data.io import (
    DataFormatError,
    atomic_write_json,
    first_repeat,
    parse_ints,
    read_text,
    split_columns,
)
from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.data.shard import FederatedKG, KGShard
from fedgraph.guard import refusal, unlisted
from fedgraph.version import __version__

FORMAT = "fedgraph.partition"
FORMAT_VERSION = 2
#: ``format`` of a client folder's own ``META.json``.
CLIENT_FORMAT = "fedgraph.client"
META = "META.json"
CLIENT_DIR = re.compile(r"client[0-9]+")


class PartitionFormatError(ValueError):
    r"""A partition folder is missing, partial, corrupt or of another version."""


@dataclass(frozen=True)
class PartitionKind:
    r"""How one kind of federated dataset is written and read.

    Args:
        name (str): the ``kind`` field of ``META.json``.
        cls (type): the federated dataset type (e.g. :class:`FederatedKG`).
        write (Callable): ``write(obj, folder) -> dict`` writes the payload
            files into ``folder`` and returns kind-specific META fields.
        read (Callable): ``read(folder, meta) -> obj`` parses them back.
    """

    name: str
    cls: type
    write: Callable[[Any, Path], dict[str, Any]]
    read: Callable[[Path, dict[str, Any]], Any]


KINDS: dict[str, PartitionKind] = {}


def register_kind(kind: PartitionKind) -> None:
    r"""Adds a kind to the registry (:data:`KINDS`)."""
    KINDS[kind.name] = kind


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return "sha256:" + h.hexdigest()


def write_ids(path: Path, ids: torch.Tensor) -> None:
    text = "\n".join(map(str, ids.tolist()))
    path.write_text(text + "\n" if text else "", encoding="utf-8")


def write_triples(path: Path, triples: torch.Tensor) -> None:
    r"""Writes ``[n, 3]`` ids as ``h<TAB>r<TAB>t`` lines."""
    if triples.size(0) == 0:
        path.write_text("", encoding="utf-8")
        return
    cols = triples.numpy().astype(str)  # vectorised formatting, no row loop
    tab = np.char.add(np.char.add(cols[:, 0], "\t"), cols[:, 1])
    tab = np.char.add(np.char.add(tab, "\t"), cols[:, 2])
    path.write_text("\n".join(tab.tolist()) + "\n", encoding="utf-8")


def read_int_table(path: Path, columns: int) -> torch.Tensor:
    r"""Reads ``columns`` whitespace-separated integers per line as an
    ``[n, columns]`` tensor (the text rules of :mod:`fedgraph.data.io`;
    errors name the file and line)."""
    try:
        text = read_text(path, allow_empty=True)
        if not text.strip():
            return torch.empty((0, columns), dtype=torch.long)
        cols = split_columns(text, columns, path=path, sep=None)
        arr = np.stack([parse_ints(cols[:, j], path=path) for j in range(columns)])
    except DataFormatError as exc:
        raise PartitionFormatError(str(exc)) from None
    return torch.from_numpy(np.ascontiguousarray(arr.T))


def read_id_map(path: Path) -> torch.Tensor:
    r"""Reads an id map (line ``i`` = the global id of local id ``i``); one
    global id listed twice raises :class:`PartitionFormatError` naming both
    lines (a map must be one-to-one)."""
    ids = read_int_table(path, 1).view(-1)
    if (pair := first_repeat(ids.numpy())) is not None:
        i, j = pair
        raise PartitionFormatError(
            f"{path}, line {j + 1}: global id {int(ids[j])} is listed twice "
            f"(also on line {i + 1}); an id map must be one-to-one"
        )
    return ids


# ----------------------------------------------------------------- kg kind
def _check_names(names: list[str] | None, what: str) -> None:
    if names is not None and any("\n" in n or "\r" in n for n in names):
        raise ValueError(
            f"`{what}` cannot be saved one per line: a name holds a newline"
        )


def _write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(f"{n}\n" for n in lines), encoding="utf-8")


def _local_names(names: list[str] | None, ids: torch.Tensor) -> list[str]:
    r"""The names of a shard's entities (or relations) in local order: the
    dataset's names, or the decimal ids of a dataset without names."""
    if names is None:
        return [str(i) for i in ids.tolist()]
    return [names[i] for i in ids.tolist()]


def write_client_folder(shard: KGShard, fed: FederatedKG, cdir: Path) -> dict[str, Any]:
    r"""Writes one client folder (its names in local order, its triples in
    local ids and its ``META.json``) and returns its entry of the partition's
    ``clients`` list."""
    cdir.mkdir(parents=True)
    _write_lines(
        cdir / "entities.txt", _local_names(fed.entity_names, shard.entity_ids)
    )
    _write_lines(
        cdir / "relations.txt", _local_names(fed.relation_names, shard.relation_ids)
    )
    splits = {s: shard.graph.num_triples(s) for s in shard.graph.split_names}
    for split in splits:
        write_triples(cdir / f"{split}.txt", shard.graph.triples(split))
    entry = {
        "dir": cdir.name,
        "num_entities": shard.num_entities,
        "num_relations": shard.num_relations,
        "splits": splits,
    }
    own = {k: v for k, v in entry.items() if k != "dir"}
    write_client_meta(cdir, shard.client_id, fed.num_clients, fed.meta, **own)
    return entry


def write_client_meta(
    cdir: Path, client: int, num_clients: int, meta: dict[str, Any], **fields: Any
) -> None:
    r"""Writes ``cdir/META.json`` (atomically, last) of a client folder whose
    other files are written: the client format and version, ``client`` of
    ``num_clients``, the partition's ``source`` (from its ``meta``), the
    kind's own ``fields`` and the checksum of every other file of ``cdir``."""
    own = {
        **fields,
        "format": CLIENT_FORMAT,
        "format_version": FORMAT_VERSION,
        "client": client,
        "num_clients": num_clients,
        "source": str(meta.get("source", "")),
        "files": {
            p.name: sha256_file(p) for p in sorted(cdir.iterdir()) if p.name != META
        },
    }
    atomic_write_json(cdir / META, own, indent=2, sort_keys=True)


def _write_kg(fed: FederatedKG, folder: Path) -> dict[str, Any]:
    _check_names(fed.entity_names, "entity_names")
    _check_names(fed.relation_names, "relation_names")
    if fed.entity_names is not None:
        _write_lines(folder / "entities.txt", fed.entity_names)
    if fed.relation_names is not None:
        _write_lines(folder / "relations.txt", fed.relation_names)
    clients = []
    for i, shard in enumerate(fed.shards):
        ids = folder / "ids" / f"client{i}"
        ids.mkdir(parents=True)
        write_ids(ids / "entity_ids.txt", shard.entity_ids)
        write_ids(ids / "relation_ids.txt", shard.relation_ids)
        clients.append(write_client_folder(shard, fed, folder / f"client{i}"))
    return {
        "num_entities": fed.num_entities,
        "num_relations": fed.num_relations,
        "clients": clients,
    }


def _read_names(path: Path, expected: int) -> list[str] | None:
    if not path.exists():
        return None
    names = path.read_text(encoding="utf-8").split("\n")[:-1]
    if len(names) != expected:
        raise PartitionFormatError(
            f"{path}: expected {expected} names (got {len(names)})"
        )
    return names


def _read_splits(cdir: Path, splits: dict[str, Any]) -> dict[str, torch.Tensor]:
    out = {}
    for split, n in splits.items():
        t = read_int_table(cdir / f"{split}.txt", 3)
        if t.size(0) != n:
            raise PartitionFormatError(
                f"{cdir / f'{split}.txt'}: {t.size(0)} triples but META.json says {n}"
            )
        out[split] = t
    return out


def _client_graph(cdir: Path, c: dict[str, Any], name: str) -> KnowledgeGraph:
    r"""The client folder's graph in its local ids, with its own names."""
    num_e, num_r = int(c["num_entities"]), int(c["num_relations"])
    ent = _read_names(cdir / "entities.txt", num_e)
    rel = _read_names(cdir / "relations.txt", num_r)
    if ent is None or rel is None:
        missing = "entities.txt" if ent is None else "relations.txt"
        raise PartitionFormatError(f"`{cdir}`: file `{missing}` is missing")
    try:
        return KnowledgeGraph(
            _read_splits(cdir, c["splits"]),
            num_e,
            num_r,
            entity_names=ent,
            relation_names=rel,
            name=name,
        )
    except ValueError as exc:
        raise PartitionFormatError(f"{cdir}: {exc}") from exc


def _read_shard(folder: Path, meta: dict[str, Any], i: int) -> KGShard:
    c = meta["clients"][i]
    cdir, ids = folder / c["dir"], folder / "ids" / c["dir"]
    ent = read_id_map(ids / "entity_ids.txt")
    rel = read_id_map(ids / "relation_ids.txt")
    if ent.numel() != c["num_entities"] or rel.numel() != c["num_relations"]:
        raise PartitionFormatError(
            f"{ids}: id maps hold {ent.numel()} entities / {rel.numel()} "
            f"relations but META.json says {c['num_entities']} / {c['num_relations']}"
        )
    num_e, num_r = int(meta["num_entities"]), int(meta["num_relations"])
    if (ent.numel() and int(ent.max()) >= num_e) or (
        rel.numel() and int(rel.max()) >= num_r
    ):
        raise PartitionFormatError(f"{ids}: a global id exceeds the vocabulary")
    names = meta["_names"]
    graph = _client_graph(cdir, c, f"{meta.get('source', '')}/client{i}")
    for file, local, glob, gids in (
        ("entities.txt", graph.entity_names, names[0], ent),
        ("relations.txt", graph.relation_names, names[1], rel),
    ):
        if local != _local_names(glob, gids):
            raise PartitionFormatError(
                f"{cdir / file}: the names disagree with the partition's "
                f"{file} and ids/{c['dir']}/"
            )
    if names[0] is None:  # a dataset without names: its names are its ids
        graph.entity_names = None
    if names[1] is None:
        graph.relation_names = None
    try:
        return KGShard(i, graph, ent, rel)
    except ValueError as exc:
        raise PartitionFormatError(f"{cdir}: {exc}") from exc


def _read_kg(folder: Path, meta: dict[str, Any]) -> FederatedKG:
    num_e, num_r = int(meta["num_entities"]), int(meta["num_relations"])
    ent_names = _read_names(folder / "entities.txt", num_e)
    rel_names = _read_names(folder / "relations.txt", num_r)
    meta = {**meta, "_names": (ent_names, rel_names)}
    shards = [_read_shard(folder, meta, i) for i in range(len(meta["clients"]))]
    keep = (
        "num_entities",
        "num_relations",
        "clients",
        "files",
        "format",
        "format_version",
        "kind",
        "_names",
    )
    return FederatedKG(
        shards,
        num_entities=num_e,
        num_relations=num_r,
        entity_names=ent_names,
        relation_names=rel_names,
        meta={k: v for k, v in meta.items() if k not in keep},
    )


register_kind(PartitionKind("kg", FederatedKG, _write_kg, _read_kg))


# ------------------------------------------------------------- public API
def kind_of(obj: Any) -> PartitionKind:
    for kind in KINDS.values():
        if isinstance(obj, kind.cls):
            return kind
    raise TypeError(
        f"Cannot save a {type(obj).__name__}: registered kinds are {sorted(KINDS)}"
    )


def check_replaceable(path: str | os.PathLike[str]) -> None:
    r"""Raises :class:`ValueError` unless ``path`` is a partition folder that
    fedgraph wrote and holds nothing else: a ``META.json`` of this format
    listing every file in the folder. ``save_partition(overwrite=True)``
    replaces nothing else (a training run, someone's files)."""
    path = Path(path)

    def refuse(why: str) -> ValueError:  # the writers' rule (fedgraph.guard)
        return refusal(path, why, what="is not a partition written by fedgraph")

    if not path.is_dir():
        raise refuse("not a folder")
    try:
        meta = json.loads((path / META).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise refuse(f"no {META}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise refuse(f"unreadable {META}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise refuse(f"{META} is not fedgraph's")
    # META.json is the partition's ledger: it lists every file
    others = unlisted(
        (p.relative_to(path).as_posix() for p in path.rglob("*") if not p.is_dir()),
        [*(meta.get("files") or {}), META],
    )
    if others:
        shown = ", ".join(others[:3]) + (" …" if len(others) > 3 else "")
        raise refuse(f"it also holds {shown}")


def save_partition(
    fed: Any, path: str | os.PathLike[str], *, overwrite: bool = False
) -> Path:
    r"""Writes a federated dataset to ``path`` atomically (see module doc).

    Args:
        fed (FederatedKG): the partition (or another registered kind).
        path (str or PathLike): the target folder.
        overwrite (bool, optional): replace an existing partition folder
            that fedgraph wrote (:func:`check_replaceable`; any other folder
            is refused). (default: :obj:`False`)
    """
    path = Path(path)
    if path.exists() and not overwrite:
        raise FileExistsError(f"`{path}` exists (pass `overwrite=True` to replace it)")
    if path.exists():
        check_replaceable(path)
    kind = kind_of(fed)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        meta = dict(getattr(fed, "meta", {}) or {})
        meta.update(kind.write(fed, tmp))
        meta.setdefault("fedgraph_version", __version__)
        meta.update(
            format=FORMAT,
            format_version=FORMAT_VERSION,
            kind=kind.name,
            num_clients=len(meta.get("clients", [])),
            files={
                p.relative_to(tmp).as_posix(): sha256_file(p)
                for p in sorted(tmp.rglob("*"))
                if p.is_file()
            },
        )
        text = json.dumps(meta, indent=2, sort_keys=True) + "\n"
        (tmp / META).write_text(text, encoding="utf-8")
        if path.exists():
            trash = path.with_name(f".{path.name}.old-{os.getpid()}")
            os.replace(path, trash)
            os.replace(tmp, path)
            shutil.rmtree(trash)
        else:
            os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return path


def check_client_folders(path: Path, meta: dict[str, Any]) -> None:
    r"""Every client folder ``META.json`` lists exists, and no other
    ``clientK/`` folder does: the folder holds exactly ``num_clients``
    clients."""
    listed = {c["dir"] for c in meta["clients"]}
    for name in sorted(listed):
        if not (path / name).is_dir():
            raise PartitionFormatError(f"`{path}`: client folder `{name}` is missing")
    extra = sorted(
        p.name
        for p in path.iterdir()
        if p.is_dir() and CLIENT_DIR.fullmatch(p.name) and p.name not in listed
    )
    if extra:
        raise PartitionFormatError(
            f"`{path}`: {META} lists {meta['num_clients']} clients "
            f"(`num_clients`) but the folder also holds "
            f"{', '.join(e + '/' for e in extra)}; "
            "a partition is only read whole, as it was saved"
        )


def check_version(meta: dict[str, Any], meta_path: Path) -> None:
    r"""Refuses a ``META.json`` of another ``format_version``; an older
    partition is named with the command that writes it again."""
    got = meta.get("format_version")
    if got == FORMAT_VERSION:
        return
    hint = ""
    if isinstance(got, int) and got < FORMAT_VERSION:
        source = meta.get("source") or "DATASET"
        hint = (
            f"; write it again with `fedgraph partition {source} --strategy "
            f"{meta.get('partitioner', 'S')} --clients {meta.get('num_clients', 'K')} "
            f"--seed {meta.get('seed', 0)} --out {meta_path.parent} --overwrite`"
        )
    raise PartitionFormatError(
        f"{meta_path}: unsupported `format_version` "
        f"(got {got!r}, this fedgraph reads {FORMAT_VERSION}){hint}"
    )


def read_meta(path: str | os.PathLike[str]) -> dict[str, Any]:
    r"""Reads and validates ``META.json`` and every file it lists."""
    path = Path(path)
    if not path.is_dir():
        raise FileNotFoundError(f"Partition folder `{path}` not found")
    meta_path = path / META
    if not meta_path.exists():
        raise PartitionFormatError(
            f"`{path}` is not a fedgraph partition: {META} is missing "
            "(a partial or interrupted write?)"
        )
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise PartitionFormatError(f"{meta_path}: corrupt JSON ({exc})") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise PartitionFormatError(
            f"{meta_path}: `format` must be '{FORMAT}' "
            f"(got {meta.get('format') if isinstance(meta, dict) else meta!r})"
        )
    check_version(meta, meta_path)
    for key in ("kind", "clients", "files", "num_clients"):
        if key not in meta:
            raise PartitionFormatError(f"{meta_path}: missing field `{key}`")
    if meta["kind"] not in KINDS:
        raise PartitionFormatError(
            f"{meta_path}: unknown `kind` (got {meta['kind']!r}, known {sorted(KINDS)})"
        )
    if len(meta["clients"]) != meta["num_clients"]:
        raise PartitionFormatError(
            f"{meta_path}: `num_clients`={meta['num_clients']} but "
            f"{len(meta['clients'])} clients are listed"
        )
    check_client_folders(path, meta)
    check_files(path, meta["files"])
    return meta


def check_files(path: Path, files: dict[str, str]) -> None:
    r"""Raises :class:`PartitionFormatError` naming the first file of
    ``files`` (relative path → SHA-256) that is missing under ``path`` or
    whose checksum differs."""
    for name, digest in sorted(files.items()):
        f = path / name
        if not f.is_file():
            raise PartitionFormatError(f"`{path}`: file `{name}` is missing")
        if sha256_file(f) != digest:
            raise PartitionFormatError(
                f"`{f}`: checksum mismatch (truncated or modified since it was saved)"
            )


def read_client_meta(path: str | os.PathLike[str]) -> dict[str, Any]:
    r"""Reads and validates a lone client folder's ``META.json`` and every
    file it lists (checksums), without the partition around it."""
    path = Path(path)
    if not path.is_dir():
        raise FileNotFoundError(f"Client folder `{path}` not found")
    meta_path = path / META
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PartitionFormatError(
            f"`{path}` is not a fedgraph client folder: {META} is missing"
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise PartitionFormatError(f"{meta_path}: corrupt JSON ({exc})") from exc
    if not isinstance(meta, dict) or meta.get("format") != CLIENT_FORMAT:
        raise PartitionFormatError(
            f"{meta_path}: `format` must be '{CLIENT_FORMAT}' (got "
            f"{meta.get('format') if isinstance(meta, dict) else meta!r})"
        )
    check_version(meta, meta_path)
    for key in ("client", "num_clients", "splits", "files"):
        if key not in meta:
            raise PartitionFormatError(f"{meta_path}: missing field `{key}`")
    check_files(path, meta["files"])
    return meta


def load_client_folder(path: str | os.PathLike[str]) -> KGShard:
    r"""One organisation's client folder, read alone: its shard in its own
    ids with its own names (``entity_ids`` and ``relation_ids`` map each
    local id to itself: the client knows no global id; keyed hashes of the
    names align it with the others). Validated by the folder's own
    ``META.json`` (format, version, checksums, sizes); the partition around
    it is never opened.

    Args:
        path (str or PathLike): the client folder (``DIR/clientK`` of a
            partition, or a copy of it).
    """
    path = Path(path)
    meta = read_client_meta(path)
    cid = meta["client"]
    graph = _client_graph(path, meta, f"{meta.get('source', '')}/client{cid}")
    ent = torch.arange(graph.num_entities)
    try:
        return KGShard(int(cid), graph, ent, torch.arange(graph.num_relations))
    except ValueError as exc:
        raise PartitionFormatError(f"{path}: {exc}") from exc


def load_partition(path: str | os.PathLike[str]) -> Any:
    r"""Loads a folder written by :func:`save_partition`, validating it."""
    path = Path(path)
    meta = read_meta(path)
    try:
        return KINDS[meta["kind"]].read(path, meta)
    except KeyError as exc:
        raise PartitionFormatError(f"{path / META}: missing field {exc}") from exc


__all__ = [
    "save_partition",
    "load_client_folder",
    "read_client_meta",
    "write_client_meta",
    "check_replaceable",
    "load_partition",
    "read_meta",
    "register_kind",
    "PartitionKind",
    "PartitionFormatError",
    "KINDS",
    "FORMAT_VERSION",
]
