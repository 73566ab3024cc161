r"""How a :class:`~fedgraph.runtime.flower.GridTransport` handles clients
that fail in an exchange: recording and skipping them, letting restarted
SuperNodes rejoin, waiting for them (``min-available-nodes``,
``wait-for-failed``) and stopping the run when the failure settings say so
(see :class:`~fedgraph.runtime.flower.GridTransport` for the policy);
and what a node tells the server when its ``ClientApp`` fails
(:func:`node_error_reply`).

**A node's errors carry no data.** An exception on a node may quote what the
node holds: a line of a file the run config names, a path, a value of the
node config. The node logs it whole (Flower's logger, with the traceback)
and the server receives an error reply whose reason is the exception's class
name and :data:`NODE_ERROR_MESSAGE` only, whatever the exception says
(:func:`node_errors_mod`, the outermost mod of every fedgraph ``ClientApp``;
the worker and the executor answer their own failures the same way).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from logging import ERROR
from typing import Any

from fedgraph.federated.payload import Payload
from fedgraph.runtime.flower.protocol import (
    PARTITION_ID,
    REGISTER,
    REJOIN_ROUND,
    RESTORED_ROUND,
    TRAIN,
    ClientReplyError,
    from_content,
)

#: the reason a node's error reply gives, after the exception's class name.
NODE_ERROR_MESSAGE = "the client app failed on this node; the node's log has the detail"


def node_error_reason(exc: BaseException) -> str:
    r"""The reason the server receives for ``exc``: its class name (when it
    is a plain identifier, else ``"Exception"``) and
    :data:`NODE_ERROR_MESSAGE`; never the exception's text."""
    name = type(exc).__name__
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,79}", name):
        name = "Exception"
    return f"{name}: {NODE_ERROR_MESSAGE}"


def log_node_error(exc: BaseException) -> None:
    r"""Logs ``exc`` whole (text and traceback) on the node, at ERROR."""
    from flwr.common.logger import log

    log(
        ERROR,
        "fedgraph client app failed: %s: %s",
        type(exc).__name__,
        exc,
        exc_info=exc,
    )


def node_error_reply(message: Any, exc: BaseException) -> Any:
    r"""The error reply to ``message`` for ``exc``: logs the detail on the
    node (:func:`log_node_error`) and answers with
    :func:`node_error_reason` only (Flower's
    ``CLIENT_APP_RAISED_EXCEPTION``)."""
    from flwr.app import Error, Message
    from flwr.common.constant import ErrorCode

    log_node_error(exc)
    error = Error(
        code=ErrorCode.CLIENT_APP_RAISED_EXCEPTION, reason=node_error_reason(exc)
    )
    return Message(error, reply_to=message)


def node_errors_mod(message: Any, context: Any, call_next: Any) -> Any:
    r"""A Flower mod: the reply of ``call_next``, or, when it raises, the
    :func:`node_error_reply` to ``message``."""
    try:
        return call_next(message, context)
    except Exception as exc:  # the node's error reply, without its text
        return node_error_reply(message, exc)


def outliving_a_lost_node(wait_for_failed: float, checkpoint: bool) -> str:
    r"""The settings that would have let a run outlive a lost node, for the
    error that stops it: ``wait-for-failed`` (an exchange waits for the
    node to come back) and, for the restarted node to restore its snapshot,
    ``checkpoint-dir`` and ``run-name`` in the run config and a
    ``state-dir`` in every node's config."""
    snapshots = (
        "`checkpoint-dir` and `run-name` in the run config and a `state-dir` "
        "in every node's config"
    )
    if wait_for_failed <= 0 and not checkpoint:
        return (
            "to outlive a lost node, set `wait-for-failed` (seconds an exchange "
            f"waits for the node to come back) with {snapshots} (a restarted "
            "node restores its snapshot)"
        )
    if wait_for_failed <= 0:
        return (
            "to outlive a lost node, set `wait-for-failed` (seconds an exchange "
            "waits for the node to come back; this run's checkpoints let a "
            "restarted node restore its snapshot), or start the run again with "
            "`resume = true`"
        )
    if not checkpoint:
        return (
            f"`wait-for-failed` waited {wait_for_failed:g} s, but a restarted "
            f"node restores its snapshot only with {snapshots}"
        )
    return (
        f"the node did not come back within `wait-for-failed` {wait_for_failed:g} "
        "s (restart it with the same `state-dir`, or start the run again with "
        "`resume = true`)"
    )


class FailureHandling:
    r"""The failure part of :class:`~fedgraph.runtime.flower.GridTransport`
    (a base class of it; it uses the transport's nodes, settings, events and
    ``_send``)."""

    nodes: dict[int, int]
    lost: dict[int, int]
    last_ok: dict[int, int]
    trained: dict[int, int]
    accept_failures: bool
    min_fit_nodes: int
    min_available_nodes: int
    connect_timeout: float
    poll_interval: float
    wait_for_failed: float
    checkpoint: bool
    _events: list[dict[str, Any]]
    _reasons: dict[int, str]
    _probed: set[int]
    _returning: dict[int, int]
    _registered: bool

    def _probe_new_nodes(self, online: set[int], server_round: int) -> dict[int, int]:
        r"""Asks connected nodes never seen before for their partition id;
        a client that reconnects on a new node is noted to rejoin at the
        next exchange. Returns old node id → new node id for those."""
        known = set(self.nodes.values()) | self._probed
        new = sorted(online - known)
        if not new:
            return {}
        self._probed.update(new)
        from fedgraph.runtime.flower.protocol import ALIGN

        replies, _ = self._send(
            ALIGN, server_round, {n: self._content(Payload(), {}) for n in new}
        )
        replaced: dict[int, int] = {}
        for node, reply in replies.items():
            cid = from_content(reply.content)[1].get(PARTITION_ID)
            if isinstance(cid, int) and cid in self.nodes:
                self._returning[cid] = node
                replaced[self.nodes[cid]] = node
        return replaced

    def _rejoin(self, server_round: int) -> None:
        r"""Lets clients whose SuperNode reconnected rejoin before this
        exchange."""
        if not self._registered:
            return
        self._probe_new_nodes(set(self._online()), server_round)
        if not self._returning:
            return
        back = dict(self._returning)
        self._returning.clear()
        self._register_again(server_round, back)

    def _register_again(
        self, server_round: int, back: Mapping[int, int]
    ) -> dict[int, int]:
        r"""Sends ``"query.register"`` with ``rejoin-round`` to each client's
        node of ``back`` (client id → node id): the client keeps its state if
        it still has one, else restores its newest snapshot (a checkpointed
        run), else starts from its initial state. Returns client id → the
        round its state is at, for those that answered."""
        restored: dict[int, int] = {}
        contents = {
            node: self._content(
                Payload(),
                self._control(
                    server_round, c, **{REJOIN_ROUND: self.last_ok.get(c, 0)}
                ),
            )
            for c, node in back.items()
        }
        replies, failed = self._send(REGISTER, server_round, contents)
        for c, node in back.items():
            if node in replies:
                control = from_content(replies[node].content)[1]
                self.nodes[c] = node
                self.lost.pop(c, None)
                restored[c] = int(control.get(RESTORED_ROUND, 0))
                self._events.append(
                    {
                        "event": "rejoined",
                        "client": c,
                        "round": server_round,
                        "node": node,
                        "restored_round": restored[c],
                    }
                )
            else:
                self._events.append(
                    {
                        "event": "failed",
                        "client": c,
                        "round": server_round,
                        "stage": "rejoin",
                        "reason": failed.get(node, "no reply"),
                    }
                )
        return restored

    def _wait_for_available(self, server_round: int) -> None:
        r"""``min_available_nodes``: waits for lost clients to rejoin."""
        need = min(self.min_available_nodes, len(self.nodes))
        deadline = time.monotonic() + self.connect_timeout
        while len(self.nodes) - len(self.lost) < need:
            if time.monotonic() >= deadline:
                raise ClientReplyError(
                    f"Round {server_round}: {len(self.nodes) - len(self.lost)} "
                    f"clients connected, min-available-nodes is {need} (lost: "
                    + ", ".join(
                        f"client {c} in round {r}" for c, r in sorted(self.lost.items())
                    )
                    + f"; waited {self.connect_timeout:.0f} s); the run stops."
                )
            time.sleep(1.0)
            self._rejoin(server_round)

    def _skip_lost(
        self, payloads: Mapping[int, Payload], server_round: int, message_type: str
    ) -> list[int]:
        r"""The clients to send to: those not lost (the lost ones are logged
        as skipped)."""
        reach = [c for c in payloads if c not in self.lost]
        for c in payloads:
            if c in self.lost:
                self._events.append(
                    {
                        "event": "skipped",
                        "client": c,
                        "round": server_round,
                        "stage": message_type,
                        "reason": f"lost in round {self.lost[c]}, not back yet",
                    }
                )
        return reach

    def _record_failures(
        self, failed: Mapping[int, str], server_round: int, message_type: str
    ) -> None:
        r"""Marks the clients of the ``failed`` nodes lost this round, logged."""
        by_node = {n: c for c, n in self.nodes.items()}
        for node, reason in sorted(failed.items()):
            c = by_node[node]
            self.lost[c] = server_round
            self._reasons[c] = reason
            self._events.append(
                {
                    "event": "failed",
                    "client": c,
                    "round": server_round,
                    "stage": message_type,
                    "node": node,
                    "reason": reason,
                }
            )

    def _check_missing(
        self,
        payloads: Mapping[int, Payload],
        answered: list[int],
        failed: Mapping[int, str],
        server_round: int,
        message_type: str,
    ) -> None:
        r"""Stops the run when a client did not answer, unless failures are
        accepted and enough answered (``min-fit-nodes`` for training)."""
        missing = [c for c in payloads if c not in answered]
        if missing:
            need = max(1, self.min_fit_nodes) if message_type == TRAIN else 1
            if not self.accept_failures or len(answered) < need:
                why = "; ".join(
                    f"{self._who(self.nodes[c])}: "
                    + (
                        failed.get(self.nodes[c])
                        or self._reasons.get(c)
                        or f"lost in round {self.lost[c]}"
                    )
                    for c in missing
                )
                policy = (
                    "accept-failures is off"
                    if not self.accept_failures
                    else f"{len(answered)} replies, fewer than min-fit-nodes {need}"
                )
                outlive = outliving_a_lost_node(self.wait_for_failed, self.checkpoint)
                raise ClientReplyError(
                    f"Round {server_round}, '{message_type}': {why} ({policy}); "
                    f"the run stops; {outlive}."
                )

    def _retry(
        self,
        message_type: str,
        server_round: int,
        clients: Sequence[int],
        content: Any,
    ) -> dict[int, Any]:
        r"""``wait_for_failed``: waits for each failed client of ``clients``
        to be reachable, has it rejoin and sends it ``content(client)``
        again, until it answers or ``wait_for_failed`` seconds have passed.
        Returns client id → reply."""
        deadline = time.monotonic() + self.wait_for_failed
        todo, got = list(clients), {}
        while todo:
            online = set(self._online())
            self._probe_new_nodes(online, server_round)
            ready = {
                c: self._returning.pop(c, self.nodes[c])
                for c in todo
                if c in self._returning or self.nodes[c] in online
            }
            restored = self._register_again(server_round, ready) if ready else {}
            redo = [
                c
                for c in restored
                if self._same_state(c, restored[c], todo, server_round)
            ]
            replies, failed = self._send(
                message_type,
                server_round,
                {self.nodes[c]: content(c) for c in redo},
                watch=True,
            )
            self._record_failures(failed, server_round, message_type)
            for c in redo:
                if self.nodes[c] in replies:
                    got[c] = replies[self.nodes[c]]
                    todo.remove(c)
                    self._events.append(
                        {
                            "event": "retried",
                            "client": c,
                            "round": server_round,
                            "stage": message_type,
                            "node": self.nodes[c],
                        }
                    )
            if not todo or time.monotonic() >= deadline:
                break
            time.sleep(min(1.0, 10 * self.poll_interval))
        for c in todo:
            self.lost.setdefault(c, server_round)
        return got

    def _same_state(
        self, c: int, restored: int, todo: list[int], server_round: int
    ) -> bool:
        r"""Whether client ``c`` came back with the state of its last training
        round (unknown in a resumed run before it trains: taken as yes); if
        not, it is dropped from ``todo`` with an event: it misses this
        exchange, and takes part again from the next one (as a client that
        rejoins without waiting does)."""
        expected = self.trained.get(c)
        if expected is None or restored == expected:
            return True
        todo.remove(c)
        self._reasons[c] = (
            f"back with its state of round {restored}, the exchange started "
            f"from round {expected}"
        )
        self._events.append(
            {
                "event": "failed",
                "client": c,
                "round": server_round,
                "stage": "retry",
                "reason": self._reasons[c],
            }
        )
        return False


__all__ = [
    "FailureHandling",
    "NODE_ERROR_MESSAGE",
    "log_node_error",
    "node_error_reason",
    "node_error_reply",
    "node_errors_mod",
    "outliving_a_lost_node",
]
