r"""A real Flower deployment of a fedgraph federation against the simulation.

Starts one SuperLink and one SuperNode per client as subprocesses on the
loopback interface (127.0.0.1), runs the federation with ``flwr run`` from a
server folder that holds no data, runs the same settings in the in-process
simulation, and writes one JSON::

    python benchmarks/flower_deploy.py --data DIR --algorithm NAME --rounds R \
        [--kill-client K --kill-at-round J [--restart-after S]] --json OUT

``DIR`` is a saved partition (``fedgraph partition …``): KGE (FedE, FedLU, …)
or an RDF partition (Fed-RGCN: ``sp fedavg fedprox fedalign`` …). The nodes
see it as ``data`` in their working folder (a link); the SuperLink and its
``ServerApp`` run in an empty folder with ``FEDGRAPH_DATA`` pointing nowhere,
so the run only works if the server never opens the data.

With ``--kill-client K --kill-at-round J`` the SuperNode of client ``K`` is
killed (``SIGKILL``, with its ``ClientApp`` processes) once the server has
logged round ``J - 1``, and restarted ``S`` seconds later with the same node
config when ``--restart-after S`` is given. The run config then sets
``accept-failures`` and checkpoints (``checkpoint-dir`` on the server,
``state-dir`` on every node), so the restarted node restores its snapshot.
``--set min-fit-nodes=3`` (more than are left) makes the run fail instead.

With ``--restart-superlink-at-round J`` the SuperLink is killed (``SIGKILL``)
once the server has logged round ``J - 1`` and started again at once on the
same port and ``--database``; the run config sets checkpoints as above.
Flower's SuperExec and ``ServerApp`` exit with their SuperLink and ``flwr
run`` stops; the script follows the interrupted run as ``fedgraph
flower-run`` does (``status.json`` becomes ``lost``, the error naming how to
resume), lists the checkpoints and node snapshots it left, and runs it again
with ``resume = true`` on the restarted SuperLink (:func:`resume_after_restart`).

``--tls`` runs the same deployment with TLS and SuperNode authentication,
with certificates and keys from ``scripts/flower_certificates.sh``.

``--own-folders`` runs it as organisations would: each SuperNode starts in
its own folder ``orgs/orgK`` that holds only a copy of its client folder
(``kg/``, ``DIR/clientK`` of the partition) and the federation secret; its
node config names them (``data-dir``, ``alignment-secret``), the run config's
``data`` names nothing, and the apps of ``examples/flower_private_app`` align
the nodes by keyed hashes of their names. The simulation then runs the same
keyed alignment under the same secret. On an RDF partition (Fed-RGCN) the
Fed-RGCN apps run unchanged: only the bases are shared, which no predicate
indexes, so each node's R-GCN spans its own predicates and the simulation's
clients do the same (``own_relations``). ``--audit-opens`` makes every Python
process of the deployment (SuperLink, ``ServerApp``, SuperNodes, their
``ClientApp`` processes) list each file it opens (an audit hook on
``open``, from a ``sitecustomize`` on their ``PYTHONPATH``) in
``logs/opens/ROLE-PID.txt`` (``ROLE``: ``server`` or ``nodeK``); the JSON's
``opened`` maps each role to the files it opened.

``--node-poll S`` starts the SuperNodes with fedgraph's launcher
(:mod:`fedgraph.runtime.flower.supernode`: Flower's SuperNode with an
``S``-second idle poll instead of its fixed 3 s, shorter reply polls and
object-pull retries) and sets the same pull retry in the executor and the
``ServerApp`` (run-config ``pull-backoff``); with it, ``--heartbeat-interval
S`` gives the SuperNodes an ``S``-second heartbeat (Flower: 30 s), so the
SuperLink reports a killed node unavailable within ``2 * S`` seconds of its
last heartbeat. ``--timeline`` adds where each
exchange's seconds go (:func:`timeline`). The script exits with
``exit_code``: 0 only when ``flwr run`` returned 0 and the ``ServerApp``
wrote ``status.json`` with ``"completed"`` (``flwr run`` itself returns 0
when the ``ServerApp`` fails).

The JSON holds ``deployment`` (the run's ``results.json``), ``simulation``
(the same settings in-process), ``seconds_per_round`` (training and
validation per round, from each ``history``), ``exit_code`` (0 when the
deployment completed), ``lost_client`` (with the failure events and
``unavailable_after``: seconds from the kill to the first "Node Unavailable"
line of the run's log, None when there was none) and
``same_results`` (metrics, history and communication equal, wall times and
failure events aside), ``superlink_restart`` (the interrupted run of
``--restart-superlink-at-round``: ``round``, ``flwr_run_exit_code``, the
follower's ``exit_code``, ``status`` and the files ``written`` before the
resume, name → bytes; None without it), ``load_average`` (``os.getloadavg()`` at the start
and the end: the load beside the run on a shared machine).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
RGCN_METHODS = ("sp", "fedavg", "fedprox", "fedalign")


def is_rgcn(algorithm: str) -> bool:
    return algorithm.lower().removesuffix("-l") in RGCN_METHODS


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="saved partition folder")
    p.add_argument("--algorithm", required=True)
    p.add_argument("--rounds", type=int, required=True)
    p.add_argument("--kill-client", type=int, default=None)
    p.add_argument("--kill-at-round", type=int, default=None)
    p.add_argument("--restart-after", type=float, default=None)
    p.add_argument(
        "--restart-superlink-at-round",
        type=int,
        default=None,
        metavar="J",
        help="SIGKILL the SuperLink once the server logged round J - 1 and "
        "start it again at once on the same port and database",
    )
    p.add_argument("--json", required=True, help="output JSON file")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="more run-config entries (TOML values), e.g. --set dim=32",
    )
    p.add_argument("--tls", action="store_true", help="TLS + SuperNode authentication")
    p.add_argument(
        "--clientapp",
        choices=("worker", "per-message", "executor"),
        default="worker",
        help="worker: the example apps' forwarding ClientApp and its worker "
        "process (default); per-message: the ClientApp in each message's own "
        "process; executor: SuperNodes with --isolation process and one "
        "fedgraph.cli.flower_executor process each",
    )
    p.add_argument(
        "--node-poll",
        type=float,
        default=None,
        metavar="SECONDS",
        help="fedgraph's shorter waits: SuperNodes started with "
        "fedgraph.cli.flower_supernode (Flower's SuperNode with a SECONDS "
        "idle pull interval, Flower: 3 s; a 0.05 s reply poll, Flower: 0.5 s; "
        "a 0.05 s first object-pull retry, Flower: 1 s), and the same pull "
        "retry in the executor and the ServerApp (run-config pull-backoff). "
        "Without it every wait is Flower's",
    )
    p.add_argument(
        "--heartbeat-interval",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --node-poll: the SuperNodes' heartbeat interval (10 to 1800; "
        "Flower: 30); the SuperLink reports a node that died unavailable "
        "after twice that",
    )
    p.add_argument("--port", type=int, default=9300, help="first loopback port")
    p.add_argument("--timeout", type=float, default=3600, help="seconds for it all")
    p.add_argument("--work", default=None, help="working folder (default: a temp one)")
    p.add_argument("--no-simulation", action="store_true")
    p.add_argument(
        "--timeline",
        action="store_true",
        help="SuperNodes log with timestamps (FLWR_LOG_LEVEL=DEBUG); the JSON "
        "gets `timeline`: where each exchange's seconds go",
    )
    p.add_argument("--keep", action="store_true", help="keep the working folder")
    p.add_argument(
        "--own-folders",
        action="store_true",
        help="each SuperNode in its own folder with only a copy of its client "
        "folder, aligned by keyed names (KGE; Fed-RGCN: own predicates)",
    )
    p.add_argument(
        "--audit-opens",
        action="store_true",
        help="every deployment process lists the files it opens (JSON `opened`)",
    )
    args = p.parse_args(argv)
    if args.own_folders and not (Path(args.data) / "client0" / "META.json").is_file():
        p.error(f"--own-folders: {args.data} is not a partition with client folders")
    if (args.kill_client is None) != (args.kill_at_round is None):
        p.error("--kill-client and --kill-at-round go together")
    if args.restart_after is not None and args.kill_client is None:
        p.error("--restart-after needs --kill-client")
    if args.kill_at_round is not None and not 2 <= args.kill_at_round <= args.rounds:
        p.error(f"--kill-at-round must lie in [2, {args.rounds}]")
    link_round = args.restart_superlink_at_round
    if link_round is not None:
        if args.kill_client is not None:
            p.error("--restart-superlink-at-round and --kill-client exclude each other")
        if is_rgcn(args.algorithm):
            p.error(
                "--restart-superlink-at-round resumes from checkpoints, which "
                f"Fed-RGCN runs do not write (got --algorithm {args.algorithm})"
            )
        if not 2 <= link_round <= args.rounds:
            p.error(
                f"--restart-superlink-at-round must lie in [2, {args.rounds}] "
                f"(got {link_round})"
            )
    if not Path(args.data).is_dir():
        p.error(f"--data {args.data}: not a folder")
    if args.node_poll is not None and not 0 < args.node_poll <= 60:
        p.error(f"--node-poll must lie in (0, 60] s (got {args.node_poll})")
    if args.heartbeat_interval is not None:
        if args.node_poll is None:
            p.error("--heartbeat-interval needs --node-poll (fedgraph's launcher)")
        if not 10 <= args.heartbeat_interval <= 1800:
            p.error(
                "--heartbeat-interval must lie in [10, 1800] s "
                f"(got {args.heartbeat_interval})"
            )
    for item in args.set:
        if "=" not in item:
            p.error(f"--set {item!r}: expected KEY=VALUE")
    return args


def wait_port(port: int, timeout: float = 120) -> None:
    r"""Returns once something listens on ``127.0.0.1:port``; raises
    :class:`RuntimeError` after ``timeout`` seconds."""
    import socket

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise RuntimeError(f"Nothing listens on 127.0.0.1:{port} after {timeout} s")


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


class Deployment:
    r"""The SuperLink and SuperNodes of one run, all children of this
    process (each in its own process group, killed by pid at the end)."""

    def __init__(self, work: Path, data: Path, num_nodes: int, args: Any) -> None:
        self.work, self.args, self.num_nodes = work, args, num_nodes
        self.server_dir = work / "server"  # the SuperLink's cwd: no data
        self.node_dir = work / "nodes"
        self.logs = work / "logs"
        for d in (self.server_dir, self.node_dir, self.logs):
            d.mkdir(parents=True, exist_ok=True)
        if getattr(args, "own_folders", False):
            self.orgs = own_folders(work, data, num_nodes)
        else:
            (self.node_dir / "data").symlink_to(data.resolve())
        self.home = work / "flwr-home"
        self.procs: dict[str, subprocess.Popen] = {}
        self.link_port = args.port
        self.certs = work / "certs"
        base = {
            k: v
            for k, v in os.environ.items()
            if k not in ("FEDGRAPH_DATA", "PYTHONPATH")
        }
        path = f"{BIN}{os.pathsep}{base.get('PATH', '')}"
        common = {"PATH": path, "FLWR_HOME": str(self.home), "OMP_NUM_THREADS": "1"}
        common["FLWR_TELEMETRY_ENABLED"] = "0"
        common["PYTHONPATH"] = str(ROOT)
        common["FEDGRAPH_WORKER_DIR"] = str(work / "workers")
        self.server_env = {**base, **common, "FEDGRAPH_DATA": str(work / "no-data")}
        # the SuperNodes' flower-superexec looks for new ClientApp tasks every
        # second by default
        self.node_env = {**base, **common, "FLWR_SUPEREXEC_TASK_POLL_INTERVAL": "0.1"}
        if getattr(args, "audit_opens", False):
            audit = write_audit_hook(work)
            for env in (self.server_env, self.node_env):
                env["PYTHONPATH"] = f"{audit}{os.pathsep}{env['PYTHONPATH']}"
                env["FEDGRAPH_AUDIT_DIR"] = str(self.logs / "opens")
            self.server_env["FEDGRAPH_AUDIT_ROLE"] = "server"
        if args.timeline:  # Flower's log lines carry timestamps only at DEBUG
            self.node_env["FLWR_LOG_LEVEL"] = "DEBUG"
            # the ServerApp logs when it pushed each exchange and pulled
            # each reply (DEBUG lines of the `flwr run` stream)
            self.server_env["FLWR_LOG_LEVEL"] = "DEBUG"

    # --------------------------------------------------------------- procs
    def _start(self, name: str, cmd: list[str], cwd: Path, env: dict) -> None:
        log = open(self.logs / f"{name}.log", "ab")
        self.procs[name] = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip

    def _security(self, node: bool) -> list[str]:
        if not self.args.tls:
            return ["--insecure"]
        if node:
            return ["--root-certificates", str(self.certs / "ca.crt")]
        return [
            "--ssl-ca-certfile", str(self.certs / "ca.crt"),
            "--ssl-certfile", str(self.certs / "server.pem"),
            "--ssl-keyfile", str(self.certs / "server.key"),
            "--enable-supernode-auth",
        ]  # fmt: skip

    def start_superlink(self) -> None:
        cmd = [
            str(BIN / "flower-superlink"),
            *self._security(node=False),
            "--disable-runtime-dependency-installation",
            "--host", "127.0.0.1",
            "--port", str(self.link_port),
            "--database", str(self.server_dir / "state.db"),
        ]  # fmt: skip
        self._start("superlink", cmd, self.server_dir, self.server_env)
        wait_port(self.link_port)

    def restart_superlink(self) -> None:
        r"""``SIGKILL`` to the SuperLink, then a new one on the same port and
        database (its ``ServerApp`` stops with it: Flower's SuperExec and
        ``ServerApp`` exit when their parent process is gone)."""
        self.kill("superlink")
        self.start_superlink()

    def register_nodes(self) -> None:
        r"""With node authentication: every node's public key is registered
        with the SuperLink (``flwr supernode register``)."""
        for k in range(self.num_nodes):
            done = self._flwr(
                [
                    "supernode",
                    "register",
                    str(self.certs / f"node{k}.pub"),
                    "local-deployment",
                ]
            )
            if done.returncode != 0:
                raise RuntimeError(
                    f"flwr supernode register failed for node {k}: "
                    f"{done.stdout.strip()} {done.stderr.strip()}"
                )

    def start_node(self, k: int) -> None:
        state = self.work / "node-state"
        if self.args.node_poll is None:
            launcher = [str(BIN / "flower-supernode")]
        else:  # Flower's SuperNode with shorter idle / reply polls
            launcher = [
                sys.executable, "-m", "fedgraph.cli.flower_supernode",
                "--idle-poll-interval", str(self.args.node_poll),
            ]  # fmt: skip
            if self.args.heartbeat_interval is not None:
                launcher += ["--heartbeat-interval", str(self.args.heartbeat_interval)]
        cmd = [
            *launcher,
            *self._security(node=True),
            "--superlink", f"127.0.0.1:{self.link_port}",
            "--host", "127.0.0.1",
            "--port", str(self.link_port + 1 + k),
            "--node-config", f"partition-id={k} state-dir='{state}'",
        ]  # fmt: skip
        cwd, env = self.node_dir, {**self.node_env, "FEDGRAPH_AUDIT_ROLE": f"node{k}"}
        if getattr(self.args, "own_folders", False):
            cwd = self.orgs[k]  # the organisation's folder: its own data only
            cmd[-1] = (
                f"partition-id={k} state-dir='{cwd / 'state'}' "
                f"data-dir='{cwd / 'kg'}' alignment-secret='{cwd / 'secret.key'}'"
            )
        if self.args.tls:
            cmd += ["--auth-supernode-private-key", str(self.certs / f"node{k}")]
        if self.args.clientapp == "executor":
            cmd += ["--isolation", "process"]
        self._start(f"node{k}", cmd, cwd, env)
        if self.args.clientapp == "executor":
            runtime = f"127.0.0.1:{self.link_port + 1 + k}"
            wait_port(self.link_port + 1 + k)
            backoff = "0.05" if self.args.node_poll is not None else "0"
            executor = [
                sys.executable, "-m", "fedgraph.cli.flower_executor",
                "--runtime-api", runtime, "--insecure", "--pull-backoff", backoff,
            ]  # fmt: skip
            self._start(f"exec{k}", executor, cwd, env)

    def kill_node(self, k: int) -> None:
        r"""``SIGKILL`` to the SuperNode of client ``k`` (and its executor)."""
        self.kill(f"node{k}")
        self.kill(f"exec{k}")

    def kill(self, name: str) -> None:
        proc = self.procs.pop(name, None)
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the node and its ClientApps
            except ProcessLookupError:
                pass
            proc.wait(timeout=30)

    def stop_all(self) -> None:
        for name in list(self.procs):
            self.kill(name)

    # ---------------------------------------------------------------- flwr
    def write_flwr_config(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        lines = [
            '[superlink]\ndefault = "local-deployment"\n',
            "[superlink.local-deployment]",
            f'address = "127.0.0.1:{self.link_port}"',
        ]
        if self.args.tls:
            lines.append(f'root-certificates = "{self.certs / "ca.crt"}"')
        else:
            lines.append("insecure = true")
        (self.home / "config.toml").write_text("\n".join(lines) + "\n")

    def _flwr(self, argv: list[str]) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(BIN / "flwr"), *argv], cwd=self.server_dir, env=self.server_env,
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    def run(self, app: Path, run_config: str, on_line: Any) -> int:
        cmd = [
            str(BIN / "flwr"), "run", str(app), "local-deployment", "--stream",
            "--run-config", run_config,
        ]  # fmt: skip
        log = open(self.logs / "flwr-run.log", "a")  # a resumed run: appended
        proc = subprocess.Popen(
            cmd, cwd=self.server_dir, env=self.server_env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True,
        )  # fmt: skip
        self.procs["flwr-run"] = proc
        assert proc.stdout is not None
        for line in proc.stdout:
            log.write(line)
            log.flush()
            on_line(line)
        rc = proc.wait()
        self.procs.pop("flwr-run", None)
        return rc


SECRET = "secret.key"

#: the ``sitecustomize`` of ``--audit-opens``: every ``open`` of the process,
#: appended to ``$FEDGRAPH_AUDIT_DIR/ROLE-PID.txt`` (one absolute path a line)
AUDIT_HOOK = """\
import os, sys
_dir = os.environ.get("FEDGRAPH_AUDIT_DIR")
if _dir:
    os.makedirs(_dir, exist_ok=True)
    _role = os.environ.get("FEDGRAPH_AUDIT_ROLE", "other")
    _fd = os.open(os.path.join(_dir, f"{_role}-{os.getpid()}.txt"),
                  os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def _hook(event, args, _fd=_fd, _write=os.write, _fspath=os.fspath,
              _abs=os.path.abspath):
        if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
            path = _fspath(args[0])
            path = path.decode(errors="replace") if isinstance(path, bytes) else path
            _write(_fd, (_abs(path) + "\\n").encode(errors="replace"))

    sys.addaudithook(_hook)
"""


def write_audit_hook(work: Path) -> Path:
    r"""The folder holding the ``sitecustomize`` of ``--audit-opens``."""
    folder = work / "audit"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(AUDIT_HOOK)
    return folder


def opened_files(logs: Path) -> dict[str, list[str]]:
    r"""Role (``server``, ``nodeK``) → every file its processes opened."""
    out: dict[str, set[str]] = {}
    for f in sorted((logs / "opens").glob("*-*.txt")):
        role = f.name.rsplit("-", 1)[0]
        out.setdefault(role, set()).update(f.read_text().splitlines())
    return {role: sorted(paths) for role, paths in sorted(out.items())}


def own_folders(work: Path, data: Path, num_nodes: int) -> list[Path]:
    r"""``orgs/orgK`` per node: a copy of client ``K``'s folder (``kg/``)
    and the federation secret, and nothing else of the partition."""
    from fedgraph.privacy.alignment import write_secret

    secret = work / SECRET
    if not secret.exists():
        import secrets

        write_secret(secret, secrets.token_bytes(32))
    orgs = []
    for k in range(num_nodes):
        org = work / "orgs" / f"org{k}"
        org.mkdir(parents=True, exist_ok=True)
        shutil.copytree(data / f"client{k}", org / "kg")
        shutil.copy2(secret, org / SECRET)
        orgs.append(org)
    return orgs


def keyed(strategy: Any, clients: dict, rounds: int, secret: Path) -> tuple:
    r"""The simulation's keyed-name alignment (``fedgraph train
    --private-alignment``) under the deployment's secret."""
    from fedgraph.privacy.setup import SECRET_FILE, PrivacySettings, apply_privacy

    run_dir = secret.parent / "simulation-secret"
    run_dir.mkdir(exist_ok=True)
    shutil.copy2(secret, run_dir / SECRET_FILE)
    settings = PrivacySettings(private_alignment=True)
    return apply_privacy(strategy, clients, settings, rounds=rounds, run_dir=run_dir)


def simulate(
    data: Path,
    algorithm: str,
    config: dict[str, Any],
    out: Path,
    secret: Path | None = None,
) -> dict:
    r"""The same run config in the in-process simulation
    (:func:`fedgraph.runtime.run_simulation`); returns its results."""
    from fedgraph.runtime import run_simulation

    if is_rgcn(algorithm):
        from fedgraph.federated.algorithms import get
        from fedgraph.partition.rdf_shard import FederatedRDF
        from fedgraph.runtime.flower.rgcn import RGCNRunSettings

        cfg = RGCNRunSettings.from_run_config(config)
        builder = get(cfg.algorithm, "rgcn").build  # the apps' registry builder
        # nodes with their own folders: models over their own predicates
        own = secret is not None
        fed = FederatedRDF.load(data)
        clients = builder.clients(fed, cfg.common(), own_relations=own)
        strategy = builder.strategy(cfg.common(), cfg.algorithm_settings())
        kwargs = cfg.loop_kwargs()
    else:
        from fedgraph.data import load_dataset
        from fedgraph.federated.kge.setup import build_kge_federation
        from fedgraph.runtime.flower import FlowerRunSettings

        cfg = FlowerRunSettings.from_run_config(config)
        strategy, clients = build_kge_federation(
            cfg.algorithm, load_dataset(data), cfg.settings
        )
        if secret is not None:  # the nodes aligned by keyed names
            strategy, clients = keyed(strategy, clients, cfg.num_rounds, secret)
        kwargs = cfg.loop_kwargs()
    if cfg.threads > 0:
        import torch

        torch.set_num_threads(cfg.threads)
    res = run_simulation(strategy, clients, **kwargs, progress=False)
    settings = {**cfg.to_dict(), "runtime": "simulation", "strategy": repr(strategy)}
    path = res.write_results(out / "results.json", settings=settings)
    return json.loads(path.read_text())


def seconds_per_round(doc: dict) -> float:
    r"""Training plus validation wall seconds per round."""
    hist = doc.get("history", [])
    if not hist:
        return float("nan")
    total = sum(h.get("train_seconds", 0.0) + h.get("eval_seconds", 0.0) for h in hist)
    return total / len(hist)


def same_results(a: dict, b: dict) -> bool:
    def strip(doc: dict) -> dict:
        drop = ("train_seconds", "eval_seconds")
        return {
            "weighted": doc.get("weighted"),
            "clients": doc.get("clients"),
            "best_round": doc.get("best_round"),
            "comm": doc.get("comm"),
            "comm_per_round": doc.get("comm_per_round"),
            "history": [  # failure events are in `lost_client`
                {k: v for k, v in h.items() if k not in (*drop, "events")}
                for h in doc.get("history", [])
            ],
        }

    return strip(a) == strip(b)


_STAMP = r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})"


def _node_exchanges(log: Path) -> list[tuple[str, float, float]]:
    r"""``(message type, received, reply sent)`` for every message of a
    SuperNode log written at ``FLWR_LOG_LEVEL=DEBUG`` (epoch seconds)."""
    import datetime
    import re

    receiving = re.compile(_STAMP + r".*Receiving: (\S+) message")
    sent = re.compile(_STAMP + r".*Sent successfully")

    def stamp(text: str) -> float:
        when = datetime.datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f")
        return when.timestamp()

    out: list[tuple[str, float, float]] = []
    pending: tuple[str, float] | None = None
    for line in log.read_text(errors="replace").splitlines():
        if m := receiving.search(line):
            pending = (m.group(2), stamp(m.group(1)))
        elif (m := sent.search(line)) and pending is not None:
            out.append((*pending, stamp(m.group(1))))
            pending = None
    return out


def _json_lines(path: Path, marker: str) -> list[dict[str, Any]]:
    r"""The JSON objects that follow ``marker`` on the lines of ``path``
    (none when the file is absent)."""
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(errors="replace").splitlines():
        at = line.find(marker)
        if at >= 0:
            try:
                out.append(json.loads(line[at + len(marker) :].strip()))
            except json.JSONDecodeError:
                continue
    return out


def _node_id(log: Path) -> str | None:
    import re

    m = re.search(r"SuperNode ID: (\d+)", log.read_text(errors="replace"))
    return m.group(1) if m else None


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _server_steps(
    row: dict[str, Any], i: int, server: list[dict], nodes: list, ids: list[str]
) -> None:
    r"""The ServerApp's side of exchange ``i``: push → node (``to_node``),
    node reply sent → server pulled it (``to_server``), push → last reply
    (``exchange``) and the server's turnaround since the previous exchange's
    last reply (``server``)."""
    ex = server[i]
    row["to_node"] = _mean([n[i][1] - ex["pushed"] for n in nodes])
    back = [
        ex["replies"][nid] - n[i][2]
        for n, nid in zip(nodes, ids, strict=True)
        if nid in ex["replies"]
    ]
    if back:
        row["to_server"] = _mean(back)
        row["exchange"] = max(ex["replies"].values()) - ex["pushed"]
    if i > 0 and server[i - 1]["replies"]:
        row["server"] = ex["pushed"] - max(server[i - 1]["replies"].values())


def _executor_steps(row: dict[str, Any], i: int, execs: list, nodes: list) -> None:
    r"""The executor's side of exchange ``i`` on every node: node received →
    task acquired (``task_start``), → message pulled (``input``), → app done
    (``app``), → reply pushed to the node (``output``), → the node sent it to
    the SuperLink (``to_link``: its reply poll and the upload)."""
    steps = [e[i] for e in execs]
    row["task_start"] = _mean(
        [e["acquired"] - n[i][1] for e, n in zip(steps, nodes, strict=True)]
    )
    row["input"] = _mean([e["pulled"] - e["acquired"] for e in steps])
    row["app"] = _mean([e["app"] - e["pulled"] for e in steps])
    row["output"] = _mean([e["pushed"] - e["app"] for e in steps])
    row["to_link"] = _mean(
        [n[i][2] - e["pushed"] for e, n in zip(steps, nodes, strict=True)]
    )


#: The timeline's keys, in the order of an exchange.
TIMELINE_KEYS = (
    "server", "to_node", "task_start", "input", "app", "output", "to_link",
    "node", "to_server", "exchange", "wait", "max_wait",
)  # fmt: skip


def timeline(logs: Path, workers: Path, num_nodes: int) -> dict[str, Any] | None:
    r"""Where each exchange's seconds go, from the SuperNodes' DEBUG logs
    and the workers' logs: per exchange (all nodes receive the same
    sequence of messages), ``node`` is the mean time from a node receiving
    the message to its reply having been sent (ClientApp process start, the
    app, the reply poll, the push), ``app`` the mean time the worker spent in
    the fedgraph ``ClientApp`` (``None`` without workers), and ``wait`` the
    mean time from the previous exchange's last reply leaving its node to a
    node receiving this message (the server's turnaround plus the
    SuperNode's pull interval). ``None`` when the nodes saw different
    sequences (a lost node).

    With the ServerApp's DEBUG lines in ``flwr-run.log`` (one per exchange:
    push time, each reply's pull time) a row also has ``server``,
    ``to_node``, ``to_server`` and ``exchange`` (:func:`_server_steps`); with
    the executor's DEBUG lines in ``exec{k}.log``, ``task_start``, ``input``,
    ``app``, ``output`` and ``to_link`` (:func:`_executor_steps`). All are
    seconds, means over the nodes."""
    import re

    nodes = [_node_exchanges(logs / f"node{k}.log") for k in range(num_nodes)]
    if not nodes or len({len(n) for n in nodes}) != 1 or not nodes[0]:
        return None
    count = len(nodes[0])
    handled = re.compile(r"message done: handled in ([0-9.]+) s")
    apps = [
        [float(m.group(1)) for m in handled.finditer(p.read_text(errors="replace"))]
        for p in sorted(workers.glob("*.log"))
    ] if workers.is_dir() else []  # fmt: skip
    apps = [a for a in apps if len(a) == count]
    server = _json_lines(logs / "flwr-run.log", "[fedgraph] exchange ")
    ids = [_node_id(logs / f"node{k}.log") for k in range(num_nodes)]
    with_server = len(server) == count and None not in ids
    execs = [
        _json_lines(logs / f"exec{k}.log", "fedgraph executor: task ")
        for k in range(num_nodes)
    ]
    with_exec = all(len(e) == count for e in execs)
    rows = []
    for i in range(count):
        kinds = {n[i][0] for n in nodes}
        row: dict[str, Any] = {"message": "/".join(sorted(kinds))}
        row["node"] = sum(n[i][2] - n[i][1] for n in nodes) / num_nodes
        row["app"] = sum(a[i] for a in apps) / len(apps) if apps else None
        if i > 0:
            last = max(n[i - 1][2] for n in nodes)
            waits = [n[i][1] - last for n in nodes]
            row["wait"] = sum(waits) / num_nodes
            row["max_wait"] = max(waits)
        if with_server:
            _server_steps(row, i, server, nodes, ids)
        if with_exec:
            _executor_steps(row, i, execs, nodes)
        rows.append(row)
    summary: dict[str, Any] = {}
    for kind in sorted({r["message"] for r in rows}):
        mine = [r for r in rows if r["message"] == kind]
        summary[kind] = {
            "count": len(mine),
            **{
                key: sum(r[key] for r in mine if r.get(key) is not None)
                / max(1, sum(r.get(key) is not None for r in mine))
                for key in TIMELINE_KEYS
                if any(r.get(key) is not None for r in mine)
            },
        }
    return {"exchanges": rows, "summary": summary}


def written_files(*folders: Path) -> dict[str, int]:
    r"""Every file under ``folders`` → its size in bytes (paths relative to
    their folder's parent)."""
    return {
        str(f.relative_to(folder.parent)): f.stat().st_size
        for folder in folders
        if folder.is_dir()
        for f in sorted(folder.rglob("*"))
        if f.is_file()
    }


def resume_after_restart(
    dep: Deployment, app: Path, run_config: str, out: Path, rc: int
) -> tuple[dict[str, Any], int]:
    r"""After ``--restart-superlink-at-round``: the first ``flwr run`` has
    ended with ``rc`` (the SuperLink's death took its SuperExec and ``ServerApp`` with
    it). Follows that run as ``fedgraph flower-run`` does
    (:func:`fedgraph.runtime.flower.run_status.follow`: ``status.json``
    becomes ``lost`` once the heartbeat stops), lists the checkpoints and
    node snapshots it left, then runs it again with ``resume = true`` on
    the restarted SuperLink. Returns the interrupted run's record
    (``flwr_run_exit_code``, the follower's ``exit_code``, ``status`` and
    ``written``) and the resumed ``flwr run``'s exit code."""
    from types import SimpleNamespace

    from fedgraph.runtime.flower.run_status import follow

    outcome = follow(out, SimpleNamespace(poll=lambda: rc), lost_after=20.0)
    record = {
        "flwr_run_exit_code": rc,
        "exit_code": outcome.exit_code,
        "status": json.loads((out / "status.json").read_text()),
        "written": written_files(dep.server_dir / "ckpt", dep.work / "node-state"),
    }
    print(f"[deploy] interrupted run: {outcome.status}: {outcome.message}", flush=True)
    rc = dep.run(app, f"{run_config} resume=true", sys.stdout.write)
    return record, rc


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    data = Path(args.data).resolve()
    if (data / "META.json").is_file():  # a saved partition (KGE or RDF)
        num_nodes = len(json.loads((data / "META.json").read_text())["clients"])
    else:  # a federated dataset folder, e.g. FedLU's R3 (client0/ …)
        from fedgraph.data import load_dataset

        num_nodes = load_dataset(data).num_clients
    rgcn = is_rgcn(args.algorithm)
    source = ROOT / "examples" / ("flower_rgcn_app" if rgcn else "flower_app")
    if args.own_folders and not rgcn:  # Fed-RGCN shares no name-indexed row
        source = ROOT / "examples" / "flower_private_app"
    work = Path(args.work or tempfile.mkdtemp(prefix="fedgraph-deploy-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    app = work / "app"
    shutil.copytree(source, app, dirs_exist_ok=True)
    if args.clientapp == "per-message":
        pyproject = app / "pyproject.toml"
        text = pyproject.read_text()
        text = (
            text.replace(
                '"fedgraph.runtime.flower.node:kge_app"',
                '"fedgraph.runtime.flower.client_app:app"',
            )
            .replace(
                '"fedgraph.runtime.flower.node:rgcn_app"',
                '"fedgraph.runtime.flower.rgcn:client_app"',
            )
            .replace(
                '"fedgraph.privacy.flower:node_app"',
                '"fedgraph.privacy.flower:client_app"',
            )
        )
        pyproject.write_text(text)
    out = work / "server" / "out"
    config: dict[str, Any] = {
        # relative: resolves on the nodes only (with --own-folders: nowhere,
        # each node reads its `data-dir`)
        "data": "no-partition" if args.own_folders else "data",
        "algorithm": args.algorithm,
        "num-rounds": args.rounds,
        "out": str(out),
        "threads": 1,
        "connect-timeout": 600.0,
    }
    if not rgcn:
        config.update({"eval-every": 1, "patience": 0})
    if args.node_poll is not None:
        config["pull-backoff"] = 0.05
    killing = args.kill_client is not None
    restarting = args.restart_superlink_at_round is not None
    if killing:
        config["accept-failures"] = True
    if (killing or restarting) and not rgcn:
        config.update({"checkpoint-dir": str(work / "server" / "ckpt")})
        config["run-name"] = "deploy"
    for item in args.set:
        key, _, value = item.partition("=")
        import tomllib

        config[key.strip()] = tomllib.loads(f"v = {value}")["v"]
    run_config = " ".join(f"{k}={toml_value(v)}" for k, v in config.items())

    dep = Deployment(work, data, num_nodes, args)
    link_restart: dict[str, Any] | None = None
    lost: dict[str, Any] | None = None
    if killing:
        lost = {"client": args.kill_client, "round": args.kill_at_round}
        lost.update({"rejoined": False, "completed": False})
    state = {"killed_at": None, "unavailable_at": None}
    deadline = time.monotonic() + args.timeout
    timer = threading.Timer(args.timeout, dep.stop_all)
    timer.daemon = True
    timer.start()

    def on_line(line: str) -> None:
        sys.stdout.write(line)
        if (
            restarting
            and state["killed_at"] is None
            and (f"[fedgraph] round {args.restart_superlink_at_round - 1}:" in line)
        ):
            dep.restart_superlink()
            state["killed_at"] = time.monotonic()
            print("[deploy] restarted the SuperLink", flush=True)
        if not killing:
            return
        if state["killed_at"] is not None:
            if "Node Unavailable" in line and state["unavailable_at"] is None:
                state["unavailable_at"] = time.monotonic()
            return
        if f"[fedgraph] round {args.kill_at_round - 1}:" in line:
            dep.kill_node(args.kill_client)
            state["killed_at"] = time.monotonic()
            print(f"[deploy] killed the SuperNode of client {args.kill_client}")
            if args.restart_after is not None:

                def restart() -> None:
                    dep.start_node(args.kill_client)
                    print(
                        f"[deploy] restarted the SuperNode of client {args.kill_client}"
                    )

                threading.Timer(args.restart_after, restart).start()

    load_start = os.getloadavg()  # a shared machine: the load beside the run
    t0 = time.monotonic()
    flwr_rc = -1
    try:
        if args.tls:
            script = ROOT / "scripts" / "flower_certificates.sh"
            subprocess.run(
                ["bash", str(script), str(dep.certs), str(num_nodes)],
                check=True, capture_output=True, timeout=120,
            )  # fmt: skip
        dep.start_superlink()
        dep.write_flwr_config()
        if args.tls:
            dep.register_nodes()
        for k in range(num_nodes):
            dep.start_node(k)
        flwr_rc = dep.run(app, run_config, on_line)
        if restarting:  # the run the SuperLink took with it, then resumed
            link_restart, flwr_rc = resume_after_restart(
                dep, app, run_config, out, flwr_rc
            )
            link_restart.update(round=args.restart_superlink_at_round)
    finally:
        timer.cancel()
        dep.stop_all()
    wall = time.monotonic() - t0
    status_file = out / "status.json"
    status = json.loads(status_file.read_text()) if status_file.exists() else {}
    completed = status.get("status") == "completed"
    exit_code = 0 if completed and flwr_rc == 0 else 1
    deployment = (
        json.loads((out / "results.json").read_text())
        if (out / "results.json").exists()
        else None
    )
    if lost is not None:
        lost["completed"] = completed
        events = [
            e
            for h in (deployment or {}).get("history", [])
            for e in h.get("events", [])
        ]
        lost["events"] = events
        lost["rejoined"] = any(
            e["event"] == "rejoined" and e["client"] == args.kill_client for e in events
        )
        lost["error"] = status.get("error", "")
        # seconds from the kill until the run's log first reported the node
        # unavailable (its heartbeat window), None when it never did
        if state["unavailable_at"] is not None:
            lost["unavailable_after"] = state["unavailable_at"] - state["killed_at"]
        else:
            lost["unavailable_after"] = None
    simulation = None
    sim_seconds = None
    if not args.no_simulation and time.monotonic() < deadline:
        sim_config = {
            k: v for k, v in config.items() if k not in ("checkpoint-dir", "run-name")
        }
        sim_config["data"] = str(data)
        sim_config["out"] = ""
        for key in ("accept-failures", "connect-timeout"):
            sim_config.pop(key, None)
        secret = work / SECRET if args.own_folders else None
        simulation = simulate(
            data, args.algorithm, sim_config, work / "simulation", secret
        )
        sim_seconds = seconds_per_round(simulation)
    doc = {
        "command": [sys.executable, *sys.argv],
        "run_config": config,
        "nodes": num_nodes,
        "tls": bool(args.tls),
        "own_folders": bool(args.own_folders),
        "opened": opened_files(dep.logs) if args.audit_opens else None,
        "clientapp": args.clientapp,
        "node_poll": args.node_poll,
        "heartbeat_interval": args.heartbeat_interval,
        "load_average": {"start": load_start, "end": os.getloadavg()},
        "deployment": deployment,
        "simulation": simulation,
        "seconds_per_round": {
            "deployment": seconds_per_round(deployment) if deployment else None,
            "simulation": sim_seconds,
        },
        "wall_seconds": wall,
        "exit_code": exit_code,
        "flwr_run_exit_code": flwr_rc,
        "status": status,
        "lost_client": lost,
        "superlink_restart": link_restart,
        "same_results": (
            same_results(deployment, simulation)
            if deployment is not None and simulation is not None
            else None
        ),
        "work": str(work),
    }
    if args.timeline:
        doc["timeline"] = timeline(dep.logs, work / "workers", num_nodes)
    target = Path(args.json)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2, default=float))
    os.replace(tmp, target)
    print(
        f"[deploy] exit {exit_code}; s/round deployment "
        f"{doc['seconds_per_round']['deployment']}, simulation {sim_seconds}; "
        f"same results: {doc['same_results']}; {target}"
    )
    if not args.keep and args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
