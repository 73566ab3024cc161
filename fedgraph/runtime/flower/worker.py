r"""The process-lived side of :mod:`fedgraph.runtime.flower.node`: serves a
fedgraph ``ClientApp`` on a local Unix socket, one message at a time.

``python -m fedgraph.cli.flower_worker --target MODULE:ATTR --address
SOCKET --parent PID`` (:func:`serve`, started by :class:`~fedgraph.runtime.flower.node.WorkerClientApp`).
Each connection carries one message and its node's ``Context``; the worker
runs the ``ClientApp`` on them and sends back the reply (or the error text,
which the forwarding ``ClientApp`` raises, so the server gets Flower's usual
error reply).

The client state the ``ClientApp`` keeps in ``context.state`` stays here
(:class:`NodeStates`): in memory for the next message of the same run and
node, and in an on-disk snapshot written after every successful message, so
a restarted worker goes on where the last one stopped. Neither direction of
a message carries it, so a message costs its payload only, whatever the
size of the client state. A message that fails leaves the state of the last
successful one (what a SuperNode does with ``context.state``).

The worker exits when ``PID`` is gone (and then deletes its snapshots: the
SuperNode that owned them is gone too) or after ``FEDGRAPH_WORKER_IDLE``
seconds (default 3600) without a message (keeping them).
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from multiprocessing.connection import Listener
from pathlib import Path
from typing import Any


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class NodeStates:
    r"""The ``context.state`` of every ``(run id, node id)`` a worker serves:
    the last one in memory, each also on disk as
    ``{folder}/run{run_id}-node{node_id}.bin`` (Flower's ``RecordDict``
    protobuf, written atomically).

    Args:
        folder (Path): the private folder of the snapshots (created mode
            ``0700``).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.held: dict[tuple[int, int], Any] = {}
        self.unsaved: set[tuple[int, int]] = set()

    def path(self, key: tuple[int, int]) -> Path:
        return self.folder / f"run{int(key[0])}-node{int(key[1])}.bin"

    def get(self, key: tuple[int, int]) -> Any:
        r"""The state of ``key``: from memory, else from its snapshot, else
        :obj:`None`. States of other runs leave memory (they stay on disk)."""
        from flwr.common.serde import recorddict_from_proto
        from flwr.proto.recorddict_pb2 import RecordDict as ProtoRecordDict

        for other in [k for k in self.held if k[0] != key[0]]:
            del self.held[other]
        if key not in self.held:
            path = self.path(key)
            if not path.exists():
                return None
            proto = ProtoRecordDict.FromString(path.read_bytes())
            self.held[key] = recorddict_from_proto(proto)
        return self.held[key]

    def put(self, key: tuple[int, int], records: Any) -> None:
        r"""Holds ``records`` as the state of ``key`` (:meth:`save` writes it)."""
        self.held[key] = records
        self.unsaved.add(key)

    def forget(self, key: tuple[int, int]) -> None:
        r"""Drops the in-memory state of ``key`` (the next message reads the
        snapshot of the last successful one)."""
        self.held.pop(key, None)
        self.unsaved.discard(key)

    def save(self) -> None:
        r"""Writes the states changed since the last call to their snapshots."""
        from flwr.common.serde import recorddict_to_proto

        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        for key in sorted(self.unsaved):
            if key in self.held:
                path = self.path(key)
                tmp = path.with_suffix(f".tmp{os.getpid()}")
                data = recorddict_to_proto(self.held[key]).SerializeToString()
                tmp.write_bytes(data)
                os.replace(tmp, path)
        self.unsaved.clear()

    def remove(self) -> None:
        r"""Deletes every snapshot (the folder)."""
        self.held.clear()
        self.unsaved.clear()
        shutil.rmtree(self.folder, ignore_errors=True)


def handle(app: Any, request: tuple, states: NodeStates) -> tuple[bool, Any]:
    r"""Runs ``app`` on one forwarded message with the node's state from
    ``states``: ``(True, (root, objects))`` or ``(False, error text)``."""
    from flwr.common.serde import context_from_proto
    from flwr.proto.message_pb2 import Context as ProtoContext
    from flwr.supercore.task_identity import TaskIdentity

    from fedgraph.runtime.flower.failures import log_node_error, node_error_reason
    from fedgraph.runtime.flower.node import from_wire, to_wire

    key = None
    try:
        root, contents, message_id, ctx = request
        message = from_wire(root, contents, message_id)
        context = context_from_proto(ProtoContext.FromString(ctx))
        key = (int(context.run_id), int(context.node_id))
        held = states.get(key)
        if held is not None:
            context.state = held
        TaskIdentity.run_id = context.run_id
        TaskIdentity.node_id = context.node_id
        reply = app(message, context)
        if reply.has_error():
            states.forget(key)
            return False, reply.error.reason
        states.put(key, context.state)
        root, contents = to_wire(reply)
        return True, (root, contents)
    except Exception as exc:  # reported to the server as the node's error
        if key is not None:
            states.forget(key)
        log_node_error(exc)  # the detail stays in the node's log
        return False, node_error_reason(exc)


def serve(target: str, address: str, parent: int, idle: float) -> None:
    r"""Serves ``target`` (``"module:attribute"``) on ``address`` until
    ``parent`` exits or ``idle`` seconds pass without a message; node states
    are kept in ``{address without suffix}.state/``."""
    from fedgraph.runtime.flower.node import load_target

    app = load_target(target)
    path = Path(address)
    key = path.with_suffix(".key").read_bytes()
    path.unlink(missing_ok=True)
    listener = Listener(str(path), family="AF_UNIX", authkey=key)
    os.chmod(path, 0o600)
    states = NodeStates(path.with_suffix(".state"))
    last = [time.monotonic()]

    def watch() -> None:
        while _alive(parent) and time.monotonic() - last[0] < idle:
            time.sleep(1.0)
        if not _alive(parent):
            states.remove()
        path.unlink(missing_ok=True)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()
    print(f"fedgraph worker {os.getpid()} serving {target} on {path}", flush=True)
    while True:
        try:
            conn = listener.accept()
        except Exception as exc:  # a client that failed the handshake
            print(f"rejected a connection: {exc}", flush=True)
            continue
        with conn:
            last[0] = time.monotonic()
            try:
                request = conn.recv()
            except EOFError:
                continue
            if request is None:  # WorkerClientApp.stop()
                path.unlink(missing_ok=True)
                os._exit(0)
            start = time.perf_counter()
            answer = handle(app, request, states)
            handled = time.perf_counter()
            conn.send(answer)
        states.save()  # after the reply: written while the server waits for others
        print(
            f"{time.time():.3f} message {'done' if answer[0] else 'failed'}: "
            f"handled in {handled - start:.3f} s, state saved in "
            f"{time.perf_counter() - handled:.3f} s",
            flush=True,
        )
        last[0] = time.monotonic()
