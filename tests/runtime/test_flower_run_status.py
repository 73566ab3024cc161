r"""How a script learns a deployment run's outcome
(:mod:`fedgraph.runtime.flower.run_status`, ``fedgraph flower-run``): the
ServerApp's heartbeat, and a follower that exits non-zero and never leaves
``status.json`` at ``running`` once the ServerApp is gone. Fake processes,
a fake clock and files written by the test; one fake ``flwr`` on PATH."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("flwr")

from fedgraph.cli.main import main  # noqa: E402
from fedgraph.runtime.flower.run_status import (  # noqa: E402
    file_id,
    follow,
    heartbeat,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))


class FakeProcess:
    r"""``poll()`` answers ``None`` ``running`` times, then ``rc``."""

    def __init__(self, rc: int, running: int = 0) -> None:
        self.rc, self.running = rc, running

    def poll(self) -> int | None:
        if self.running > 0:
            self.running -= 1
            return None
        return self.rc


class Clock:
    r"""A clock that ``sleep`` moves; ``events[t]`` runs at time ``t``."""

    def __init__(self, events: dict[float, object] | None = None) -> None:
        self.now, self.events = 0.0, dict(events or {})

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        for t in sorted(t for t in self.events if t <= self.now):
            self.events.pop(t)()


def write(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


def run_follow(out, process, clock, **kw):
    return follow(out, process, clock=lambda: clock.now, sleep=clock.sleep, **kw)


def test_a_completed_run_exits_0_once_flwr_run_has_exited(tmp_path):
    write(tmp_path / "status.json", {"status": "completed", "error": ""})
    outcome = run_follow(tmp_path, FakeProcess(0, running=3), Clock())
    assert (outcome.status, outcome.exit_code) == ("completed", 0)


def test_a_completed_run_whose_flwr_run_failed_exits_1(tmp_path):
    write(tmp_path / "status.json", {"status": "completed", "error": ""})
    outcome = run_follow(tmp_path, FakeProcess(3), Clock())
    assert (outcome.status, outcome.message, outcome.exit_code) == (
        "failed", "`flwr run` exited with 3", 1,
    )  # fmt: skip


def test_a_failed_serverapp_exits_1_with_its_error(tmp_path):
    error = "ClientReplyError: Round 2, 'train': client 1 …"
    write(tmp_path / "status.json", {"status": "failed", "error": error})
    outcome = run_follow(tmp_path, FakeProcess(0), Clock())
    assert (outcome.status, outcome.message, outcome.exit_code) == ("failed", error, 1)


def test_a_status_left_by_an_earlier_run_is_not_this_runs(tmp_path):
    status = tmp_path / "status.json"
    write(status, {"status": "completed", "error": ""})  # an earlier run's
    outcome = run_follow(tmp_path, FakeProcess(0), Clock(), before=file_id(status))
    assert outcome.exit_code == 1 and outcome.status == "failed"
    assert outcome.message == (
        f"`flwr run` exited with 0 and the ServerApp wrote no {status} for this "
        "run (`flwr log` has its error)"
    )
    assert json.loads(status.read_text())["status"] == "completed"  # untouched


def test_a_running_status_without_heartbeat_becomes_lost(tmp_path):
    status = tmp_path / "status.json"
    write(status, {"status": "running", "error": ""})
    write(tmp_path / "heartbeat.json", {"beat": 4, "interval": 5.0})
    outcome = run_follow(tmp_path, FakeProcess(0), Clock(), lost_after=20)
    error = (
        f"the ServerApp stopped beating {tmp_path / 'heartbeat.json'} 20 s ago "
        f"while {status} said running: it was killed or its SuperLink is gone; "
        "the run did not checkpoint, so it cannot continue: start it again (with "
        "`checkpoint-dir`, `run-name` and a `state-dir` on every node, a lost run "
        "can resume)"
    )
    assert (outcome.status, outcome.message, outcome.exit_code) == ("lost", error, 1)
    assert json.loads(status.read_text()) == {"status": "lost", "error": error}


@pytest.mark.parametrize("checkpointed", [True, False])
def test_a_lost_checkpointed_run_names_how_to_resume_it(tmp_path, checkpointed):
    # the heartbeat of a run with `checkpoint-dir` names it and `run-name`
    ckpt = tmp_path / "ckpt"
    with heartbeat(str(tmp_path), str(ckpt), "c3", interval=0.01):
        pass
    beat = json.loads((tmp_path / "heartbeat.json").read_text())
    assert beat == {
        "beat": 0,
        "interval": 0.01,
        "resume": {"checkpoint-dir": str(ckpt), "run-name": "c3"},
    }
    if checkpointed:
        ckpt.mkdir()
        (ckpt / "last.pt").write_bytes(b"round 1")
    write(tmp_path / "status.json", {"status": "running", "error": ""})
    outcome = run_follow(tmp_path, FakeProcess(1), Clock(), lost_after=20)
    assert outcome.exit_code == 1
    assert outcome.message.endswith(
        f"it was killed or its SuperLink is gone; to continue from {ckpt}/last.pt, "
        "start it again with the same run config and `resume = true` "
        f"(`checkpoint-dir` '{ckpt}', `run-name` 'c3'; every node keeps its "
        "`state-dir`)"
        if checkpointed
        else "it was killed or its SuperLink is gone; it stopped before its first "
        f"checkpoint ({ckpt}/last.pt is missing): start it again"
    )
    assert json.loads((tmp_path / "status.json").read_text())["status"] == "lost"
    if checkpointed:  # the checkpoint is left as it was
        assert (ckpt / "last.pt").read_bytes() == b"round 1"


@pytest.mark.parametrize(
    ("wait", "checkpoint", "message"),
    [
        (0.0, False,
         "to outlive a lost node, set `wait-for-failed` (seconds an exchange waits "
         "for the node to come back) with `checkpoint-dir` and `run-name` in the "
         "run config and a `state-dir` in every node's config (a restarted node "
         "restores its snapshot)"),
        (0.0, True,
         "to outlive a lost node, set `wait-for-failed` (seconds an exchange waits "
         "for the node to come back; this run's checkpoints let a restarted node "
         "restore its snapshot), or start the run again with `resume = true`"),
        (30.0, False,
         "`wait-for-failed` waited 30 s, but a restarted node restores its "
         "snapshot only with `checkpoint-dir` and `run-name` in the run config "
         "and a `state-dir` in every node's config"),
        (12.5, True,
         "the node did not come back within `wait-for-failed` 12.5 s (restart it "
         "with the same `state-dir`, or start the run again with `resume = true`)"),
    ],
)  # fmt: skip
def test_a_lost_node_error_names_the_settings_that_outlive_it(
    wait, checkpoint, message
):
    from fedgraph.runtime.flower.failures import outliving_a_lost_node

    assert outliving_a_lost_node(wait, checkpoint) == message


def test_a_beating_serverapp_is_waited_for(tmp_path):
    # beats every 5 s for 60 s, then completes: never lost with lost_after 20;
    # `flwr run` exits at 65 s, and its exit code is waited for
    beat = tmp_path / "heartbeat.json"
    events = {t: (lambda t=t: write(beat, {"beat": t})) for t in range(5, 60, 5)}
    events[60] = lambda: write(tmp_path / "status.json", {"status": "completed"})
    clock = Clock(events)
    write(tmp_path / "status.json", {"status": "running", "error": ""})
    outcome = run_follow(tmp_path, FakeProcess(0, running=65), clock, lost_after=20)
    assert outcome.status == "completed" and clock.now == 65


def test_following_without_a_process_waits_for_the_status(tmp_path):
    clock = Clock({3: lambda: write(tmp_path / "status.json", {"status": "failed"})})
    outcome = run_follow(tmp_path, None, clock)
    assert (outcome.status, outcome.message, clock.now) == ("failed", "failed", 3)


def test_the_heartbeat_counts_up_while_the_block_runs(tmp_path):
    import time

    with heartbeat(str(tmp_path), interval=0.01):
        time.sleep(0.2)
    doc = json.loads((tmp_path / "heartbeat.json").read_text())
    assert doc["interval"] == 0.01 and doc["beat"] >= 2
    with heartbeat(""):
        pass  # no out: nothing written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["heartbeat.json"]


FAKE_FLWR = """#!{python}
import json, sys
config = sys.argv[sys.argv.index("--run-config") + 1]
out = config.split('out="')[1].rstrip('"')
json.dump({{"status": "running", "error": ""}}, open(out + "/status.json", "w"))
print("fake flwr", " ".join(sys.argv[1:]))
"""


def test_flower_run_marks_a_vanished_serverapp_lost(tmp_path, monkeypatch, capsys):
    # `flwr run` exits 0 leaving `running` and no heartbeat: a killed ServerApp
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "flwr").write_text(FAKE_FLWR.format(python=sys.executable))
    (bin_dir / "flwr").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    out = tmp_path / "out"
    out.mkdir()
    argv = ["flower-run", "app", "fed", "--out", str(out), "--lost-after", "1"]
    assert main([*argv, "--run-config", "num-rounds=2"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("fedgraph flower-run: lost: the ServerApp stopped beating")
    assert json.loads((out / "status.json").read_text())["status"] == "lost"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["app", "fed", "--run-config", "out='x' dim=8"],
         "`--run-config` sets `out` (got \"out='x' dim=8\"); give it as `--out`"),
        (["app"], "`FEDERATION` is missing after `APP` (got 'app')"),
    ],
)  # fmt: skip
def test_flower_run_names_bad_arguments(tmp_path, capsys, extra, message):
    assert main(["flower-run", "--out", str(tmp_path), *extra]) == 2
    assert capsys.readouterr().err == f"fedgraph flower-run: error: {message}\n"


def test_flower_run_refuses_a_lost_after_that_is_not_positive(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["flower-run", "--out", str(tmp_path), "--lost-after", "0"])
    assert exc.value.code == 2
    assert capsys.readouterr().err == (
        "fedgraph flower-run: error: argument --lost-after: must be > 0 (got 0) "
        "(see `fedgraph flower-run --help`)\n"
    )


def serverapps(pid: int) -> list:
    import psutil

    procs = psutil.Process(pid).children(recursive=True)
    return [p for p in procs if "flwr-serverapp" in " ".join(p.cmdline())]


@pytest.mark.slow
def test_flower_run_exits_1_and_writes_lost_when_the_serverapp_is_killed(tmp_path):
    # real processes: a SuperLink, three SuperNodes (the deployment script's
    # helpers), `fedgraph flower-run` of a long FedE run; the ServerApp is
    # killed (SIGKILL) once it beats
    import shutil
    import subprocess
    import time

    from test_flower import toy_federation
    from test_flower_deploy import ROOT, TOY, free_ports, load_benchmark

    from fedgraph.partition import save_partition

    bench = load_benchmark()
    data = save_partition(toy_federation(), tmp_path / "toy3")
    argv = ["--data", str(data), "--algorithm", "fede", "--rounds", "50"]
    argv += ["--json", str(tmp_path / "x.json"), "--port", str(free_ports(9480))]
    dep = bench.Deployment(tmp_path / "work", data, 3, bench.parse_args(argv))
    app = shutil.copytree(ROOT / "examples" / "flower_app", tmp_path / "app")
    out = dep.server_dir / "out"
    config = " ".join(['data="data"', 'algorithm="fede"', "num-rounds=50", *TOY])
    cmd = [sys.executable, "-m", "fedgraph.cli", "flower-run", str(app)]
    cmd += ["local-deployment", "--out", str(out), "--lost-after", "10"]
    proc = None
    try:
        dep.start_superlink()
        dep.write_flwr_config()
        for k in range(3):
            dep.start_node(k)
        proc = subprocess.Popen(
            [*cmd, "--run-config", config], cwd=dep.server_dir, env=dep.server_env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 400
        while not (out / "heartbeat.json").exists() and time.monotonic() < deadline:
            time.sleep(1)
        assert json.loads((out / "status.json").read_text())["status"] == "running"
        (victim,) = serverapps(dep.procs["superlink"].pid)
        victim.kill()
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 1, err
        assert "fedgraph flower-run: lost: the ServerApp stopped beating" in err
        assert json.loads((out / "status.json").read_text())["status"] == "lost"
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
        dep.stop_all()
