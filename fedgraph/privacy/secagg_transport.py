r"""The server's side of SecAgg+'s dropout recovery
(:mod:`fedgraph.privacy.secagg_plus`): each round's setup
(:class:`RoundKeys`) and the transport that runs the three exchanges of a
round (:class:`SecAggTransport`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import Tensor

from fedgraph.federated.payload import Payload, PayloadError
from fedgraph.privacy.secagg_masks import (
    MASKED,
    PEER,
    ROUND,
    format_ids,
    key_bytes,
    key_tensor,
    keyed,
    mask,
    pairwise_mask,
    private_key,
    public_key,
)
from fedgraph.privacy.secagg_plus import (
    B_SHARE,
    CIPHER,
    HOLDERS,
    IDENTITY,
    LOST,
    RECOVERY,
    ROUND_KEY,
    SETUP,
    SK_SHARE,
    STAGE,
    STAGE_REPLIES,
    SURVIVORS,
    THRESHOLD,
    UNMASK,
)
from fedgraph.runtime.transport import Transport


class RoundKeys:
    r"""The server's view of one round's setup: holders, round public keys,
    ciphertexts, and the pairwise graph among the clients that set up."""

    def __init__(self, server_round: int, graph: Mapping[int, list[int]]) -> None:
        self.round = int(server_round)
        self.holders = {c: sorted([*ns, c]) for c, ns in graph.items()}
        self.graph = {c: list(ns) for c, ns in graph.items()}
        self.keys: dict[int, bytes] = {}
        self.ciphers: dict[tuple[int, int], bytes] = {}  # (from, to) -> bytes

    def setup_requests(
        self, identities: Mapping[int, Tensor], threshold: int
    ) -> dict[int, Payload]:
        out = {}
        for c, holders in self.holders.items():
            if threshold > len(holders):
                raise ValueError(
                    f"the SecAgg threshold {threshold} exceeds client {c}'s "
                    f"{len(holders)} share holders (itself and its neighbours)"
                )
            arrays = {f"{IDENTITY}{h}": identities[h] for h in holders if h != c}
            config = {STAGE: SETUP, ROUND: self.round}
            config.update({THRESHOLD: int(threshold), HOLDERS: format_ids(holders)})
            out[c] = Payload(arrays=arrays, config=config)
        return out

    def receive_setup(self, replies: Mapping[int, Payload]) -> None:
        for c, p in replies.items():
            if ROUND_KEY not in p.arrays:
                raise PayloadError(f"Client {c} set up without a round key")
            self.keys[int(c)] = key_bytes(p.arrays[ROUND_KEY])
            for h, data in keyed(p.arrays, CIPHER).items():
                self.ciphers[(int(c), h)] = data
        # the pairwise masks run among the clients that set up only
        ready = set(self.keys)
        self.graph = {c: [j for j in ns if j in ready] for c, ns in self.graph.items()}

    def add_round_keys(
        self, payloads: Mapping[int, Payload], identities: Mapping[int, Tensor]
    ) -> None:
        r"""Adds the neighbours' round keys and the client's ciphertexts to
        each stage-2 payload (in place: the ledger counts them)."""
        for c, p in payloads.items():
            for j in self.graph[c]:
                p.arrays[f"{PEER}{j}"] = key_tensor(self.keys[j])
            for (src, dst), data in self.ciphers.items():
                if dst == c:
                    p.arrays[f"{CIPHER}{src}"] = key_tensor(data)
                    p.arrays[f"{IDENTITY}{src}"] = identities[src]
            p.config[RECOVERY] = True

    def unmask_requests(self, survivors: Sequence[int]) -> dict[int, Payload]:
        alive = {int(c) for c in survivors}
        lost = set(self.keys) - alive
        out = {}
        for c in sorted(alive):
            held = [j for j, hs in self.holders.items() if c in hs and j in self.keys]
            config = {STAGE: UNMASK, ROUND: self.round}
            config[SURVIVORS] = format_ids(j for j in held if j in alive)
            config[LOST] = format_ids(j for j in held if j in lost)
            out[c] = Payload(config=config)
        return out

    def correction(
        self,
        survivors: Sequence[int],
        replies: Mapping[int, Payload],
        t: int,
        size: int,
    ) -> Tensor:
        r"""What the survivors' masked vectors add beyond their inputs: their
        self-masks and their pairwise masks with the lost clients."""
        from flwr.common.secure_aggregation.crypto.shamir import combine_shares

        alive = {int(c) for c in survivors}
        b_shares: dict[int, list[bytes]] = {}
        sk_shares: dict[int, list[bytes]] = {}
        for p in replies.values():
            for j, data in keyed(p.arrays, B_SHARE).items():
                b_shares.setdefault(j, []).append(data)
            for j, data in keyed(p.arrays, SK_SHARE).items():
                sk_shares.setdefault(j, []).append(data)
        total = torch.zeros(size, dtype=torch.long)
        for j in sorted(set(self.keys)):
            got = (b_shares if j in alive else sk_shares).get(j, [])
            if len(got) < t:
                raise PayloadError(
                    f"Secure aggregation, round {self.round}: {len(got)} shares of "
                    f"client {j}'s {'self-mask' if j in alive else 'round key'}, "
                    f"fewer than the threshold {t}; the sum cannot be unmasked"
                )
            secret = combine_shares(got[:t])
            if j in alive:
                total = total + mask(secret, self.round, size)
                continue
            key = private_key(secret)
            for i in self.graph[j]:
                if i in alive:  # survivor i added +m if i < j, -m otherwise
                    m = pairwise_mask(key, public_key(self.keys[i]), self.round, size)
                    total = total + m if i < j else total - m
        return total


class SecAggTransport(Transport):
    r"""Runs a round of :class:`~fedgraph.privacy.secagg.SecAggStrategy`
    with dropout recovery over ``inner``: setup, masked input, unmask (see
    the module). Every other call goes to ``inner`` unchanged. The setup and
    unmask replies are added to each client's training reply, so that the
    communication ledger counts them.

    Args:
        inner (Transport): the transport (a
            :class:`~fedgraph.runtime.flower.GridTransport` that accepts
            failures, so that a lost client leaves a round).
        strategy (SecAggStrategy): the server side (its ``threshold``
            positive).
    """

    def __init__(self, inner: Transport, strategy: Any) -> None:
        self.inner = inner
        self.strategy = strategy
        self._events: list[dict[str, Any]] = []

    def client_ids(self) -> list[int]:
        return self.inner.client_ids()

    def register(self) -> dict[int, Payload]:
        return self.inner.register()

    def fit(
        self, server_round: int, payloads: Mapping[int, Payload]
    ) -> dict[int, Payload]:
        s = self.strategy
        keys = s.round_keys
        setup = keys.setup_requests(s.public_keys, s.threshold)
        ready = self.inner.fit(server_round, setup)
        s.check_keys(server_round, ready)
        self._events.extend(self.inner.pop_events())
        keys.receive_setup(ready)
        told = {e["client"] for e in self._events}
        for c in payloads:
            if c not in ready and c not in told:  # lost in the setup: sent nothing
                self._events.append(
                    {"event": "skipped", "client": int(c), "round": server_round}
                )
        sent = {c: p for c, p in payloads.items() if c in ready}
        keys.add_round_keys(sent, s.public_keys)
        replies = self.inner.fit(server_round, sent)
        if not replies:
            return {}
        survivors = sorted(replies)
        shares = self.inner.fit(server_round, keys.unmask_requests(survivors))
        size = next(iter(replies.values())).arrays[MASKED].numel()
        s.correction = keys.correction(survivors, shares, s.threshold, size)
        s.survivors = survivors
        out = {}
        for c, r in replies.items():
            extra = {**ready[c].arrays, **(shares[c].arrays if c in shares else {})}
            out[c] = Payload(
                arrays={
                    **r.arrays,
                    **{STAGE_REPLIES + k: v for k, v in extra.items()},
                },
                row_ids=dict(r.row_ids),
                config=dict(r.config),
                metrics=dict(r.metrics),
                num_examples=r.num_examples,
            )
        return out

    def evaluate(
        self, server_round: int, payloads: Mapping[int, Payload], split: str
    ) -> dict[int, Payload]:
        return self.inner.evaluate(server_round, payloads, split)

    def keep_best(
        self, server_round: int, clients: Sequence[int] | None = None
    ) -> None:
        self.inner.keep_best(server_round, clients)

    def restore_best(self) -> None:
        self.inner.restore_best()

    def pop_events(self) -> list[dict[str, Any]]:
        out = [*self._events, *self.inner.pop_events()]
        self._events = []
        return out


__all__ = ["SecAggTransport", "RoundKeys"]
