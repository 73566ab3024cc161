r"""The :class:`~fedgraph.runtime.Transport` over a Flower
``Grid``: payloads travel as ``Message`` records to the SuperNodes."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from fedgraph.federated.payload import Payload
from fedgraph.runtime.flower.protocol import (
    BEST_ROUND,
    CHECKPOINT,
    EVALUATE,
    FUSE,
    PARTITION_ID,
    REGISTER,
    RESUME_ROUND,
    SERVER_ROUND,
    SNAPSHOT,
    TRAIN,
    USE_BEST,
    ClientReplyError,
    from_content,
    to_content,
)
from fedgraph.runtime.transport import Transport


class GridTransport(Transport):
    r"""Sends fedgraph payloads to the SuperNodes of a Flower ``Grid``.

    Flower node ids are random; clients are known by the ``partition-id``
    each one reports when it registers. Every message also tells the client
    its best validation round so far (one for all clients, or each its own
    with per-client selection), so that each client keeps its own best-round
    state (in its ``context.state``) for the final test pass — the server
    never holds client parameters.

    Args:
        grid (flwr.serverapp.Grid): the grid of the running ``ServerApp``.
        num_clients (int): SuperNodes to wait for; each must report a
            distinct ``partition-id`` in ``[0, num_clients)``.
        reply_timeout (float, optional): seconds to wait for the replies of
            one exchange (``None``: no limit). (default: :obj:`None`)
        connect_timeout (float, optional): seconds to wait until
            ``num_clients`` nodes are connected. (default: :obj:`120`)
        checkpoint (bool, optional): ask every client to save its state to
            its node's ``state-dir`` after each message (a checkpointed run,
            see :func:`~fedgraph.runtime.flower.run_server`).
            (default: :obj:`False`)
    """

    def __init__(
        self,
        grid: Any,
        num_clients: int,
        *,
        reply_timeout: float | None = None,
        connect_timeout: float = 120.0,
        checkpoint: bool = False,
    ) -> None:
        if num_clients < 1:
            raise ValueError(f"`num_clients` must be positive (got {num_clients})")
        self.grid = grid
        self.num_clients = int(num_clients)
        self.reply_timeout = reply_timeout
        self.connect_timeout = float(connect_timeout)
        self.nodes: dict[int, int] = {}  # client id -> node id
        #: client id -> the round whose state the client keeps for the test
        self.best_rounds: dict[int, int] = {}
        self.use_best = False
        self.checkpoint = bool(checkpoint)

    # ------------------------------------------------------------ helpers
    def _wait_for_nodes(self) -> list[int]:
        deadline = time.monotonic() + self.connect_timeout
        while True:
            nodes = sorted(int(n) for n in self.grid.get_node_ids())
            if len(nodes) >= self.num_clients:
                return nodes
            if time.monotonic() >= deadline:
                raise ClientReplyError(
                    f"Only {len(nodes)} of {self.num_clients} SuperNodes connected "
                    f"within {self.connect_timeout:.0f} s; the run stops."
                )
            time.sleep(1.0)

    def _send(
        self, message_type: str, server_round: int, contents: Mapping[int, Any]
    ) -> dict[int, Any]:
        r"""node id → content; returns node id → reply message, all present
        and error-free."""
        from flwr.app import Message

        messages = [
            Message(content, node, message_type, group_id=str(server_round))
            for node, content in contents.items()
        ]
        replies: dict[int, Any] = {}
        for reply in self.grid.send_and_receive(messages, timeout=self.reply_timeout):
            node = int(reply.metadata.src_node_id)
            if reply.has_error():
                who = self._who(node)
                raise ClientReplyError(
                    f"{who} failed on '{message_type}' in round {server_round}: "
                    f"{reply.error.reason} (code {reply.error.code}); the run stops."
                )
            replies[node] = reply
        missing = [self._who(n) for n in contents if n not in replies]
        if missing:
            raise ClientReplyError(
                f"No '{message_type}' reply from {', '.join(missing)} in round "
                f"{server_round} (reply timeout {self.reply_timeout}); the run stops."
            )
        return replies

    def _who(self, node: int) -> str:
        for c, n in self.nodes.items():
            if n == node:
                return f"client {c} (node {node})"
        return f"node {node}"

    def _control(
        self, server_round: int, client: int | None = None, **extra: int | bool
    ) -> dict[str, int | bool]:
        out = {
            SERVER_ROUND: server_round,
            BEST_ROUND: self.best_rounds.get(client, 0),  # 0: none yet / unknown
            **extra,
        }
        if self.checkpoint:
            out[CHECKPOINT] = True
        return out

    def _exchange(
        self,
        message_type: str,
        server_round: int,
        payloads: Mapping[int, Payload],
        **extra: int | bool,
    ) -> dict[int, Payload]:
        unknown = [c for c in payloads if c not in self.nodes]
        if unknown:
            raise ClientReplyError(f"Clients {unknown} never registered")
        replies = self._send(
            message_type,
            server_round,
            {
                self.nodes[c]: to_content(p, self._control(server_round, c, **extra))
                for c, p in payloads.items()
            },
        )
        # In the order of the payloads: the strategy aggregates in this order.
        return {c: from_content(replies[self.nodes[c]].content)[0] for c in payloads}

    # ------------------------------------------------------------ Transport
    def client_ids(self) -> list[int]:
        return sorted(self.nodes)

    def register(self, resume_round: int | None = None) -> dict[int, Payload]:
        r"""Asks every connected node for its ``partition-id`` (and a KGE
        client for its entity ids). With ``resume_round`` (a resumed run)
        each client first restores the state it saved for that round (a
        best-round state it had not yet promoted is promoted by the next
        message, which carries its best round)."""
        nodes = self._wait_for_nodes()
        extra = {} if resume_round is None else {RESUME_ROUND: int(resume_round)}
        control = self._control(0, **extra)
        replies = self._send(
            REGISTER, 0, {n: to_content(Payload(), control) for n in nodes}
        )
        regs: dict[int, tuple[int, Payload]] = {}
        for node in nodes:
            payload, control = from_content(replies[node].content)
            cid = control.get(PARTITION_ID)
            if not isinstance(cid, int) or not 0 <= cid < self.num_clients:
                raise ClientReplyError(
                    f"Node {node} registered with partition id {cid!r}; expected "
                    f"one of 0 … {self.num_clients - 1}."
                )
            if cid in regs:
                raise ClientReplyError(
                    f"Nodes {regs[cid][0]} and {node} both registered as client "
                    f"{cid}: give each SuperNode its own --node-config "
                    '"partition-id=K".'
                )
            regs[cid] = (node, payload)
        if len(regs) != self.num_clients:
            absent = sorted(set(range(self.num_clients)) - set(regs))
            raise ClientReplyError(f"No SuperNode registered as clients {absent}")
        self.nodes = {c: regs[c][0] for c in sorted(regs)}
        return {c: regs[c][1] for c in sorted(regs)}

    def fit(
        self, server_round: int, payloads: Mapping[int, Payload]
    ) -> dict[int, Payload]:
        return self._exchange(TRAIN, server_round, payloads)

    def evaluate(
        self, server_round: int, payloads: Mapping[int, Payload], split: str
    ) -> dict[int, Payload]:
        return self._exchange(
            EVALUATE,
            server_round,
            payloads,
            **{
                SNAPSHOT: split == "valid" and not self.use_best,
                USE_BEST: self.use_best,
            },
        )

    def fuse(
        self, server_round: int, payloads: Mapping[int, Payload]
    ) -> dict[int, Payload]:
        r"""FedE's model-fusion step on every client of ``payloads`` (the test
        pass's payloads): each fuses the state it was tested with (its best
        round's, when the run tested one) with its single-KG model; the
        replies carry :func:`~fedgraph.federated.kge.fusion.fusion_to_metrics`."""
        return self._exchange(FUSE, server_round, payloads, **{USE_BEST: self.use_best})

    def keep_best(
        self, server_round: int, clients: Sequence[int] | None = None
    ) -> None:
        for c in self.client_ids() if clients is None else clients:
            self.best_rounds[int(c)] = int(server_round)

    def restore_best(self) -> None:
        self.use_best = True


__all__ = ["GridTransport"]
