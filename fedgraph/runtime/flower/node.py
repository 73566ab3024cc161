r"""Process-lived ``ClientApp``: the fedgraph client of a SuperNode lives in
one worker process across messages.

A SuperNode runs every message in a fresh ``flwr-clientapp`` process (flwr
1.x, ``subprocess`` and ``process`` isolation alike), which would import
torch, PyG and fedgraph, reread the partition and rebuild the client for
every message. The apps here (:data:`kge_app`, :data:`rgcn_app`,
:data:`text_app`) import only
Flower: each forwards its message and ``Context`` over a local Unix socket
to a worker process (:mod:`fedgraph.runtime.flower.worker`) that runs the
real fedgraph ``ClientApp`` and answers with the reply and the updated
``Context``. The worker is started by the first message of a SuperNode and
serves all later ones: imports, the partition and the built models stay in
memory. It stops when the process that launched the ``ClientApp`` processes
(the SuperNode's ``flower-superexec``) is gone, or after ``idle`` seconds
without a message (``FEDGRAPH_WORKER_IDLE``, default 3600).

The client state (``context.state`` of the fedgraph ``ClientApp``) stays
in the worker, in memory and in an on-disk snapshot written after every
message (:class:`~fedgraph.runtime.flower.worker.NodeStates`), so a worker
that is restarted while its SuperNode lives goes on where it stopped. The
SuperNode's own ``context.state`` stays empty: a message carries its payload
only, in both directions, whatever the size of the client state (tens of MB
for FedE on FedLU's FB15k-237 partitions, which Flower pushes whole with
every message otherwise). A restarted SuperNode starts a new worker without
state, as it would start without ``context.state``. Numbers are those of
``fedgraph.runtime.flower.client_app`` (:mod:`tests.runtime.test_flower_faults`
checks this through a real worker process).

Socket and key live in a private folder (mode ``0700``):
``$FEDGRAPH_WORKER_DIR``, default ``{tempdir}/fedgraph-workers-{uid}``; the
connection is authenticated with a random key (``multiprocessing``'s
HMAC handshake), so only processes of the same user can use a worker.

This module imports only Flower and the standard library (keep it so).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import secrets
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import Client as _connect
from pathlib import Path
from typing import Any

from flwr.clientapp import ClientApp

#: the fedgraph ``ClientApp`` objects a worker can serve.
TARGETS = {
    "kge": "fedgraph.runtime.flower.client_app:app",
    "rgcn": "fedgraph.runtime.flower.rgcn:client_app",
    "text": "fedgraph.runtime.flower.text:client_app",
}


def app_reference(target: str) -> str:
    r"""The ``"package.module:attribute"`` of the fedgraph ``ClientApp`` that
    ``target`` names: a name of :data:`TARGETS`, or such a reference itself."""
    return TARGETS.get(target, target)


def load_target(target: str) -> Any:
    r"""The fedgraph ``ClientApp`` that ``target`` names
    (:func:`app_reference`), imported: what a worker or the executor runs in
    place of a :class:`WorkerClientApp`."""
    module, _, attr = app_reference(target).partition(":")
    return getattr(importlib.import_module(module), attr)


def to_wire(message: Any) -> tuple[str, dict[str, bytes]]:
    r"""The message as Flower's objects: ``(root object id, {id: bytes})``."""
    from flwr.supercore.inflatable.inflatable_object import get_all_nested_objects

    objects = get_all_nested_objects(message)
    return message.object_id, {oid: obj.deflate() for oid, obj in objects.items()}


def from_wire(root: str, contents: dict[str, bytes], message_id: str) -> Any:
    r"""Inverse of :func:`to_wire`; the message id is set as the receiving
    end of a SuperLink sets it."""
    from flwr.supercore.inflatable.inflatable_utils import (
        inflate_object_from_contents,
    )

    message = inflate_object_from_contents(root, dict(contents))
    message.metadata.__dict__["_message_id"] = message_id
    return message


def worker_dir() -> Path:
    r"""The private folder of the workers' sockets, keys and logs."""
    default = Path(tempfile.gettempdir()) / f"fedgraph-workers-{os.getuid()}"
    folder = Path(os.environ.get("FEDGRAPH_WORKER_DIR", default))
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    return folder


def worker_address(target: str, parent: int) -> Path:
    r"""The socket of the worker serving ``target`` for the launcher
    process ``parent`` (one worker per SuperNode)."""
    key = hashlib.sha1(f"{target}|{parent}".encode()).hexdigest()[:16]
    return worker_dir() / f"{key}.sock"


def _start_worker(target: str, address: Path, parent: int) -> None:
    key_file = address.with_suffix(".key")
    key_file.write_bytes(secrets.token_bytes(32))
    os.chmod(key_file, 0o600)
    log = open(address.with_suffix(".log"), "ab")
    subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fedgraph.cli.flower_worker",
            "--target",
            app_reference(target),
            "--address",
            str(address),
            "--parent",
            str(parent),
        ],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # outlives this flwr-clientapp process
    )


def _client(target: str, parent: int, start_timeout: float) -> Any:
    address = worker_address(target, parent)
    key_file = address.with_suffix(".key")
    started = False
    deadline = time.monotonic() + start_timeout
    while True:
        try:
            if address.exists() and key_file.exists():
                return _connect(
                    str(address), family="AF_UNIX", authkey=key_file.read_bytes()
                )
        except (ConnectionRefusedError, FileNotFoundError, EOFError):
            pass
        if not started:
            address.unlink(missing_ok=True)
            _start_worker(target, address, parent)
            started = True
        if time.monotonic() >= deadline:
            raise RuntimeError(
                f"The fedgraph worker at {address} did not start within "
                f"{start_timeout:.0f} s (log: {address.with_suffix('.log')})"
            )
        time.sleep(0.2)


class WorkerClientApp(ClientApp):
    r"""A ``ClientApp`` that hands every message to the process-lived worker
    of its SuperNode (started on first use) and returns its reply. The
    client state stays in the worker; ``context.state`` is left as it is.

    Args:
        target (str): ``"kge"``, ``"rgcn"`` or ``"text"`` (:data:`TARGETS`),
            or the ``"package.module:attribute"`` of another fedgraph
            ``ClientApp`` (e.g. ``fedgraph.privacy.flower``'s).
        start_timeout (float, optional): seconds to wait for a new worker
            (it imports torch and fedgraph). (default: :obj:`600`)
        parent (int, optional): the process whose end stops the worker
            (default: :obj:`None`, the parent of the calling process: the
            SuperNode's ``flower-superexec``).
    """

    def __init__(
        self, target: str, start_timeout: float = 600.0, parent: int | None = None
    ) -> None:
        super().__init__()
        if target not in TARGETS and ":" not in target:
            raise ValueError(
                f"`target` must be one of {sorted(TARGETS)} or a "
                f"'package.module:attribute' ClientApp (got {target!r})"
            )
        self.target = target
        self.start_timeout = float(start_timeout)
        self.parent = parent

    def _parent(self) -> int:
        return os.getppid() if self.parent is None else int(self.parent)

    def stop(self) -> bool:
        r"""Asks this app's worker to exit; :obj:`False` if none runs."""
        address = worker_address(self.target, self._parent())
        try:
            key = address.with_suffix(".key").read_bytes()
            with _connect(str(address), family="AF_UNIX", authkey=key) as conn:
                conn.send(None)
        except (OSError, EOFError):
            return False
        return True

    def __call__(self, message: Any, context: Any) -> Any:
        from flwr.common.serde import context_to_proto

        conn = _client(self.target, self._parent(), self.start_timeout)
        with conn:
            root, contents = to_wire(message)
            conn.send(
                (
                    root,
                    contents,
                    message.metadata.message_id,
                    context_to_proto(context).SerializeToString(),
                )
            )
            ok, answer = conn.recv()
        if not ok:
            raise RuntimeError(answer)
        root, contents = answer
        return from_wire(root, contents, root)


#: ``[tool.flwr.app.components] clientapp = "fedgraph.runtime.flower.node:kge_app"``.
kge_app = WorkerClientApp("kge")
#: ``clientapp = "fedgraph.runtime.flower.node:rgcn_app"`` (Fed-RGCN).
rgcn_app = WorkerClientApp("rgcn")
#: ``clientapp = "fedgraph.runtime.flower.node:text_app"`` (FedMKGC).
text_app = WorkerClientApp("text")

__all__ = [
    "TARGETS", "WorkerClientApp", "app_reference", "kge_app", "load_target",
    "rgcn_app", "text_app", "to_wire", "from_wire",
]  # fmt: skip
