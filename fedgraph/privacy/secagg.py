r"""Secure aggregation of entity-row sums and presence counts for the
FedE family, and of relation rows for FedR (the pairwise-masking core of
SecAgg / SecAgg+).

With :class:`SecAggClient` and :class:`SecAggStrategy` the server learns
only :math:`\sum_c \mathbf{P}_c^\top \mathbf{E}^c` and
:math:`\sum_c \mathbf{v}_c` over the round's participants — the two sums
FedE's mean needs — never a client's rows, nor which entities it holds:

1. *Setup*: each client registers an elliptic-curve public key (SECP384R1,
   as Flower's SecAgg+) and nothing else; the server relays to each
   participant the keys of its neighbours in the SecAgg+ ring graph
   (:func:`neighbours`: every client when there are few).
2. *Masked input*: client :math:`i` scatters its rows and presence bits
   into dense vectors over the federation's shared entity index, quantises
   the rows to integers (:func:`quantise`: clip to :math:`[-B, B]`, round to
   the nearest of ``levels`` steps of :math:`2B/\mathrm{levels}`) and adds,
   modulo :math:`M = 2^{32}`, one pseudo-random mask per neighbour
   :math:`j`, :math:`+` if :math:`i < j` and :math:`-` otherwise, expanded
   from the ECDH key :math:`s_{ij}` they agree on (Flower's
   ``generate_shared_key``) and the round number.
3. *Unmasking*: the masks cancel in the server's sum; it dequantises and
   divides, FedE Eq. 3. Each row of the result differs from plain FedE's by
   at most half a quantisation step (:math:`B/\mathrm{levels}`) when no
   coordinate exceeds :math:`B`.

Since every client holds a share of the index, the server sends each the
whole table (the client keeps its own rows): the download grows to
:math:`N \times d` per client, the upload to :math:`N(d + 1)` integers.

Dropouts: a round whose replies lack a participant stops with an error
naming it (its masks would not cancel). With ``threshold`` SecAgg+'s
per-round keys, self-masks and Shamir shares
(:mod:`~fedgraph.privacy.secagg_plus`, driven by its ``SecAggTransport``)
recover the survivors' sum instead, as a Flower deployment does; in the
simulation every sampled client replies, where pairwise masks alone give the
same guarantee.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import Tensor

from fedgraph.federated.kge.fede import ENTITY, FedE
from fedgraph.federated.kge.fedr import RELATION, FedR
from fedgraph.federated.payload import Payload, PayloadError
from fedgraph.privacy import secagg_plus as plus
from fedgraph.privacy.secagg_masks import (
    INDEX_SIZE,
    KEY_ID,
    MASKED,
    MODULUS,
    PEER,
    PUBLIC_KEY,
    ROUND,
    key_bytes,
    key_id,
    key_tensor,
    pairwise_mask,
    private_key,
    private_key_pem,
    public_bytes,
    public_key,
)
from fedgraph.privacy.secagg_transport import RoundKeys
from fedgraph.privacy.wrap import ClientWrapper, StrategyWrapper, innermost


def quantise(x: Tensor, clip_range: float, levels: int) -> Tensor:
    r"""``x`` clipped to :math:`[-B, B]` as integers in :math:`[0, \mathrm{levels}]`
    (round to nearest)."""
    step = 2 * clip_range / levels
    return torch.round(
        (x.double().clamp(-clip_range, clip_range) + clip_range) / step
    ).long()


def neighbours(
    participants: Sequence[int], k: int | None = None
) -> dict[int, list[int]]:
    r"""SecAgg+'s ring graph over the sorted ``participants``: each is
    linked to the ``ceil(k/2)`` next and previous ones (all others when
    ``k`` is :obj:`None` or at least their number minus one)."""
    ids = sorted(int(c) for c in participants)
    n = len(ids)
    if k is None or k >= n - 1:
        return {c: [d for d in ids if d != c] for c in ids}
    if k < 1:
        raise ValueError(f"the number of neighbours must be positive (got {k})")
    half = math.ceil(k / 2)
    out = {}
    for i, c in enumerate(ids):
        near = {ids[(i + o) % n] for o in range(-half, half + 1) if o != 0}
        out[c] = sorted(near)
    return out


class SecAggClient(ClientWrapper):
    r"""The client side (see the module).

    Args:
        inner (KGEClient): the client.
        num_entities (int): size of the federation's shared index (of
            relations for FedR).
        clip_range (float, optional): :math:`B`. (default: :obj:`8.0`)
        levels (int, optional): quantisation levels. (default: :math:`2^{24}`)
    """

    def __init__(
        self,
        inner: Any,
        num_entities: int,
        clip_range: float = 8.0,
        levels: int = 2**24,
        key: str = ENTITY,
    ) -> None:
        super().__init__(inner)
        from cryptography.hazmat.primitives.asymmetric import ec

        if key not in (ENTITY, RELATION):
            raise ValueError(f"`key` must be '{ENTITY}' or '{RELATION}' (got {key!r})")
        self.key = key
        self.num_entities = int(num_entities)
        self.clip_range, self.levels = float(clip_range), int(levels)
        #: the client's identity key: its public key is registered once
        self.identity_key = ec.generate_private_key(ec.SECP384R1())
        #: this round's secrets with dropout recovery (:mod:`.secagg_plus`)
        self.round_state: dict[str, Any] | None = None

    def register(self) -> Payload:
        return Payload(
            arrays={PUBLIC_KEY: key_tensor(public_bytes(self.identity_key))},
            config={INDEX_SIZE: self.num_entities},
        )

    def _own_ids(self) -> Tensor:
        shard = self.inner.shard
        return (shard.entity_ids if self.key == ENTITY else shard.relation_ids).long()

    def _own_rows(self, payload: Payload) -> Payload:
        if self.key not in payload.arrays:
            return Payload(config=dict(payload.config))
        ids = self._own_ids()
        table = payload.arrays[self.key]
        if table.size(0) != self.num_entities:
            raise PayloadError(
                f"SecAgg client {self.inner.client_id}: expected the whole table "
                f"({self.num_entities} rows), got {table.size(0)}"
            )
        return Payload(
            arrays={self.key: table[ids].clone()},
            row_ids={self.key: ids.clone()},
            config={k: v for k, v in payload.config.items() if k != ROUND},
        )

    def fit(self, payload: Payload) -> Payload:
        stage = payload.config.get(plus.STAGE)
        if stage == plus.SETUP:
            return plus.client_setup(self, payload)
        if stage == plus.UNMASK:
            return plus.client_unmask(self, payload)
        reply = self.inner.fit(self._own_rows(payload))
        rows, ids = reply.arrays[self.key], reply.row_ids[self.key].long()
        n, d = self.num_entities, rows.size(1)
        dense = torch.zeros(n, d + 1, dtype=torch.long)
        dense[ids, :d] = quantise(rows, self.clip_range, self.levels)
        dense[ids, d] = 1
        masked = dense.view(-1)
        me = int(self.inner.client_id)
        rnd = int(payload.config[ROUND])
        if payload.config.get(plus.RECOVERY):  # per-round keys and a self-mask
            masked = masked + plus.client_round_masks(self, payload, masked.numel())
            return self._masked_reply(masked, reply)
        for key, value in payload.arrays.items():
            if not key.startswith(PEER):
                continue
            j = int(key[len(PEER) :])
            peer = public_key(key_bytes(value))
            mask = pairwise_mask(self.identity_key, peer, rnd, masked.numel())
            masked = masked + mask if me < j else masked - mask
        return self._masked_reply(masked, reply)

    def _masked_reply(self, masked: Tensor, reply: Payload) -> Payload:
        return Payload(
            arrays={MASKED: torch.remainder(masked, MODULUS)},
            config={KEY_ID: key_id(public_bytes(self.identity_key))},
            metrics=dict(reply.metrics),
            num_examples=reply.num_examples,
        )

    def evaluate(self, payload: Payload) -> Payload:
        return self.inner.evaluate(self._own_rows(payload))

    def state_dict(self) -> dict[str, Any]:
        pem = private_key_pem(self.identity_key)
        out = {**self.inner.state_dict(), "secagg_private_key": key_tensor(pem)}
        if self.round_state is not None:
            out["secagg_round_state"] = _encode_round_state(self.round_state)
        return out

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.inner.load_state_dict(state)
        if "secagg_private_key" in state:
            self.identity_key = private_key(key_bytes(state["secagg_private_key"]))
        self.round_state = _decode_round_state(state.get("secagg_round_state"))


def _encode_round_state(rs: Mapping[str, Any]) -> dict[str, Any]:
    r"""A round's secrets as tensors (``state_dict``-able)."""
    maps = ("own", "received", "identities")
    out: dict[str, Any] = {"round": torch.tensor(rs["round"])}
    out.update({k: key_tensor(rs[k]) for k in ("key", "seed")})
    out.update(
        {m: {int(j): key_tensor(v) for j, v in rs.get(m, {}).items()} for m in maps}
    )
    return out


def _decode_round_state(enc: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if enc is None:
        return None
    out: dict[str, Any] = {"round": int(enc["round"])}
    out.update({k: key_bytes(enc[k]) for k in ("key", "seed")})
    for m in ("own", "received", "identities"):
        out[m] = {int(j): key_bytes(v) for j, v in enc[m].items()}
    return out


class SecAggStrategy(StrategyWrapper):
    r"""The server side (see the module); wraps a FedE-family strategy with
    FedE's plain entity mean.

    Args:
        inner (FedE): the strategy.
        num_neighbours (int, optional): SecAgg+'s neighbours per client
            (default: :obj:`None`, every other participant: SecAgg).
        clip_range (float, optional): :math:`B` (as the clients').
        levels (int, optional): quantisation levels (as the clients').
        threshold (int, optional): SecAgg+ dropout recovery with this Shamir
            threshold, over :class:`~fedgraph.privacy.secagg_transport.SecAggTransport`
            (default: :obj:`0`, none).
    """

    def __init__(
        self,
        inner: Any,
        num_neighbours: int | None = None,
        clip_range: float = 8.0,
        levels: int = 2**24,
        threshold: int = 0,
    ) -> None:
        super().__init__(inner)
        if threshold < 0 or threshold == 1:
            raise ValueError(
                f"the SecAgg threshold must be 0 (no dropout recovery) or at "
                f"least 2 (got {threshold})"
            )
        self.threshold = int(threshold)
        self.round_keys: Any = None
        self.correction: Tensor | None = None
        self.survivors: list[int] = []
        base = innermost(inner)
        plain = type(base).aggregation_weights is FedE.aggregation_weights
        if (
            not (
                isinstance(base, FedR)
                or (
                    isinstance(base, FedE)
                    and type(base).aggregate_train is FedE.aggregate_train
                    and plain
                )
            )
            or not plain
        ):
            raise ValueError(
                "secure aggregation supports the FedE family with FedE's plain "
                f"entity mean, and FedR (got {type(base).__name__})"
            )
        self.base = base
        self.key = RELATION if isinstance(base, FedR) else ENTITY
        self.num_neighbours = num_neighbours
        self.clip_range, self.levels = float(clip_range), int(levels)
        self.public_keys: dict[int, Tensor] = {}
        self.participants: list[int] = []
        self.last_counts: Tensor | None = None

    def register(self, registrations: Mapping[int, Payload]) -> None:
        for c, p in registrations.items():
            if PUBLIC_KEY not in p.arrays:
                raise PayloadError(f"Client {c} registered without a SecAgg public key")
            self.public_keys[int(c)] = p.arrays[PUBLIC_KEY].clone()
        self._check_index_size(registrations)
        everything = torch.arange(self.base.num_entities)
        super().register(
            {c: Payload(row_ids={self.key: everything}) for c in registrations}
        )

    def _check_index_size(self, registrations: Mapping[int, Payload]) -> None:
        r"""The clients mask vectors over one index, the server's table's: a
        FedR server that was not told the relation vocabulary sizes its table
        from it (it learns no id)."""
        sizes = {
            int(p.config[INDEX_SIZE])
            for p in registrations.values()
            if INDEX_SIZE in p.config
        }
        if len(sizes) > 1:
            raise PayloadError(
                f"SecAgg clients mask over indexes of different sizes {sorted(sizes)}"
            )
        if not sizes:
            return
        size = sizes.pop()
        if isinstance(self.base, FedR) and size > self.base.num_entities:
            self.base._grow(size)
        if size != self.base.num_entities:
            raise PayloadError(
                f"SecAgg clients mask over {size} rows; the server's table has "
                f"{self.base.num_entities}"
            )

    def configure_train(
        self, server_round: int, client_ids: Sequence[int]
    ) -> dict[int, Payload]:
        out = super().configure_train(server_round, client_ids)
        graph = neighbours(list(out), self.num_neighbours)
        self.participants = sorted(int(c) for c in out)
        if self.threshold:  # per-round keys, set up by SecAggTransport
            self.round_keys = RoundKeys(server_round, graph)
        for c, p in out.items():
            p.config[ROUND] = int(server_round)
            for j in [] if self.threshold else graph[int(c)]:
                p.arrays[f"{PEER}{j}"] = self.public_keys[j]
        return out

    def aggregate_train(
        self, server_round: int, replies: Mapping[int, Payload]
    ) -> None:
        if not replies:
            return
        expected = self.survivors if self.threshold else self.participants
        if self.threshold and self.correction is None:
            raise PayloadError(
                "Secure aggregation with dropout recovery runs over SecAggTransport "
                "(its setup and unmask stages); this round had neither"
            )
        lost = sorted(set(expected) - {int(c) for c in replies})
        if lost:
            raise PayloadError(
                f"Secure aggregation, round {server_round}: no masked vector from "
                f"client {', '.join(map(str, lost))}; the others' masks shared with "
                "it do not cancel, so the round's sum cannot be unmasked"
            )
        if len(replies) * self.levels >= MODULUS:
            raise ValueError(
                f"{len(replies)} clients x {self.levels} levels overflow the field 2^32"
            )
        self.check_keys(server_round, replies)
        total = torch.zeros_like(next(iter(replies.values())).arrays[MASKED])
        for c, p in replies.items():
            if MASKED not in p.arrays:
                raise PayloadError(f"Client {c} replied without a masked vector")
            total = torch.remainder(total + p.arrays[MASKED], MODULUS)
        if self.threshold:  # the survivors' self-masks, the lost ones' masks
            total = torch.remainder(total - self.correction, MODULUS)
            self.correction = None
        n, width = self.base.num_entities, self.base.entity_dim
        total = total.view(n, width + 1)
        counts = total[:, width].double()
        step = 2 * self.clip_range / self.levels
        sums = total[:, :width].double() * step - self.clip_range * counts.unsqueeze(1)
        held = (counts > 0).nonzero().squeeze(1)
        mean = sums[held] / counts[held].unsqueeze(1)
        # the strategy's own post-aggregation step (FedE: write the rows; a
        # server optimiser: its step on them)
        self.base.server_update(
            server_round, ENTITY, mean.to(self.base.table.dtype), held
        )
        self.last_counts = counts.long()

    def check_keys(self, server_round: int, replies: Mapping[int, Payload]) -> None:
        r"""Every reply comes from the key its client registered: a node
        restarted without its state draws a new key, and masks agreed with
        the old one would not cancel."""
        for c, p in replies.items():
            got = p.config.get(KEY_ID)
            if got is not None and got != key_id(key_bytes(self.public_keys[c])):
                raise PayloadError(
                    f"Secure aggregation, round {server_round}: client {c} uses a "
                    "key it did not register (its node restarted without its "
                    "state?); the round's sum cannot be unmasked"
                )

    def state_dict(self) -> dict[str, Any]:
        return {
            **super().state_dict(),
            "secagg_public_keys": {c: k.clone() for c, k in self.public_keys.items()},
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict(state)
        if "secagg_public_keys" in state:
            self.public_keys = {
                int(c): k.clone() for c, k in state["secagg_public_keys"].items()
            }


__all__ = ["SecAggClient", "SecAggStrategy", "quantise", "neighbours"]
