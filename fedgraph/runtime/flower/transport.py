r"""The :class:`~fedgraph.runtime.Transport` over a Flower
``Grid``: payloads travel as ``Message`` records to the SuperNodes."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from fedgraph.federated.payload import Payload
from fedgraph.runtime.flower.failures import FailureHandling
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


def _log_timing(
    message_type: str, server_round: int, pushed: float, arrived: Mapping[int, float]
) -> None:
    r"""One DEBUG line per exchange (``FLWR_LOG_LEVEL=DEBUG``): when the
    messages were pushed and each node's reply pulled, in epoch seconds
    (``benchmarks/flower_deploy.py --timeline`` reads it)."""
    from logging import DEBUG

    from flwr.common.logger import log

    line = {"type": message_type, "round": server_round, "pushed": pushed}
    line["replies"] = {str(n): t for n, t in sorted(arrived.items())}
    log(DEBUG, "[fedgraph] exchange %s", json.dumps(line))


class GridTransport(FailureHandling, Transport):
    r"""Sends fedgraph payloads to the SuperNodes of a Flower ``Grid``.

    Flower node ids are random; clients are known by the ``partition-id``
    each node reports in the alignment step
    (:mod:`~fedgraph.runtime.flower.alignment`) and when it registers. Every
    message also tells the client its best validation round so far (one for
    all clients, or each its own with per-client selection), so that each
    client keeps its own best-round state (in its ``context.state``) for the
    final test pass — the server never holds client parameters.

    **Failures.** A node that answers with an error, goes offline (the
    SuperLink stops listing it), is replaced by a restarted SuperNode
    reporting the same ``partition-id``, or does not answer within
    ``reply_timeout`` has failed in that exchange. Without
    ``accept_failures`` the run stops with a :class:`ClientReplyError` that
    names the client, its node and the round. With it, the exchange goes on
    with the replies it has as long as at least ``min_fit_nodes`` training
    replies (one evaluation reply) arrived; the failed client is left out of
    the following exchanges (each recorded as ``"skipped"``) until a
    SuperNode with its ``partition-id`` connects again, which then rejoins
    at the next exchange (``"query.register"`` with ``rejoin-round``: it
    keeps its state if it still has one, else restores its newest snapshot
    of a checkpointed run, else starts from its initial state). Every
    failure, skip and rejoin is an event of :meth:`pop_events`.

    With ``wait_for_failed`` an exchange first waits for each failed client
    to be reachable again (its node still online, or a restarted SuperNode
    with its ``partition-id``), has it rejoin and sends it the same message
    again (event ``"retried"``), so that the round ends with every reply, as
    if nothing had failed, provided the client came back with the state the
    exchange started from (the state of its last training round: kept by a
    node that stayed up, or restored from the snapshot of a checkpointed
    run). A client back with another state misses the exchange and takes
    part again from the next one; one not back within ``wait_for_failed``
    seconds stays lost; either way ``accept_failures`` decides as above
    whether the exchange goes on without it. The retried message is not
    counted again in the communication ledger.

    Args:
        grid (flwr.serverapp.Grid): the grid of the running ``ServerApp``.
        num_clients (int): SuperNodes to wait for; each must report a
            distinct ``partition-id`` in ``[0, num_clients)`` (``0``: as many
            as the alignment step reports). (default: :obj:`0`)
        reply_timeout (float, optional): seconds to wait for the replies of
            one exchange (``None``: no limit). (default: :obj:`None`)
        connect_timeout (float, optional): seconds to wait until
            the nodes are connected. (default: :obj:`120`)
        checkpoint (bool, optional): ask every client to save its state to
            its node's ``state-dir`` after each message (a checkpointed run,
            see :func:`~fedgraph.runtime.flower.run_server`).
            (default: :obj:`False`)
        accept_failures (bool, optional): go on without failed clients.
            (default: :obj:`False`)
        min_fit_nodes (int, optional): with ``accept_failures``, the fewest
            training replies a round may go on with (``0``: one).
            (default: :obj:`0`)
        min_available_nodes (int, optional): before each round, wait (up to
            ``connect_timeout``) until this many clients are connected
            (``0``: do not wait). (default: :obj:`0`)
        poll_interval (float, optional): seconds between two checks for
            replies. (default: :obj:`0.1`)
        wait_for_failed (float, optional): seconds an exchange waits for a
            failed client to come back and answer the same message again
            (``0``: no waiting). (default: :obj:`0`)
        packed (bool, optional): send every message in the packed layout
            (:func:`~fedgraph.runtime.flower.records.pack_content`: 3 Flower
            objects a message, 6 with tensors over one Flower array chunk,
            instead of 6 to 11); the clients answer
            in the same layout. (default: :obj:`False`)
    """

    def __init__(
        self,
        grid: Any,
        num_clients: int = 0,
        *,
        reply_timeout: float | None = None,
        connect_timeout: float = 120.0,
        checkpoint: bool = False,
        accept_failures: bool = False,
        min_fit_nodes: int = 0,
        min_available_nodes: int = 0,
        poll_interval: float = 0.1,
        wait_for_failed: float = 0.0,
        packed: bool = False,
    ) -> None:
        if num_clients < 0:
            raise ValueError(f"`num_clients` must be non-negative (got {num_clients})")
        self.grid = grid
        self.num_clients = int(num_clients)
        self.reply_timeout = reply_timeout
        self.connect_timeout = float(connect_timeout)
        self.nodes: dict[int, int] = {}  # client id -> node id
        #: client id -> the round whose state the client keeps for the test
        self.best_rounds: dict[int, int] = {}
        self.use_best = False
        self.checkpoint = bool(checkpoint)
        self.accept_failures = bool(accept_failures)
        self.min_fit_nodes = int(min_fit_nodes)
        self.min_available_nodes = int(min_available_nodes)
        self.poll_interval = float(poll_interval)
        self.wait_for_failed = float(wait_for_failed)
        self.packed = bool(packed)
        #: client id -> the round of its last training reply (0: registered)
        self.trained: dict[int, int] = {}
        #: client id -> the round in which it was lost (until it rejoins)
        self.lost: dict[int, int] = {}
        #: client id -> the last round of an exchange it answered
        self.last_ok: dict[int, int] = {}
        self._events: list[dict[str, Any]] = []
        self._reasons: dict[int, str] = {}  # client id -> why it failed last
        self._probed: set[int] = set()  # nodes asked for their partition id
        self._returning: dict[int, int] = {}  # client id -> its new node id
        self._registered = False

    # ------------------------------------------------------------ helpers
    def _online(self) -> list[int]:
        return sorted(int(n) for n in self.grid.get_node_ids())

    def _content(self, payload: Payload, control: Mapping[str, Any]) -> Any:
        return to_content(payload, control, packed=self.packed)

    def _wait_for_nodes(self, count: int) -> list[int]:
        deadline = time.monotonic() + self.connect_timeout
        while True:
            nodes = self._online()
            if len(nodes) >= count:
                return nodes
            if time.monotonic() >= deadline:
                raise ClientReplyError(
                    f"Only {len(nodes)} of {count} SuperNodes connected "
                    f"within {self.connect_timeout:.0f} s; the run stops."
                )
            time.sleep(min(1.0, 10 * self.poll_interval))

    def _messages(
        self, message_type: str, server_round: int, contents: Mapping[int, Any]
    ) -> dict[str, int]:
        r"""Pushes one message per node; returns message id → node id."""
        from flwr.app import Message

        messages = [
            Message(content, node, message_type, group_id=str(server_round))
            for node, content in contents.items()
        ]
        ids = list(self.grid.push_messages(messages))
        return {
            mid: int(m.metadata.dst_node_id)
            for mid, m in zip(ids, messages, strict=True)
        }

    def _send(
        self,
        message_type: str,
        server_round: int,
        contents: Mapping[int, Any],
        *,
        watch: bool = False,
    ) -> tuple[dict[int, Any], dict[int, str]]:
        r"""node id → content; returns (node id → error-free reply, node id →
        failure reason). Replies are pulled every ``poll_interval``
        seconds; with ``watch`` (a registered federation) nodes that go
        offline, or whose client reconnects on a new node, fail at once."""
        if not contents:
            return {}, {}
        pushed = time.time()
        pending = self._messages(message_type, server_round, contents)
        arrived: dict[int, float] = {}  # node id -> epoch seconds of its reply
        replies: dict[int, Any] = {}
        failed: dict[int, str] = {}
        deadline = (
            None
            if self.reply_timeout is None
            else time.monotonic() + self.reply_timeout
        )
        next_check = time.monotonic() + 1.0
        while pending:
            for reply in self.grid.pull_messages(list(pending)):
                node = pending.pop(reply.metadata.reply_to_message_id, None)
                if node is None:
                    continue
                arrived[node] = time.time()
                if reply.has_error():
                    failed[node] = f"{reply.error.reason} (code {reply.error.code})"
                else:
                    replies[node] = reply
            if not pending:
                break
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                for node in pending.values():
                    failed[node] = f"no reply within {self.reply_timeout} s"
                break
            if watch and now >= next_check:
                next_check = now + 1.0
                online = set(self._online())
                replaced = self._probe_new_nodes(online, server_round)
                for mid, node in list(pending.items()):
                    if node not in online:
                        failed[node] = "its SuperNode went offline"
                        del pending[mid]
                    elif node in replaced:
                        failed[node] = (
                            f"its SuperNode restarted as node {replaced[node]}"
                        )
                        del pending[mid]
            time.sleep(self.poll_interval)
        _log_timing(message_type, server_round, pushed, arrived)
        return replies, failed

    def _who(self, node: int) -> str:
        for c, n in self.nodes.items():
            if n == node:
                return f"client {c} (partition-id {c}, node {node})"
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
        self._reasons = {}  # failures of this exchange only
        self._rejoin(server_round)
        if message_type == TRAIN and self.min_available_nodes:
            self._wait_for_available(server_round)
        reach = self._skip_lost(payloads, server_round, message_type)
        replies, failed = self._send(
            message_type,
            server_round,
            {
                self.nodes[c]: self._content(
                    payloads[c], self._control(server_round, c, **extra)
                )
                for c in reach
            },
            watch=True,
        )
        self._record_failures(failed, server_round, message_type)
        if failed and self.wait_for_failed > 0:
            by_node = {n: c for c, n in self.nodes.items()}

            def content(c: int) -> Any:
                return self._content(
                    payloads[c], self._control(server_round, c, **extra)
                )

            again = self._retry(
                message_type, server_round, [by_node[n] for n in failed], content
            )
            for c, reply in again.items():
                replies[self.nodes[c]] = reply
        answered = [c for c in reach if self.nodes[c] in replies]
        for c in answered:
            self.last_ok[c] = server_round
            if message_type == TRAIN:
                self.trained[c] = server_round
        self._check_missing(payloads, answered, failed, server_round, message_type)
        # In the order of the payloads: the strategy aggregates in this order.
        return {c: from_content(replies[self.nodes[c]].content)[0] for c in answered}

    def _strict(
        self, message_type: str, server_round: int, contents: Mapping[int, Any]
    ) -> dict[int, Any]:
        replies, failed = self._send(message_type, server_round, contents)
        for node, reason in sorted(failed.items()):
            raise ClientReplyError(
                f"{self._who(node)} failed on '{message_type}' in round "
                f"{server_round}: {reason}; the run stops."
            )
        return replies

    # ------------------------------------------------------------ Transport
    def client_ids(self) -> list[int]:
        return sorted(self.nodes)

    def pop_events(self) -> list[dict[str, Any]]:
        out, self._events = self._events, []
        return out

    def align(self, alignment: Any) -> Any:
        r"""The alignment step (:mod:`~fedgraph.runtime.flower.alignment`):
        waits for ``num_clients`` nodes (at least one, when the run config
        does not give the number), asks each what the server needs to know,
        waits for the rest of the federation the nodes report, and maps
        clients to nodes. Returns the :class:`AlignedRun`."""
        from fedgraph.runtime.flower.protocol import ALIGN

        def exchange(requests: Mapping[int, Any]) -> dict[int, Any]:
            replies = self._strict(
                ALIGN,
                0,
                {n: self._content(Payload(), dict(r)) for n, r in requests.items()},
            )
            return {n: from_content(m.content)[1] for n, m in replies.items()}

        nodes = self._wait_for_nodes(max(1, self.num_clients))
        aligned = alignment.align(exchange, nodes)
        if len(aligned.nodes) < aligned.num_clients:
            nodes = self._wait_for_nodes(aligned.num_clients)
            aligned = alignment.align(exchange, nodes)
        if self.num_clients and aligned.num_clients != self.num_clients:
            raise ClientReplyError(
                f"Run-config key `num-clients` is {self.num_clients} but the nodes "
                f"hold a partition of {aligned.num_clients} clients; the run stops."
            )
        missing = sorted(set(range(aligned.num_clients)) - set(aligned.nodes))
        if missing:
            raise ClientReplyError(f"No SuperNode registered as clients {missing}")
        self.num_clients = aligned.num_clients
        self.nodes = dict(sorted(aligned.nodes.items()))
        self._probed.update(nodes)
        return aligned

    def register(self, resume_round: int | None = None) -> dict[int, Payload]:
        r"""Asks every client's node for its registration payload (a KGE
        client: its entity ids). With ``resume_round`` (a resumed run) each
        client first restores the state it saved for that round (a
        best-round state it had not yet promoted is promoted by the next
        message, which carries its best round). Without a preceding
        :meth:`align` the nodes are mapped by the partition ids they report
        here."""
        if not self.nodes:
            nodes = self._wait_for_nodes(max(1, self.num_clients))
        else:
            nodes = [self.nodes[c] for c in sorted(self.nodes)]
        extra = {} if resume_round is None else {RESUME_ROUND: int(resume_round)}
        control = self._control(0, **extra)
        replies = self._strict(
            REGISTER, 0, {n: self._content(Payload(), control) for n in nodes}
        )
        regs: dict[int, tuple[int, Payload]] = {}
        for node in nodes:
            payload, control = from_content(replies[node].content)
            cid = control.get(PARTITION_ID)
            limit = self.num_clients or len(nodes)
            if not isinstance(cid, int) or not 0 <= cid < limit:
                raise ClientReplyError(
                    f"Node {node} registered with partition id {cid!r}; expected "
                    f"one of 0 … {limit - 1}."
                )
            if cid in regs:
                raise ClientReplyError(
                    f"Nodes {regs[cid][0]} and {node} both registered as client "
                    f"{cid}: give each SuperNode its own --node-config "
                    '"partition-id=K".'
                )
            if self.nodes and self.nodes.get(cid) != node:
                raise ClientReplyError(
                    f"Node {node} registered as client {cid} but aligned as "
                    f"another; the run stops."
                )
            regs[cid] = (node, payload)
        if self.num_clients and len(regs) != self.num_clients:
            absent = sorted(set(range(self.num_clients)) - set(regs))
            raise ClientReplyError(f"No SuperNode registered as clients {absent}")
        self.nodes = {c: regs[c][0] for c in sorted(regs)}
        if resume_round is None:  # a resumed client's round is its snapshot's
            self.trained = {c: 0 for c in self.nodes}
        self.num_clients = len(self.nodes)
        self._probed.update(self.nodes.values())
        self._registered = True
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
        replies carry :func:`~fedgraph.runtime.flower.fusion.fusion_to_metrics`."""
        return self._exchange(FUSE, server_round, payloads, **{USE_BEST: self.use_best})

    def keep_best(
        self, server_round: int, clients: Sequence[int] | None = None
    ) -> None:
        for c in self.client_ids() if clients is None else clients:
            self.best_rounds[int(c)] = int(server_round)

    def restore_best(self) -> None:
        self.use_best = True


__all__ = ["GridTransport"]
