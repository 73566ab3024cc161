r"""The TLS commands of ``docs/flower.md`` (the fenced block that starts with
``# tls-commands``), run as written on 127.0.0.1 in a temporary folder: the
certificate script, a SuperLink with TLS and SuperNode authentication, the
``flwr`` configuration, two registered SuperNodes and ``flwr supernode ls``,
which must list both nodes online. Only the ports are replaced (by free
ones) and the script's path made absolute; the last line, ``flwr run`` with
an elided run config, is not run. Slow (process start-up, Flower's waits)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("flwr")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_flower_deploy import free_ports, load_benchmark  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
MARK = "# tls-commands"


def tls_block(doc: str) -> list[str]:
    r"""The lines of the fenced block of ``doc`` whose first line is
    :data:`MARK`, without that line."""
    blocks = re.findall(r"```bash\n(.*?)```", doc, flags=re.S)
    found = [b for b in blocks if b.startswith(MARK + "\n")]
    assert len(found) == 1, f"{len(found)} blocks start with {MARK!r}"
    return found[0].splitlines()[1:]


def steps(lines: list[str]) -> list[str]:
    r"""Shell commands: continued lines joined, a here-document kept with
    the command that opens it."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        cmd = lines[i]
        while cmd.endswith("\\"):
            i += 1
            cmd = cmd[:-1] + lines[i].strip()
        heredoc = re.search(r"<<'?(\w+)'?", cmd)
        if heredoc:
            end = lines.index(heredoc.group(1), i + 1)
            cmd = "\n".join([cmd, *lines[i + 1 : end + 1]])
            i = end
        out.append(cmd)
        i += 1
    return out


def localise(cmd: str, ports: dict[str, int]) -> str:
    cmd = cmd.replace("scripts/", f"{ROOT}/scripts/")
    for old, new in ports.items():
        cmd = re.sub(rf"\b{old}\b", str(new), cmd)
    return cmd


def online_nodes(cmd: str, env: dict, cwd: Path, want: int) -> list[dict]:
    r"""``cmd`` with ``--format json`` until it lists ``want`` online
    nodes (a node registers within seconds of its start)."""
    deadline = time.monotonic() + 120
    nodes: list[dict] = []
    while time.monotonic() < deadline:
        done = subprocess.run(
            f"{cmd} --format json", shell=True, cwd=cwd, env=env,
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        doc = json.loads(done.stdout)
        nodes = [n for n in doc["nodes"] if n["status"] == "online"]
        if len(nodes) == want:
            return nodes
        time.sleep(2)
    raise AssertionError(f"{len(nodes)} of {want} nodes online: {doc}")


@pytest.mark.slow
@pytest.mark.skipif(
    not (shutil.which("openssl") and shutil.which("ssh-keygen")),
    reason="scripts/flower_certificates.sh needs openssl and ssh-keygen",
)
def test_the_documented_tls_commands_register_the_nodes(tmp_path):
    base = free_ports(9460)
    ports = {"8000": base, "9094": base + 1, "9095": base + 2}
    cmds = steps(tls_block((ROOT / "docs" / "flower.md").read_text()))
    assert cmds[-1].startswith("flwr run ")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PATH=f"{BIN}{os.pathsep}{env['PATH']}", FLWR_TELEMETRY_ENABLED="0")
    env.update(FLWR_HOME=str(tmp_path / "home"), PWD=str(tmp_path))
    procs: list[subprocess.Popen] = []
    try:
        for cmd in map(lambda c: localise(c, ports), cmds[:-1]):
            run_step(cmd, env, tmp_path, procs)
        listing = cmds[-2].split("#")[0].strip()
        assert listing == "flwr supernode ls local-deployment"
        nodes = online_nodes(listing, env, tmp_path, want=2)
        assert len({n["node-id"] for n in nodes}) == 2
        assert all(p.poll() is None for p in procs), "a process stopped"
    finally:
        for proc in procs:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def run_step(cmd: str, env: dict, cwd: Path, procs: list) -> None:
    r"""A command ending in ``&`` starts in the background (the SuperLink:
    the next command waits for its port); any other must exit 0."""
    code = cmd.split("#")[0].rstrip() if "<<" not in cmd else cmd
    if not code.endswith("&"):
        done = subprocess.run(
            code, shell=True, executable="/bin/bash", cwd=cwd, env=env,
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, f"{cmd}\n{done.stdout}\n{done.stderr}"
        return
    with open(cwd / f"proc{len(procs)}.log", "wb") as log:
        proc = subprocess.Popen(
            code[:-1], shell=True, executable="/bin/bash", cwd=cwd, env=env,
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    procs.append(proc)
    port = re.search(r"--port (\d+)", code)
    if port:
        load_benchmark().wait_port(int(port.group(1)))
