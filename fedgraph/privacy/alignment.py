r"""Private entity alignment by keyed hashing.

The clients share a federation secret :math:`k` that the server does not
hold. Each client names its entities to the server by
:math:`\tau(e) = \mathrm{HMAC\text{-}SHA256}_k(\mathrm{name}(e))` truncated
to 63 bits (an ``int64`` token; a collision among :math:`10^6` entities has
probability below :math:`10^{-7}`). The server aligns clients on equal
tokens, keeps its table indexed by its own row numbers (the rank of each
token in the union of tokens it received) and speaks tokens only: it never
receives an entity name, nor a global id, and cannot compute
:math:`\tau` for a candidate name without :math:`k` (HMAC is a PRF).

What the server still learns: how many entities each client holds, which
tokens clients share (the overlap structure) and the rows themselves. A
client colluding with the server reveals :math:`k`, and with it the map.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from fedgraph.federated.kge.fede import ENTITY
from fedgraph.federated.payload import Payload, PayloadError
from fedgraph.privacy.wrap import ClientWrapper, StrategyWrapper, innermost


def entity_tokens(names: Sequence[str], secret: bytes) -> Tensor:
    r"""The ``int64`` tokens :math:`\tau` of ``names`` under ``secret``."""
    if not secret:
        raise ValueError("the alignment secret must not be empty")
    out = [
        int.from_bytes(
            hmac.new(secret, n.encode("utf-8"), hashlib.sha256).digest()[:8], "big"
        )
        >> 1
        for n in names
    ]
    return torch.tensor(out, dtype=torch.long)


def write_secret(path: str | os.PathLike[str], secret: bytes) -> None:
    r"""Writes ``secret`` (as hex and a newline) to ``path``, readable by its
    owner only (mode ``0600``) from the moment it exists: a temporary file
    beside it is created with that mode, written, flushed to disk and
    renamed over ``path``, so no reader ever sees a partial secret or a
    moment when others may read it (parents are created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.unlink(missing_ok=True)  # left by a crash: O_EXCL keeps a link out
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(secret.hex() + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def entity_name(global_id: int, names: Sequence[str] | None) -> str:
    r"""The name a client hashes for ``global_id`` (the dataset's entity name,
    or the id's decimal form when the dataset has none)."""
    return names[global_id] if names is not None else str(int(global_id))


def _lookup(sorted_keys: Tensor, keys: Tensor, what: str) -> Tensor:
    pos = torch.searchsorted(sorted_keys, keys).clamp_max(
        max(sorted_keys.numel() - 1, 0)
    )
    if sorted_keys.numel() == 0 or not torch.equal(sorted_keys[pos], keys):
        raise PayloadError(f"{what}: unknown entity token")
    return pos


def _remap(payload: Payload, key: str, fn: Any) -> Payload:
    if key not in payload.row_ids:
        return payload
    row_ids = dict(payload.row_ids)
    row_ids[key] = fn(row_ids[key].long())
    return Payload(
        arrays=dict(payload.arrays),
        row_ids=row_ids,
        config=dict(payload.config),
        metrics=dict(payload.metrics),
        num_examples=payload.num_examples,
    )


def shared_key(obj: Any) -> str:
    r"""The row key a strategy or client shares: ``"relation"`` for FedR
    (relation rows), else ``"entity"``."""
    from fedgraph.federated.kge.fedr import RELATION, FedR, FedRClient

    return RELATION if isinstance(innermost(obj), FedR | FedRClient) else ENTITY


def shard_names(
    shard: Any, key: str = ENTITY, names: Sequence[str] | None = None
) -> list[str]:
    r"""The names a client hashes for its entities (``key="entity"``) or
    relations, in local order: ``names`` indexed by the shard's ids when
    given, else the shard's own names (a client folder's), else the ids'
    decimal forms (a dataset without names)."""
    ids = shard.entity_ids if key == ENTITY else shard.relation_ids
    if names is not None:
        return [entity_name(int(i), names) for i in ids.tolist()]
    graph = shard.graph
    own = graph.entity_names if key == ENTITY else graph.relation_names
    if own is not None:
        return list(own)
    return [str(int(i)) for i in ids.tolist()]


class KeyedHashClient(ClientWrapper):
    r"""Speaks keyed tokens of its names to the server instead of ids: of
    its entities, or of its relations for a relation-sharing client (FedR).

    Args:
        inner (KGEClient): the client (``inner.shard.entity_ids``: its
            entities' ids, in the federation's shared vocabulary or its own).
        secret (bytes): the federation secret.
        names (Sequence[str], optional): entity names by id; default: the
            shard's own names (:func:`shard_names`).
        relation_names (Sequence[str], optional): relation names by id (a
            relation-sharing client's); default: the shard's own names.
    """

    def __init__(
        self,
        inner: Any,
        secret: bytes,
        names: Sequence[str] | None = None,
        relation_names: Sequence[str] | None = None,
    ) -> None:
        super().__init__(inner)
        self.key = shared_key(inner)
        shard = inner.shard
        ids = (shard.entity_ids if self.key == ENTITY else shard.relation_ids).long()
        given = names if self.key == ENTITY else relation_names
        tokens = entity_tokens(shard_names(shard, self.key, given), secret)
        order = torch.argsort(tokens)
        self._sorted_tokens = tokens[order]
        if torch.unique(self._sorted_tokens).numel() != tokens.numel():
            raise ValueError(
                f"Client {inner.client_id}: two {self.key} names share a token"
            )
        self._ids_by_token = ids[order]
        self._token_of = dict(zip(ids.tolist(), tokens.tolist(), strict=True))

    def _to_ids(self, tokens: Tensor) -> Tensor:
        return self._ids_by_token[_lookup(self._sorted_tokens, tokens, "client")]

    def _to_tokens(self, ids: Tensor) -> Tensor:
        return torch.tensor(
            [self._token_of[int(i)] for i in ids.tolist()], dtype=torch.long
        )

    def register(self) -> Payload:
        return _remap(self.inner.register(), self.key, self._to_tokens)

    def fit(self, payload: Payload) -> Payload:
        reply = self.inner.fit(_remap(payload, self.key, self._to_ids))
        return _remap(reply, self.key, self._to_tokens)

    def evaluate(self, payload: Payload) -> Payload:
        return self.inner.evaluate(_remap(payload, self.key, self._to_ids))


class KeyedHashStrategy(StrategyWrapper):
    r"""The server side of keyed-hash alignment: rows of the wrapped
    strategy's table (entities; relations for FedR) are the ranks of the
    tokens in their union, whether the clients' ids were global or their
    own: the same names give the same rows."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.key = shared_key(inner)
        self.tokens = torch.empty(0, dtype=torch.long)

    def register(self, registrations: Mapping[int, Payload]) -> None:
        key = self.key
        got = [
            p.row_ids[key].long() for p in registrations.values() if key in p.row_ids
        ]
        self.tokens = torch.unique(torch.cat(got)) if got else self.tokens
        # FedR sizes its relation table from the registrations
        limit = getattr(self.inner, "num_entities", None) if key == ENTITY else None
        if limit is not None and self.tokens.numel() > int(limit):
            raise PayloadError(
                f"{self.tokens.numel()} distinct entity tokens for a table of {limit}"
            )
        super().register(
            {c: _remap(p, key, self._to_rows) for c, p in registrations.items()}
        )

    def _to_rows(self, tokens: Tensor) -> Tensor:
        return _lookup(self.tokens, tokens, "server")

    def _to_tokens(self, rows: Tensor) -> Tensor:
        return self.tokens[rows]

    def configure_train(
        self, server_round: int, client_ids: Sequence[int]
    ) -> dict[int, Payload]:
        out = super().configure_train(server_round, client_ids)
        return {c: _remap(p, self.key, self._to_tokens) for c, p in out.items()}

    def aggregate_train(
        self, server_round: int, replies: Mapping[int, Payload]
    ) -> None:
        super().aggregate_train(
            server_round,
            {c: _remap(p, self.key, self._to_rows) for c, p in replies.items()},
        )

    def configure_evaluate(
        self, server_round: int, client_ids: Sequence[int], split: str = "valid"
    ) -> dict[int, Payload]:
        out = super().configure_evaluate(server_round, client_ids, split)
        return {c: _remap(p, self.key, self._to_tokens) for c, p in out.items()}

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "alignment_tokens": self.tokens.clone()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict(state)
        if "alignment_tokens" in state:
            self.tokens = state["alignment_tokens"].clone()


__all__ = [
    "KeyedHashClient",
    "KeyedHashStrategy",
    "entity_tokens",
    "entity_name",
    "shard_names",
    "shared_key",
    "write_secret",
]
