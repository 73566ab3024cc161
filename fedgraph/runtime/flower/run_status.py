r"""A deployment run's outcome as a script sees it.

``flwr run`` exits 0 when the ``ServerApp`` fails or is killed; the
``ServerApp`` writes ``OUT/status.json`` (``running``, then ``completed`` or
``failed``) and, while it runs, beats ``OUT/heartbeat.json`` every
:data:`HEARTBEAT_S` seconds (:func:`heartbeat`). :func:`follow` watches both
until the run ends: a ``running`` status whose heartbeat has not moved for
``lost_after`` seconds (of the follower's own clock) means the ``ServerApp``
is gone (killed, or its SuperLink is); the follower then writes
``{"status": "lost"}`` into ``status.json``, so the file does not stay
``running``. ``fedgraph flower-run`` wraps ``flwr run`` with it.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fedgraph.data.io import atomic_write_json

#: seconds between two beats of a running ``ServerApp``
HEARTBEAT_S = 5.0
#: the statuses after which a run no longer changes
FINAL = ("completed", "failed", "lost")


@contextmanager
def heartbeat(
    out: str,
    checkpoint_dir: str = "",
    run_name: str = "",
    *,
    interval: float = HEARTBEAT_S,
) -> Iterator[None]:
    r"""While the block runs, a thread writes ``OUT/heartbeat.json``
    (``{"beat": n, "interval": s}``, ``n`` counting up) every ``interval``
    seconds; nothing when ``out`` is empty. A checkpointed run's beat also
    names its ``checkpoint-dir`` and ``run-name`` (``"resume"``), which a
    follower that finds the run lost tells the user to resume from."""
    if not out:
        yield
        return
    stop = threading.Event()
    path = Path(out) / "heartbeat.json"
    doc: dict[str, Any] = {"interval": interval}
    if checkpoint_dir:
        doc["resume"] = {"checkpoint-dir": checkpoint_dir, "run-name": run_name}

    def beat() -> None:
        n = 0
        while True:
            atomic_write_json(path, {"beat": n, **doc})
            n += 1
            if stop.wait(interval):
                return

    thread = threading.Thread(target=beat, name="fedgraph-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def how_to_continue(beat: dict[str, Any] | None) -> str:
    r"""What lets a lost run continue, from its last ``heartbeat.json``
    (:func:`heartbeat`): ``resume = true`` with the same ``checkpoint-dir``
    and ``run-name`` when its ``last.pt`` exists, else a new start."""
    from fedgraph.runtime.simulation import LAST

    resume = (beat or {}).get("resume")
    if not isinstance(resume, dict) or not resume.get("checkpoint-dir"):
        return ("the run did not checkpoint, so it cannot continue: start it "
                "again (with `checkpoint-dir`, `run-name` and a `state-dir` on "
                "every node, a lost run can resume)")  # fmt: skip
    last = Path(resume["checkpoint-dir"]) / LAST
    if not last.exists():
        return (f"it stopped before its first checkpoint ({last} is missing): "
                "start it again")  # fmt: skip
    ckpt, name = resume["checkpoint-dir"], resume.get("run-name", "")
    return (f"to continue from {last}, start it again with the same run config "
            f"and `resume = true` (`checkpoint-dir` {ckpt!r}, `run-name` "
            f"{name!r}; every node keeps its `state-dir`)")  # fmt: skip


def file_id(path: Path) -> tuple[int, int] | None:
    r"""``(inode, mtime_ns)`` of ``path``, ``None`` when it does not exist:
    a status file with the id it had before the run started was not written
    by this run."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None  # not there yet, or replaced while read
    return doc if isinstance(doc, dict) else None


@dataclass
class Outcome:
    r"""How a followed run ended: ``exit_code`` 0 only for ``completed``."""

    status: str
    message: str

    @property
    def exit_code(self) -> int:
        return 0 if self.status == "completed" else 1


def follow(
    out: str | os.PathLike[str],
    process: Any = None,
    *,
    before: tuple[int, int] | None = None,
    lost_after: float = 4 * HEARTBEAT_S,
    poll: float = 1.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Outcome:
    r"""Waits until the run writing into ``out`` ends and returns how.

    ``process`` (``flwr run``, anything with ``poll()``) ends the wait
    when it exits before the ``ServerApp`` wrote a status of this run
    (``status.json`` missing or with the file id ``before``): the run did
    not start. A ``running`` status whose ``heartbeat.json`` has not
    changed for ``lost_after`` seconds is written over as ``lost``. A
    ``completed`` status with a non-zero ``process`` exit is a failure."""
    out = Path(out)
    watch = _Watch(out, clock(), lost_after)
    while True:
        rc = None if process is None else process.poll()
        waiting = process is not None and rc is None
        outcome = watch.check(rc, waiting, before, clock())
        if outcome is not None:
            return outcome
        sleep(poll)


class _Watch:
    r"""The state of :func:`follow` between two polls."""

    def __init__(self, out: Path, now: float, lost_after: float) -> None:
        self.out, self.lost_after = out, lost_after
        self.beat: Any = None
        self.since = now  # when the heartbeat last changed, follower's clock

    def check(
        self, rc: int | None, waiting: bool, before: Any, now: float
    ) -> Outcome | None:
        path = self.out / "status.json"
        fresh = file_id(path) not in (before, None)
        doc = (read_json(path) if fresh else None) or {}
        status = doc.get("status")
        if status == "completed" and waiting:
            return None  # `flwr run` has yet to exit: its code counts too
        if status in FINAL:
            return self.final(doc, rc)
        if status is None:
            if rc is None:
                return None
            return Outcome("failed", f"`flwr run` exited with {rc} and the ServerApp "
                           f"wrote no {path} for this run (`flwr log` has its error)")  # fmt: skip
        beat = read_json(self.out / "heartbeat.json")
        if beat != self.beat:
            self.beat, self.since = beat, now
        if now - self.since < self.lost_after:
            return None
        error = (f"the ServerApp stopped beating {self.out / 'heartbeat.json'} "
                 f"{now - self.since:.0f} s ago while {path} said running: it was "
                 f"killed or its SuperLink is gone; {how_to_continue(beat)}")  # fmt: skip
        atomic_write_json(path, {"status": "lost", "error": error})
        return Outcome("lost", error)

    def final(self, doc: dict[str, Any], rc: int | None) -> Outcome:
        if doc["status"] == "completed" and rc not in (None, 0):
            return Outcome("failed", f"`flwr run` exited with {rc}")
        return Outcome(doc["status"], doc.get("error") or doc["status"])


__all__ = [
    "FINAL",
    "HEARTBEAT_S",
    "Outcome",
    "file_id",
    "follow",
    "heartbeat",
    "how_to_continue",
    "read_json",
]
