r"""A long-lived ``ClientApp`` runtime for one SuperNode: runs every
``ClientApp`` task of the node in this one process.

Flower 1.x runs each message in a new ``flwr-clientapp`` process, started
by the node's ``flower-superexec``. A SuperNode started with ``--isolation
process`` starts no superexec and waits for an external one;
:class:`Executor` is that external process, for fedgraph's apps (the command
:mod:`fedgraph.cli.flower_executor`)::

    flower-supernode --insecure --superlink HOST:9092 --port 9094 \
        --isolation process --node-config "partition-id=0" &
    python -m fedgraph.cli.flower_executor --runtime-api 127.0.0.1:9094 --insecure &

It asks the node's Runtime API for ClientApp tasks (``AcquireTask``, as
``flower-superexec`` does) and runs each one here with Flower's own task
steps (pull the message, ``Context``, run and FAB; run the ``ClientApp``;
push the reply and the updated ``Context``; task heartbeats meanwhile). The
FAB is installed and the app loaded once per FAB, and torch, fedgraph, the
partition and the built models stay in memory across messages. A forwarding
app of :mod:`fedgraph.runtime.flower.node` is replaced by the fedgraph app
it forwards to (no worker process is needed here). The client state
(``context.state`` of the fedgraph app) stays in this process and in its
on-disk snapshots, as in the worker
(:class:`~fedgraph.runtime.flower.worker.NodeStates`, folder
``{FEDGRAPH_WORKER_DIR}/executor-{hash of the Runtime API address}.state``):
the ``Context`` pushed back to the SuperNode carries an empty state, so a
task's output is its reply only, whatever the size of the client state.

The task steps are Flower's internal functions of
``flwr.supernode.runtime.run_clientapp`` (tested with flwr 1.41); a Flower
version without them stops this process with an error naming the missing
function.
"""

from __future__ import annotations

import hashlib
import json
import time
from logging import DEBUG, INFO, WARNING
from typing import Any


def _flower_steps() -> Any:
    try:
        from flwr.supernode.runtime import run_clientapp as steps

        for name in ("pull_task_input", "push_message", "push_task_output"):
            getattr(steps, name)
    except (ImportError, AttributeError) as exc:
        raise RuntimeError(
            "This Flower version lacks the ClientApp task steps the fedgraph "
            f"executor uses ({exc}); run the SuperNode with its default "
            "`--isolation subprocess` instead."
        ) from None
    return steps


class Executor:
    r"""Runs the ClientApp tasks of the SuperNode whose Runtime API is at
    ``runtime_api`` (``host:port``).

    Args:
        runtime_api (str): the SuperNode's Runtime API address (its ``--host``
            and ``--port``).
        insecure (bool, optional): plain HTTP to the Runtime API.
            (default: :obj:`True`)
        root_certificates (str, optional): CA file for a TLS Runtime API.
        poll_interval (float, optional): seconds between two task requests
            when idle. (default: :obj:`0.05`)
        pull_backoff (float, optional): seconds before asking the node
            again for an object of a message it has not finished receiving
            (doubling; Flower's default is 1 s:
            :func:`~fedgraph.runtime.flower.polling.shorten_pull_backoff`, set
            for this whole process). ``None``: Flower's. (default: :obj:`0.05`)
    """

    def __init__(
        self,
        runtime_api: str,
        *,
        insecure: bool = True,
        root_certificates: str | None = None,
        poll_interval: float = 0.05,
        pull_backoff: float | None = 0.05,
    ) -> None:
        self.steps = _flower_steps()
        if pull_backoff is not None:
            # the node lists a message before it has pulled its objects
            from fedgraph.runtime.flower.polling import shorten_pull_backoff

            shorten_pull_backoff(pull_backoff)
        self.runtime_api = runtime_api
        self.insecure = insecure
        self.root_certificates = root_certificates
        self.poll_interval = float(poll_interval)
        self._apps: dict[str, Any] = {}  # FAB hash -> ClientApp
        self.tasks = 0
        from fedgraph.runtime.flower.node import worker_dir
        from fedgraph.runtime.flower.worker import NodeStates

        key = hashlib.sha1(runtime_api.encode()).hexdigest()[:16]
        self.states = NodeStates(worker_dir() / f"executor-{key}.state")

    def _client(self, *interceptors: Any) -> Any:
        from flwr.supercore.retry import make_simple_http_retry_invoker
        from flwr.supercore.runtime import RuntimeHttpClient
        from flwr.supercore.tls import validate_and_resolve_root_certificates

        return RuntimeHttpClient.from_server_address(
            server_address=self.runtime_api,
            insecure=self.insecure,
            root_certificates=validate_and_resolve_root_certificates(
                self.root_certificates, self.insecure
            ),
            interceptors=list(interceptors),
            retry_invoker=make_simple_http_retry_invoker(),
        )

    def _app(self, run: Any, fab: Any) -> Any:
        if fab.hash_str not in self._apps:
            from flwr.cli.install import install_from_fab
            from flwr.clientapp.utils import get_load_client_app_fn

            install_from_fab(fab.content, skip_prompt=True)
            load = get_load_client_app_fn(
                default_app_ref="", app_path=None, multi_app=True
            )
            app = load(run.fab_id, run.fab_version, fab.hash_str)
            from fedgraph.runtime.flower.node import WorkerClientApp, load_target

            if isinstance(app, WorkerClientApp):  # run its fedgraph app here
                app = load_target(app.target)
            self._apps[fab.hash_str] = app
        return self._apps[fab.hash_str]

    def _handle(self, message: Any, context: Any, run: Any, fab: Any) -> tuple:
        r"""Runs the app on ``message`` with the client state this process
        keeps for the node; ``context.state`` (what goes back to the
        SuperNode) is emptied. Returns the reply (when the app failed, an error
        reply naming the error's class only:
        :func:`~fedgraph.runtime.flower.failures.node_error_reply`), the
        task's status and details."""
        from flwr.app import Context, RecordDict
        from flwr.common.constant import SubStatus

        from fedgraph.runtime.flower.failures import node_error_reply

        key = (int(context.run_id), int(context.node_id))
        node_context = Context(
            run_id=context.run_id,
            node_id=context.node_id,
            node_config=context.node_config,
            state=context.state,
            run_config=context.run_config,
        )
        held = self.states.get(key)
        if held is not None:
            node_context.state = held
        context.state = RecordDict()  # what goes back to the SuperNode
        try:
            reply = self._app(run, fab)(message=message, context=node_context)
        except Exception as exc:  # the node's error reply, without its text
            reply = node_error_reply(message, exc)  # logs the detail here
        if reply.has_error():  # a fedgraph app answers its own errors
            self.states.forget(key)
            return reply, SubStatus.FAILED, reply.error.reason
        self.states.put(key, node_context.state)
        return reply, SubStatus.COMPLETED, ""

    def run_task(self, token: str) -> None:
        r"""One ClientApp task: Flower's ``flwr-clientapp`` steps, in this
        process. Logs at DEBUG when each step ended (epoch seconds: task
        acquired, message pulled, app done, reply pushed, task closed)."""
        from flwr.common.constant import SubStatus
        from flwr.supercore import log
        from flwr.supercore.heartbeat import (
            HeartbeatSender,
            make_task_heartbeat_fn_http,
        )
        from flwr.supercore.interceptors import (
            RuntimeTokenHttpInterceptor,
            RuntimeVersionHttpInterceptor,
        )

        client = self._client(
            RuntimeVersionHttpInterceptor(component_name="flwr-clientapp"),
            RuntimeTokenHttpInterceptor(token),
        )
        heartbeat = HeartbeatSender(make_task_heartbeat_fn_http(client))
        heartbeat.start()
        context = None
        status, details = SubStatus.FAILED, "ClientApp task failed"
        steps = {"acquired": time.time()}
        try:
            message, context, run, fab = self.steps.pull_task_input(client)
            steps["pulled"] = time.time()
            reply, status, details = self._handle(message, context, run, fab)
            steps["app"] = time.time()
            self.steps.push_message(client, reply, context)
            steps["pushed"] = time.time()
        finally:
            self.steps.push_task_output(
                client=client, context=context, sub_status=status, details=details
            )
            steps["closed"] = time.time()
            if heartbeat.is_running:
                heartbeat.stop()
            client.close()
        self.states.save()
        self.tasks += 1
        log(DEBUG, "fedgraph executor: task %s", json.dumps(steps))

    def serve(self, max_tasks: int | None = None) -> None:
        r"""Asks for tasks until ``max_tasks`` have run (``None``: forever)."""
        from flwr.proto.runtime_pb2 import AcquireTaskRequest
        from flwr.supercore import log
        from flwr.supercore.constant import TaskType
        from flwr.supercore.interceptors import RuntimeVersionHttpInterceptor

        control = self._client(
            RuntimeVersionHttpInterceptor(component_name="SuperExec")
        )
        log(INFO, "fedgraph executor: serving ClientApp tasks of %s", self.runtime_api)
        while max_tasks is None or self.tasks < max_tasks:
            res = control.AcquireTask(
                AcquireTaskRequest(supported_task_types=[TaskType.CLIENT_APP])
            )
            if res.HasField("task") and res.token:
                try:
                    self.run_task(res.token)
                except KeyboardInterrupt:
                    # Flower's runtime client raises SIGINT in its own process
                    # when the node rejects a task (HTTP 401, a task heartbeat
                    # answered "no"): a flwr-clientapp process would exit; this
                    # one drops the task (the server sees the node fail in that
                    # exchange) and serves the next. Stop it with SIGTERM, or
                    # SIGINT while it is idle.
                    log(WARNING, "fedgraph executor: the node dropped a task")
            else:
                time.sleep(self.poll_interval)
