r"""Errors that cross to the server carry no data.

The finding: a client's exception text was sent to the server and logged
there, so a run config whose ``data`` names another file on the node
returned that file's line (``SECRET-API-KEY=...``) in the server's error.
A node now logs the exception whole and the server receives its class name
and a fixed message only. The federation secret of private alignment, which
must not leave the client nodes either, is written readable by its owner
only.
"""

from __future__ import annotations

import json
import logging
import os
import stat

import pytest

pytest.importorskip("flwr")

from flwr.app import Message  # noqa: E402
from flwr.common.constant import ErrorCode  # noqa: E402

from fedgraph.federated import Payload  # noqa: E402
from fedgraph.runtime.flower import ClientReplyError, LocalGrid, run_server  # noqa: E402
from fedgraph.runtime.flower.client_app import app as client_app  # noqa: E402
from fedgraph.runtime.flower.failures import (  # noqa: E402
    NODE_ERROR_MESSAGE,
    node_error_reason,
    node_error_reply,
)
from fedgraph.runtime.flower.federation import load_federation  # noqa: E402
from fedgraph.runtime.flower.protocol import to_content  # noqa: E402

SECRET = "SECRET-API-KEY=sk-4f1d9c2b7e"
FIXED = f"ValueError: {NODE_ERROR_MESSAGE}"


@pytest.fixture(autouse=True)
def _fresh_federation_cache(one_thread):
    load_federation.cache_clear()
    yield
    load_federation.cache_clear()


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info:
            text += "\n" + logging.Formatter().formatException(record.exc_info)
        self.lines.append(text)


@pytest.fixture
def node_log():
    r"""What the node logs (Flower's logger), as text."""
    handler = _Collect()
    logger = logging.getLogger("flwr")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


@pytest.fixture
def task_identity(monkeypatch):
    r"""The run and node a message belongs to (a SuperNode task's identity)."""
    from flwr.supercore.task_identity import TaskIdentity

    for key, value in (("_run_id", 1), ("_node_id", 0), ("_task_id", 1)):
        monkeypatch.setattr(TaskIdentity, key, value)


def _message(message_type: str = "query.register") -> Message:
    return Message(to_content(Payload(), {}), 1000, message_type)


def test_node_error_reply_carries_the_class_name_only(
    node_log, tmp_path, task_identity
):
    path = tmp_path / "keys.env"
    try:  # raised, so that the log has a traceback to show
        raise ValueError(f"{path}:1: expected 3 tab-separated columns: {SECRET!r}")
    except ValueError as exc:
        reply = node_error_reply(_message(), exc)
    assert reply.has_error()
    assert reply.error.code == ErrorCode.CLIENT_APP_RAISED_EXCEPTION
    assert reply.error.reason == FIXED
    assert SECRET not in reply.error.reason and str(path) not in reply.error.reason
    logged = "\n".join(node_log.lines)
    assert SECRET in logged and str(path) in logged
    assert "Traceback" in logged


def test_node_error_reason_refuses_a_class_name_that_is_no_identifier():
    odd = type("SECRET-API-KEY=x", (RuntimeError,), {})
    assert node_error_reason(odd("boom")) == f"Exception: {NODE_ERROR_MESSAGE}"
    assert node_error_reason(KeyError(SECRET)) == f"KeyError: {NODE_ERROR_MESSAGE}"


def _run_config(data, out) -> dict:
    return {
        "data": str(data),
        "algorithm": "fede",
        "num-rounds": 1,
        "eval-every": 1,
        "out": str(out),
        "model": "transe",
        "dim": 4,
        "batch-size": 4,
        "num-negatives": 2,
        "local-epochs": 1,
    }


def test_a_run_config_naming_a_node_file_returns_no_line_of_it(tmp_path, node_log):
    # `data` names a folder whose training file is another file of the node
    # (here a link to it): the node fails reading it, quoting its first line
    keys = tmp_path / "node-keys.env"
    keys.write_text(f"{SECRET}\n")
    data = tmp_path / "fed"
    (data / "client0").mkdir(parents=True)
    (data / "client0" / "train.txt").symlink_to(keys)
    for split in ("valid", "test"):
        (data / "client0" / f"{split}.txt").write_text("a\tr\tb\n")
    out = tmp_path / "out"
    cfg = _run_config(data, out)
    grid = LocalGrid(client_app, [{"partition-id": 0}], cfg)
    with pytest.raises(ClientReplyError) as info:
        run_server(grid, cfg)
    assert str(info.value) == (
        "node 1000 failed on 'query.align' in round 0: DataFormatError: "
        f"{NODE_ERROR_MESSAGE} (code 2); the run stops."
    )
    status = json.loads((out / "status.json").read_text())
    assert status["status"] == "failed"
    assert "SECRET" not in status["error"] and NODE_ERROR_MESSAGE in status["error"]
    # the node's log has what went wrong
    logged = "\n".join(node_log.lines)
    assert SECRET in logged and "train.txt, line 1" in logged


def test_the_reply_to_the_server_names_no_path_of_the_node(tmp_path, node_log):
    # a file that is not a partition: what the error quotes stays on the node
    secrets_file = tmp_path / "node-secrets.env"
    secrets_file.write_text(f"{SECRET}\n")
    cfg = _run_config(secrets_file, tmp_path / "out")
    grid = LocalGrid(client_app, [{"partition-id": 0}], cfg)
    (reply,) = grid.send_and_receive([_message()])
    assert reply.has_error() and reply.error.reason == FIXED
    assert str(secrets_file) in "\n".join(node_log.lines)


def test_the_worker_answers_a_failure_without_its_text(
    tmp_path, node_log, task_identity
):
    from flwr.app import Context, RecordDict
    from flwr.common.serde import context_to_proto

    from fedgraph.runtime.flower.node import to_wire
    from fedgraph.runtime.flower.worker import NodeStates, handle

    def app(message, context):  # an app without fedgraph's error mod
        raise ValueError(f"cannot parse {SECRET!r}")

    message = _message()
    message.metadata.__dict__["_message_id"] = message.object_id
    root, contents = to_wire(message)
    context = Context(
        run_id=1, node_id=1000, node_config={}, state=RecordDict(), run_config={}
    )
    request = (root, contents, message.object_id,
               context_to_proto(context).SerializeToString())  # fmt: skip
    ok, reason = handle(app, request, NodeStates(tmp_path / "states"))
    assert (ok, reason) == (False, FIXED)
    assert SECRET in "\n".join(node_log.lines)


def test_alignment_secret_is_written_mode_0600_from_the_start(tmp_path, monkeypatch):
    from fedgraph.privacy.setup import SECRET_FILE, alignment_secret

    modes = []
    replace = os.replace

    def spy(src, dst):  # the file's mode before it gets its name
        modes.append(stat.S_IMODE(os.stat(src).st_mode))
        replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    old = os.umask(0o022)  # the common default: files 0644
    try:
        secret = alignment_secret(tmp_path / "run")
    finally:
        os.umask(old)
    path = tmp_path / "run" / SECRET_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert modes == [0o600]
    assert path.read_text() == secret.hex() + "\n" and len(secret) == 32
    assert sorted(p.name for p in path.parent.iterdir()) == [SECRET_FILE]
    assert alignment_secret(tmp_path / "run") == secret  # read back, not redrawn


def test_the_executor_answers_a_failure_without_its_text(
    tmp_path, node_log, task_identity, monkeypatch
):
    from flwr.app import Context, RecordDict

    from fedgraph.runtime.flower.executor import Executor

    monkeypatch.setenv("FEDGRAPH_WORKER_DIR", str(tmp_path / "workers"))
    # pull_backoff=None: leave Flower's pull delays of this process as they are
    executor = Executor("127.0.0.1:1", insecure=True, pull_backoff=None)

    def app(message, context):  # an app without fedgraph's error mod
        raise ValueError(f"cannot parse {SECRET!r}")

    monkeypatch.setattr(executor, "_app", lambda run, fab: app)
    context = Context(1, 1000, {}, RecordDict(), {})
    reply, status, details = executor._handle(_message(), context, None, None)
    assert reply.has_error() and reply.error.reason == details == FIXED
    assert status == "failed"
    assert SECRET in "\n".join(node_log.lines)
