r"""A Flower ``Grid`` that delivers messages to ``ClientApp`` objects in this
process — the real apps, the real records, one ``Context`` per node, without
a SuperLink (Flower's own simulation engine needs Ray).

Everything but the network is Flower's: every message is taken apart into
Flower's content-addressed objects (``deflate``) and rebuilt from those bytes
(``inflate``) on each side, as a SuperLink transfer does, and each node's
``Context`` goes through its protobuf form after every message, as it does
between a SuperNode and its ``flwr-clientapp`` process. Messages are
handled one at a time, in the order sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from flwr.app import Context, Message, RecordDict
from flwr.app.error import Error
from flwr.common.constant import SUPERLINK_NODE_ID, ErrorCode
from flwr.common.serde import context_from_proto, context_to_proto
from flwr.serverapp import Grid
from flwr.supercore.run import Run
from flwr.supercore.task_identity import TaskIdentity

from fedgraph.runtime.flower.node import from_wire, to_wire


class LocalGrid(Grid):
    r"""An in-memory ``Grid`` over ``ClientApp`` callables.

    Args:
        client_app (ClientApp): called as ``client_app(message, context)``.
        node_configs (Sequence[Mapping]): one node config per SuperNode
            (e.g. ``{"partition-id": 0}``).
        run_config (Mapping): the run config every node sees.
        run_id (int, optional): (default: :obj:`1`)

    Attributes:
        contexts (dict[int, Context]): node id → that node's context.
        wire_bytes (dict[str, int]): bytes of Flower objects sent ``"down"``
            (server → nodes) and ``"up"``.
    """

    def __init__(
        self,
        client_app: Any,
        node_configs: Sequence[Mapping[str, Any]],
        run_config: Mapping[str, Any],
        *,
        run_id: int = 1,
    ) -> None:
        self.client_app = client_app
        self._run = Run.create_empty(run_id)
        self._run.override_config = dict(run_config)
        # Node ids count down, so that node order differs from partition order
        # (the server must map clients by the partition id they report).
        self.contexts: dict[int, Context] = {
            1000 - i: Context(
                run_id=run_id,
                node_id=1000 - i,
                node_config=dict(cfg),
                state=RecordDict(),
                run_config=dict(run_config),
            )
            for i, cfg in enumerate(node_configs)
        }
        self._replies: dict[str, tuple[str, dict[str, bytes]]] = {}
        #: node ids taken offline by :meth:`stop_node`
        self.offline: set[int] = set()
        self.wire_bytes = {"down": 0, "up": 0}
        #: Flower objects sent each way (each is one request per hop of a
        #: deployment)
        self.wire_objects = {"down": 0, "up": 0}
        # Messages are stamped with the identity of the process's task.
        TaskIdentity.run_id = run_id
        TaskIdentity.node_id = SUPERLINK_NODE_ID
        TaskIdentity.task_id = 1

    def set_run(self, run: Run) -> None:
        self._run = run

    @property
    def run(self) -> Run:
        return self._run

    def create_message(
        self,
        content: RecordDict,
        message_type: str,
        dst_node_id: int,
        group_id: str,
        ttl: float | None = None,
    ) -> Message:
        return Message(content, dst_node_id, message_type, ttl=ttl, group_id=group_id)

    def get_node_ids(self) -> Iterable[int]:
        return [n for n in self.contexts if n not in self.offline]

    def stop_node(self, node_id: int) -> None:
        r"""Takes node ``node_id`` offline, as a killed SuperNode: it is no
        longer listed, and a message to it gets the SuperLink's
        ``NODE_UNAVAILABLE`` error reply. Its context is dropped."""
        self.offline.add(int(node_id))

    def start_node(self, node_config: Mapping[str, Any]) -> int:
        r"""Connects a new node (a restarted SuperNode: a new node id and an
        empty ``context.state``); returns its node id."""
        node_id = min(self.contexts) - 1
        self.contexts[node_id] = Context(
            run_id=self._run.run_id,
            node_id=node_id,
            node_config=dict(node_config),
            state=RecordDict(),
            run_config=dict(self._run.override_config),
        )
        return node_id

    def _handle(self, message: Message) -> Message:
        context = self.contexts[message.metadata.dst_node_id]
        try:
            reply = self.client_app(message, context)
        except Exception as exc:  # a SuperNode reports it as an error reply
            reason = f"{type(exc).__name__}: {exc}"
            reply = Message(
                Error(code=ErrorCode.CLIENT_APP_RAISED_EXCEPTION, reason=reason),
                reply_to=message,
            )
        self.contexts[context.node_id] = context_from_proto(context_to_proto(context))
        return reply

    def push_messages(self, messages: Iterable[Message]) -> Iterable[str]:
        ids = []
        for message in messages:
            node = message.metadata.dst_node_id
            if node not in self.contexts:
                raise ValueError(f"No node {node} in this grid ({list(self.contexts)})")
            message_id = message.object_id
            message.metadata.__dict__["_message_id"] = message_id
            root, contents = to_wire(message)
            self.wire_bytes["down"] += sum(len(b) for b in contents.values())
            self.wire_objects["down"] += len(contents)
            if node in self.offline:  # what the SuperLink answers for it
                reply = Message(
                    Error(
                        code=ErrorCode.NODE_UNAVAILABLE,
                        reason="Error: Node Unavailable - The destination node is "
                        "currently unavailable.",
                    ),
                    reply_to=message,
                )
            else:
                reply = self._handle(from_wire(root, contents, message_id))
            root, contents = to_wire(reply)
            self.wire_bytes["up"] += sum(len(b) for b in contents.values())
            self.wire_objects["up"] += len(contents)
            self._replies[message_id] = (root, contents)
            ids.append(message_id)
        return ids

    def pull_messages(self, message_ids: Iterable[str]) -> Iterable[Message]:
        out = []
        for mid in message_ids:
            if mid in self._replies:
                root, contents = self._replies.pop(mid)
                out.append(from_wire(root, contents, root))
        return out

    def send_and_receive(
        self, messages: Iterable[Message], *, timeout: float | None = None
    ) -> Iterable[Message]:
        return self.pull_messages(self.push_messages(messages))


def run_local(
    server_app: Any,
    client_app: Any,
    run_config: Mapping[str, Any],
    num_nodes: int,
) -> LocalGrid:
    r"""Runs ``server_app`` against ``num_nodes`` in-process nodes with
    ``partition-id`` ``0 … num_nodes - 1``; returns the grid (its
    ``contexts`` hold each node's final ``context.state``)."""
    grid = LocalGrid(
        client_app, [{"partition-id": i} for i in range(num_nodes)], run_config
    )
    context = Context(
        run_id=grid.run.run_id,
        node_id=SUPERLINK_NODE_ID,
        node_config={},
        state=RecordDict(),
        run_config=dict(run_config),
    )
    server_app(grid, context)
    return grid


__all__ = ["LocalGrid", "run_local", "to_wire", "from_wire"]
