r"""Shorter waits in Flower's message path
(:mod:`fedgraph.runtime.flower.polling`, the SuperNode launcher)."""

from __future__ import annotations

import time
import types

import pytest

pytest.importorskip("flwr")

from fedgraph.cli.flower_supernode import parse_args  # noqa: E402
from fedgraph.runtime.flower import polling  # noqa: E402


def test_the_clock_maps_only_flowers_two_sleeps(monkeypatch):
    slept = []
    monkeypatch.setattr(polling.time, "sleep", slept.append)
    clock = polling.PollClock(idle=0.2, reply=0.05)
    for seconds in (3, 0.5, 1.0, 0.25):
        clock.sleep(seconds)
    assert slept == [0.2, 0.05, 1.0, 0.25]
    assert clock.monotonic is time.monotonic  # the rest is the time module's
    assert repr(clock) == "PollClock(idle=0.2, reply=0.05)"


def test_flowers_supernode_has_the_sleeps_the_launcher_maps():
    import importlib

    real = importlib.import_module("flwr.supernode.start_client_internal")
    # a copy of Flower's module, so that the real one stays untouched
    copy = types.ModuleType(real.__name__)
    copy.__dict__.update(real.__dict__)
    clock = polling.shorten_polls(copy, 0.1, 0.05)
    assert copy.time is clock and real.time is time
    assert (clock.idle, clock.reply) == (0.1, 0.05)


def test_a_module_without_the_sleeps_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "other_supernode.py"
    path.write_text("import time\n\ndef loop():\n    time.sleep(1)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import other_supernode

    with pytest.raises(RuntimeError, match=r"has no time.sleep\(3\) / time.sleep"):
        polling.shorten_polls(other_supernode, 0.1, 0.05)
    assert other_supernode.time is time


def test_the_pull_backoff_changes_flowers_first_retry_only():
    from flwr.supercore.inflatable import inflatable_utils as iu

    before = {n: dict(getattr(iu, n).__kwdefaults__) for n in polling.PULL_FUNCTIONS}
    try:
        previous = polling.shorten_pull_backoff(0.05)
        flower = {"initial_backoff": 1, "backoff_cap": 10}  # Flower's 1 s … 10 s
        assert previous == {n: flower for n in polling.PULL_FUNCTIONS}
        for name in polling.PULL_FUNCTIONS:
            now = getattr(iu, name).__kwdefaults__
            assert now == {**before[name], "initial_backoff": 0.05, "backoff_cap": 0.2}
    finally:
        for name in polling.PULL_FUNCTIONS:
            getattr(iu, name).__kwdefaults__.update(before[name])
    with pytest.raises(ValueError, match=r"`initial` must lie in \(0, 60\]"):
        polling.shorten_pull_backoff(0)


def test_a_pull_that_comes_early_retries_after_the_shorter_backoff():
    from flwr.supercore.inflatable import inflatable_utils as iu

    before = dict(iu.pull_objects.__kwdefaults__)
    calls = []

    def pull(object_id):
        calls.append(time.monotonic())
        if len(calls) < 3:  # not there yet, twice
            raise iu.ObjectUnavailableError(object_id)
        return b"content"

    try:
        polling.shorten_pull_backoff(0.01)
        assert iu.pull_objects(["a"], pull) == {"a": b"content"}
    finally:
        iu.pull_objects.__kwdefaults__.update(before)
    assert calls[-1] - calls[0] < 0.5  # 0.01 + 0.02 s, not Flower's 1 + 2 s
    assert iu.pull_objects.__kwdefaults__ == before


def test_the_launcher_keeps_flowers_arguments():
    args, rest = parse_args(
        ["--idle-poll-interval", "0.1", "--insecure", "--superlink", "h:9092"]
    )
    assert args.idle_poll_interval == 0.1 and args.reply_poll_interval == 0.05
    assert args.pull_backoff == 0.05
    assert rest == ["--insecure", "--superlink", "h:9092"]


def test_the_launcher_names_a_bad_interval(capsys):
    with pytest.raises(SystemExit) as exc:
        parse_args(["--idle-poll-interval", "0"])
    assert exc.value.code == 2
    assert "--idle-poll-interval: must lie in (0, 60] s (got 0)" in (
        capsys.readouterr().err
    )


def test_the_heartbeat_interval_is_what_the_node_reports_and_keeps():
    import importlib

    modules = [importlib.import_module(n) for n in polling.HEARTBEAT_MODULES]
    before = {m: m.HEARTBEAT_DEFAULT_INTERVAL for m in modules}
    try:
        previous = polling.set_heartbeat_interval(10)
        assert previous == {m.__name__: 30 for m in modules}  # Flower's 30 s
        assert all(m.HEARTBEAT_DEFAULT_INTERVAL == 10 for m in modules)
        # the sender waits (interval - 5 s call timeout) x 0.7 ... 0.9
        from flwr.common import constant

        waits = [
            (10 - constant.HEARTBEAT_CALL_TIMEOUT)
            * (constant.HEARTBEAT_BASE_MULTIPLIER + r)
            for r in constant.HEARTBEAT_RANDOM_RANGE
        ]
        assert waits == pytest.approx([3.5, 4.5])
    finally:
        for module, value in before.items():
            module.HEARTBEAT_DEFAULT_INTERVAL = value
    for bad in (9.9, 1801):
        with pytest.raises(ValueError, match=r"must lie in \[10, 1800\] s"):
            polling.set_heartbeat_interval(bad)
    assert all(m.HEARTBEAT_DEFAULT_INTERVAL == 30 for m in modules)


def test_the_launcher_takes_a_heartbeat_interval(capsys):
    args, rest = parse_args(["--heartbeat-interval", "12", "--insecure"])
    assert args.heartbeat_interval == 12 and rest == ["--insecure"]
    assert parse_args([])[0].heartbeat_interval is None  # Flower's 30 s
    with pytest.raises(SystemExit) as exc:
        parse_args(["--heartbeat-interval", "5"])
    assert exc.value.code == 2
    assert "--heartbeat-interval: must lie in [10, 1800] s, the SuperLink's " in (
        capsys.readouterr().err
    )


def test_the_flower_pin_admits_exactly_the_tested_releases():
    from importlib.metadata import version
    from pathlib import Path

    import tomllib
    from packaging.requirements import Requirement

    meta = tomllib.loads(
        (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    )
    extras = meta["project"]["optional-dependencies"]
    for extra in ("flower", "privacy"):
        (req,) = [Requirement(r) for r in extras[extra] if r.startswith("flwr")]
        for minor in polling.FLOWER_TESTED:
            assert req.specifier.contains(f"{minor}.0"), (extra, minor)
        assert not req.specifier.contains("1.40.9"), extra
        newer = polling.FLOWER_TESTED[-1].split(".")
        assert not req.specifier.contains(f"{newer[0]}.{int(newer[1]) + 1}.0"), extra
    installed = ".".join(version("flwr").split(".")[:2])
    assert installed in polling.FLOWER_TESTED
