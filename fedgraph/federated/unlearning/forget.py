r"""Forgetting requests of federated unlearning (`FedLU
<https://arxiv.org/abs/2302.02069>`_ §4.2): which training triples each
client must forget.

A request is data: per client, a file of ``head<TAB>relation<TAB>tail``
names (FedLU's published ``clientK/unlearn.txt``), a folder of such files,
or an ``[n, 3]`` tensor of the client's *local* ids passed through the API.
Every triple must be one of the client's training triples; any other is
rejected with an error naming the file and line (or the row).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from fedgraph.data.io import read_text, split_columns
from fedgraph.data.shard import FederatedKG, KGShard


class ForgetRequestError(ValueError):
    r"""A forgetting request names a triple the client cannot forget."""


def _keys(triples: Tensor, num_entities: int, num_relations: int) -> Tensor:
    h, r, t = triples.long().unbind(1)
    return (h * num_relations + r) * num_entities + t


def check_forget_triples(
    triples: Tensor, shard: KGShard, *, source: str = "API request"
) -> Tensor:
    r"""Validates ``[n, 3]`` local-id triples against ``shard``'s training
    split and returns them deduplicated (first-seen order).

    Raises:
        ForgetRequestError: naming the first row (1-based) that is not a
            training triple of the client, or if ``triples`` is empty.
    """
    triples = torch.as_tensor(triples, dtype=torch.long)
    if triples.dim() != 2 or triples.size(1) != 3:
        raise ForgetRequestError(
            f"{source}: forgetting triples must be an [n, 3] tensor of "
            f"(head, relation, tail) ids (got shape {tuple(triples.shape)})"
        )
    if triples.size(0) == 0:
        raise ForgetRequestError(f"{source}: the forgetting set is empty")
    g = shard.graph
    bad_range = (
        (triples[:, [0, 2]] < 0).any(1)
        | (triples[:, [0, 2]] >= g.num_entities).any(1)
        | (triples[:, 1] < 0)
        | (triples[:, 1] >= g.num_relations)
    )
    keys = _keys(triples.clamp(min=0), g.num_entities, g.num_relations)
    train = _keys(g.triples("train"), g.num_entities, g.num_relations)
    missing = bad_range | ~torch.isin(keys, train)
    if bool(missing.any()):
        row = int(missing.nonzero()[0])
        raise ForgetRequestError(
            f"{source}, row {row + 1}: triple {tuple(triples[row].tolist())} is "
            f"not in client {shard.client_id}'s training set "
            f"({int(missing.sum())} of {triples.size(0)} requested triples are "
            "not); only training triples can be forgotten"
        )
    _, first = np.unique(keys.numpy(), return_index=True)
    return triples[torch.from_numpy(np.sort(first))]


def _local_name_index(shard: KGShard, fed: FederatedKG | None, what: str) -> dict:
    g = shard.graph
    local = g.entity_names if what == "entity" else g.relation_names
    if local is None and fed is not None:
        names = fed.entity_names if what == "entity" else fed.relation_names
        ids = shard.entity_ids if what == "entity" else shard.relation_ids
        if names is not None:
            local = [names[i] for i in ids.tolist()]
    if local is None:
        raise ForgetRequestError(
            f"Client {shard.client_id} has no {what} names, so a forgetting file "
            "of names cannot be mapped to its ids; pass local ids instead"
        )
    return {n: i for i, n in enumerate(local)}


def read_forget_file(
    path: str | os.PathLike[str], shard: KGShard, fed: FederatedKG | None = None
) -> Tensor:
    r"""Reads one client's forgetting file (``head<TAB>relation<TAB>tail``
    names) into validated ``[n, 3]`` local ids.

    Raises:
        ForgetRequestError: naming the file and line of the first triple that
            names an unknown entity/relation or is not a training triple.
    """
    path = Path(path)
    cols = split_columns(read_text(path), 3, path=path, sep=None)
    ent = _local_name_index(shard, fed, "entity")
    rel = _local_name_index(shard, fed, "relation")
    out = np.empty((len(cols), 3), dtype=np.int64)
    for j, index in ((0, ent), (1, rel), (2, ent)):
        items = cols[:, j].tolist()
        codes = np.fromiter((index.get(x, -1) for x in items), np.int64, len(items))
        if (codes < 0).any():
            line = int(np.flatnonzero(codes < 0)[0])
            what = "relation" if j == 1 else "entity"
            raise ForgetRequestError(
                f"{path}, line {line + 1}: {what} {items[line]!r} is not known to "
                f"client {shard.client_id}; only its training triples can be "
                "forgotten"
            )
        out[:, j] = codes
    triples = torch.from_numpy(out)
    try:
        return check_forget_triples(triples, shard, source=str(path))
    except ForgetRequestError as exc:
        msg = re.sub(r", row (\d+):", r", line \1:", str(exc), count=1)
        raise ForgetRequestError(msg) from None


def load_forget_requests(
    path: str | os.PathLike[str] | Mapping[int, Tensor | str | os.PathLike[str]],
    fed: FederatedKG,
    *,
    file_name: str = "unlearn.txt",
) -> dict[int, Tensor]:
    r"""Resolves a forgetting request for a whole federation.

    Args:
        path: a folder holding ``clientK/unlearn.txt`` (FedLU's layout; a
            client without a file forgets nothing), or a mapping client id →
            file path or ``[n, 3]`` local-id tensor (the API form).
        fed (FederatedKG): the federation the request applies to.
        file_name (str, optional): the per-client file name in a folder.
            (default: :obj:`"unlearn.txt"`)

    Returns:
        dict[int, Tensor]: client id → validated ``[n, 3]`` local triples.
    """
    if isinstance(path, Mapping):
        out = {}
        for c, req in path.items():
            c = int(c)
            if not 0 <= c < fed.num_clients:
                raise ForgetRequestError(
                    f"Forgetting request for client {c}, but the federation has "
                    f"clients 0..{fed.num_clients - 1}"
                )
            if isinstance(req, Tensor):
                out[c] = check_forget_triples(req, fed[c], source=f"client {c} request")
            else:
                out[c] = read_forget_file(req, fed[c], fed)
        return out
    root = Path(path)
    if not root.is_dir():
        raise FileNotFoundError(
            f"`--forget` must be a folder of client*/{file_name} files "
            f"(got {root}); for one file, pass {{client_id: path}}"
        )
    out = {}
    for c in range(fed.num_clients):
        f = root / f"client{c}" / file_name
        if f.is_file():
            out[c] = read_forget_file(f, fed[c], fed)
    if not out:
        raise FileNotFoundError(f"No client*/{file_name} under {root}")
    return out


def retained_triples(
    train: Tensor, forget: Tensor, num_entities: int, num_relations: int
) -> Tensor:
    r"""The retaining set :math:`G^k_c = G^k \setminus G^k_u` (order kept)."""
    keep = ~torch.isin(
        _keys(train, num_entities, num_relations),
        _keys(forget, num_entities, num_relations),
    )
    return train[keep]


__all__ = [
    "ForgetRequestError",
    "check_forget_triples",
    "read_forget_file",
    "load_forget_requests",
    "retained_triples",
]
