r"""The process-lived side of :mod:`fedgraph.runtime.flower.node`: serves a
fedgraph ``ClientApp`` on a local Unix socket, one message at a time.

``python -m fedgraph.runtime.flower.worker --target MODULE:ATTR --address
SOCKET --parent PID`` (started by :class:`~fedgraph.runtime.flower.node.WorkerClientApp`).
Each connection carries one message and its node's ``Context``; the worker
runs the ``ClientApp`` on them and sends back the reply and the updated
``Context`` (or the error text, which the forwarding ``ClientApp`` raises,
so the server gets Flower's usual error reply). It exits when ``PID`` is
gone or after ``FEDGRAPH_WORKER_IDLE`` seconds (default 3600) without a
message.
"""

from __future__ import annotations

import argparse
import importlib
import os
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


def handle(app: Any, request: tuple) -> tuple[bool, Any]:
    r"""Runs ``app`` on one forwarded message: ``(True, (root, objects,
    context bytes))`` or ``(False, error text)``."""
    from flwr.common.serde import context_from_proto, context_to_proto
    from flwr.proto.message_pb2 import Context as ProtoContext
    from flwr.supercore.task_identity import TaskIdentity

    from fedgraph.runtime.flower.node import from_wire, to_wire

    try:
        root, contents, message_id, ctx = request
        message = from_wire(root, contents, message_id)
        context = context_from_proto(ProtoContext.FromString(ctx))
        TaskIdentity.run_id = context.run_id
        TaskIdentity.node_id = context.node_id
        reply = app(message, context)
        if reply.has_error():
            return False, reply.error.reason
        root, contents = to_wire(reply)
        return True, (root, contents, context_to_proto(context).SerializeToString())
    except Exception as exc:  # reported to the server as the node's error
        return False, f"{type(exc).__name__}: {exc}"


def serve(target: str, address: str, parent: int, idle: float) -> None:
    r"""Serves ``target`` (``"module:attribute"``) on ``address`` until
    ``parent`` exits or ``idle`` seconds pass without a message."""
    module, _, attr = target.partition(":")
    app = getattr(importlib.import_module(module), attr)
    path = Path(address)
    key = path.with_suffix(".key").read_bytes()
    path.unlink(missing_ok=True)
    listener = Listener(str(path), family="AF_UNIX", authkey=key)
    os.chmod(path, 0o600)
    last = [time.monotonic()]

    def watch() -> None:
        while _alive(parent) and time.monotonic() - last[0] < idle:
            time.sleep(1.0)
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
            conn.send(handle(app, request))
            last[0] = time.monotonic()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--target", required=True)
    p.add_argument("--address", required=True)
    p.add_argument("--parent", type=int, required=True)
    args = p.parse_args(argv)
    idle = float(os.environ.get("FEDGRAPH_WORKER_IDLE", "3600"))
    serve(args.target, args.address, args.parent, idle)


if __name__ == "__main__":
    main()
