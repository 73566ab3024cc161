r"""Numbers are checked before work starts: one test per CLI finding.

Every numeric option of ``fedgraph`` is parsed by a type of
:mod:`fedgraph.cli.options` (a range, finite), so a bad value is refused by
the parser with one line naming the option and exit status 2, before
anything is loaded or written. Tables too large for the machine are refused
by :func:`fedgraph.models.memory.check_kge_memory` before they are
allocated (tested with a fake, small memory limit), ``--threads`` is capped
at the machine's CPUs, and a full disk during a checkpoint save ends the
run with one line (exit 1) and leaves the last checkpoint as it was.
"""

from __future__ import annotations

import argparse
import errno
import os
import random
from pathlib import Path

import pytest
import torch

from fedgraph.cli import options
from fedgraph.cli.main import build_parser, main
from fedgraph.data.io import atomic_torch_save

pytestmark = pytest.mark.usefixtures("one_thread")

TINY = ["--algorithm", "fede", "--model", "distmult", "--rounds", "3", "--local-epochs", "1",
        "--dim", "8", "--batch-size", "32", "--num-negatives", "4",
        "--eval-every", "1", "--lr", "0.01", "--quiet"]  # fmt: skip


def write_federation(root: Path, n_clients: int = 2) -> Path:
    r"""A small federated folder: ``client0/ client1/`` of triple files."""
    rng = random.Random(0)
    for c in range(n_clients):
        d = root / f"client{c}"
        d.mkdir(parents=True)
        ents = [f"e{i}" for i in range(c * 4, c * 4 + 12)]
        # every entity and relation in train; no triple in two splits
        train = {f"{e}\tr{c}_{i % 3}\t{ents[(i + 1) % 12]}" for i, e in enumerate(ents)}
        rest = set()
        while len(train) < 60 or len(rest) < 16:
            line = f"{rng.choice(ents)}\tr{c}_{rng.randrange(3)}\t{rng.choice(ents)}"
            if line not in train and line not in rest:
                (train if len(train) < 60 else rest).add(line)
        rest = sorted(rest)
        for split, lines in (("train", train), ("valid", rest[:8]), ("test", rest[8:])):
            (d / f"{split}.txt").write_text("\n".join(sorted(lines)) + "\n")
    return root


def one_line(err: str) -> str:
    r"""The only line of ``err`` (no traceback, nothing else)."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err
    assert len(lines) == 1, err
    return lines[0]


def refused_by_parser(argv: list[str], capsys) -> str:
    r"""The one-line error of a command the parser refuses (exit 2)."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    return one_line(capsys.readouterr().err)


@pytest.fixture
def train_argv(tmp_path):
    return ["train", str(write_federation(tmp_path / "fed")), *TINY,
            "--out", str(tmp_path / "run")]  # fmt: skip


@pytest.fixture
def small_memory(monkeypatch):
    r"""A machine with 2 GB of memory left (whatever this one has)."""
    monkeypatch.setattr(
        "fedgraph.models.memory.available_memory", lambda device="cpu": 2 * 10**9
    )


def test_gamma_negative_is_refused(train_argv, tmp_path, capsys):
    line = refused_by_parser([*train_argv, "--gamma", "-5"], capsys)
    assert line.endswith("argument --gamma: must be >= 0 (got -5) (see `fedgraph "
                         "train --help`)")  # fmt: skip
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_gamma_nan_is_refused(train_argv, tmp_path, capsys, value):
    line = refused_by_parser([*train_argv, f"--gamma={value}"], capsys)
    assert f"argument --gamma: must be a finite number (got {value})" in line
    assert not (tmp_path / "run").exists()


def test_huge_dim_is_refused_before_allocating(
    train_argv, tmp_path, capsys, small_memory
):
    capsys.readouterr()
    assert main([*train_argv, "--dim", "100000000"]) == 2
    line = one_line(capsys.readouterr().err)
    assert line == (
        "fedgraph train: error: 2 KGE models with `dim` (--dim) 100000000 need at "
        "least 51.2 GB (tables 48.0 GB, a training step's negatives 3.2 GB), more "
        "than the 2.0 GB of memory available on cpu: lower `dim` (--dim)"
    )
    assert not (tmp_path / "run").exists()


def test_huge_num_negatives_is_refused_before_allocating(
    train_argv, tmp_path, capsys, small_memory
):
    capsys.readouterr()
    assert main([*train_argv, "--num-negatives", "1000000000"]) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith(
        "fedgraph train: error: 2 KGE models with `dim` (--dim) 8 need at least "
        "328.0 GB (tables 0.0 GB, a training step's negatives 328.0 GB)"
    )
    assert line.endswith(
        "more than the 2.0 GB of memory available on cpu: lower `num_negatives` "
        "(--num-negatives) or `batch_size` (--batch-size)"
    )
    assert not (tmp_path / "run").exists()


def test_huge_dim_of_a_baseline_is_refused_before_allocating(
    train_argv, capsys, small_memory
):
    argv = [*train_argv, "--dim", "100000000"]
    argv[argv.index("fede")] = "independent"
    capsys.readouterr()
    assert main(argv) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith(
        "fedgraph train: error: 2 KGE models with `dim` (--dim) 100000000 need"
    )
    assert line.endswith("lower `dim` (--dim)")


@pytest.mark.parametrize("command", ["train", "fuse", "unlearn"])
def test_threads_5000_is_refused_not_a_segfault(command, train_argv, tmp_path, capsys):
    argv = {
        "train": train_argv,
        "fuse": ["fuse", str(tmp_path), "--single", str(tmp_path)],
        "unlearn": ["unlearn", str(tmp_path), "--forget", str(tmp_path)],
    }[command]
    cpus = os.cpu_count()
    line = refused_by_parser([*argv, "--threads", "5000"], capsys)
    assert (
        "argument --threads: must be at most the number of CPUs of this machine, "
        f"{cpus} (got 5000)"
    ) in line
    assert torch.get_num_threads() == 1  # untouched


def test_threads_up_to_the_cpus_are_accepted():
    cpus = os.cpu_count()
    assert options.threads(str(cpus)) == cpus
    assert options.threads("0") == 0


def _disk_full_save(real_save):
    r"""``torch.save`` on a full disk: the bytes go to ``/dev/full``, through
    a path (torch's own writer: a ``RuntimeError``) or a file handle (the
    handle's ``OSError``), as torch does on a full device."""

    def save(obj, f, *args, **kwargs):
        if isinstance(f, (str, os.PathLike)):
            return real_save(obj, "/dev/full", *args, **kwargs)
        with open("/dev/full", "wb", buffering=0) as full:
            return real_save(obj, full, *args, **kwargs)

    return save


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_full_disk_during_checkpoint_save_is_one_line_exit_1(
    train_argv, tmp_path, capsys, monkeypatch
):
    out = tmp_path / "run"
    assert main([*train_argv, "--stop-after", "1"]) == 0
    saved = {p: p.read_bytes() for p in (out / "checkpoints").rglob("*.pt")}
    assert saved
    monkeypatch.setattr(torch, "save", _disk_full_save(torch.save))
    capsys.readouterr()
    assert main([*train_argv, "--resume"]) == 1
    line = one_line(capsys.readouterr().err)
    assert line.startswith("fedgraph train: failed: no space left on device while "
                           f"writing {out / 'checkpoints'}")  # fmt: skip
    assert line.endswith(".pt, if any, is intact")
    assert {p: p.read_bytes() for p in (out / "checkpoints").rglob("*.pt")} == saved
    assert not [p for p in out.rglob("*") if ".tmp-" in p.name]


def test_full_disk_in_atomic_torch_save_names_the_file(tmp_path, monkeypatch):
    path = tmp_path / "last.pt"
    atomic_torch_save({"round": 1}, path)
    before = path.read_bytes()

    def no_space(obj, f, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(torch, "save", no_space)
    with pytest.raises(OSError) as exc:
        atomic_torch_save({"round": 2}, path)
    assert exc.value.errno == errno.ENOSPC
    assert str(exc.value) == (
        f"no space left on device while writing {path}; the previous last.pt, "
        "if any, is intact"
    )
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last.pt"]


# -------------------------------------------------- every numeric option


def _numeric_actions():
    r"""``(command, option, action)`` of every option of every sub-command
    whose value is a number (its type is not ``str``/``Path``)."""
    out = []
    for action in build_parser()._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for command, sub in action.choices.items():
            for a in sub._actions:
                if (
                    a.type is not None
                    and a.type not in (str, Path)
                    and a.option_strings
                ):
                    if getattr(a.type, "__module__", "") == "fedgraph.cli.choices":
                        continue  # a name normaliser, not a number
                    out.append((command, a.option_strings[-1], a))
    return out


NUMERIC = _numeric_actions()


def test_every_numeric_option_takes_a_checked_type():
    loose = [
        f"{cmd} {opt}"
        for cmd, opt, a in NUMERIC
        if a.type in (int, float) or a.type.__module__ != options.__name__
    ]
    assert not loose, f"numeric options without a range-checked type: {loose}"
    assert len(NUMERIC) >= 40  # the parsers were found


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999", "ten", "2.5x"])
def test_every_numeric_option_refuses_non_finite_and_non_numbers(value):
    for command, option, action in NUMERIC:
        with pytest.raises(argparse.ArgumentTypeError) as exc:
            action.type(value)
        assert "\n" not in str(exc.value), (command, option)


@pytest.mark.parametrize(
    "command, option, value, message",
    [
        ("train", "--gamma", "-1", "must be >= 0 (got -1)"),
        ("train", "--seed", "-1", "must be 0 or more (got -1)"),
        ("train", "--seed", str(2**32), "must be at most 2**32 - 1"),
        ("train", "--dp-delta", "1", "must lie in (0, 1) (got 1)"),
        ("train", "--dp-epsilon", "-1", "must be >= 0 (got -1)"),
        ("train", "--dp-clip", "0", "must be > 0 (got 0)"),
        ("train", "--secagg-neighbours", "-2", "must be 0 or more (got -2)"),
        ("partition", "--seed", "1.5", "must be an integer (got '1.5')"),
        ("audit", "--known-fraction", "inf", "must be a finite number (got inf)"),
        ("audit", "--round", "0", "must be a positive integer (got 0)"),
        ("unlearn", "--epochs", "-1", "must be 0 or more (got -1)"),
        ("unlearn", "--mu-soft", "-0.5", "must be >= 0 (got -0.5)"),
        ("unlearn", "--client", "-1", "must be 0 or more (got -1)"),
        ("fuse", "--lr", "0", "must be > 0 (got 0)"),
        ("fuse", "--epochs", "-3", "must be 0 or more (got -3)"),
    ],
)
def test_numeric_options_refuse_values_out_of_range(command, option, value, message):
    action = next(a for c, o, a in NUMERIC if (c, o) == (command, option))
    with pytest.raises(argparse.ArgumentTypeError, match=None) as exc:
        action.type(value)
    assert message in str(exc.value)


def test_threads_5000_in_a_flower_run_config_is_capped_on_the_node(monkeypatch):
    from fedgraph.runtime.flower import config

    calls = []
    monkeypatch.setattr(config.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(torch, "set_num_threads", calls.append)
    with pytest.warns(UserWarning) as record:
        assert config.use_threads(5000) == 2
    assert calls == [2]
    assert [str(w.message) for w in record] == [
        "Run-config key `threads` = 5000 exceeds this machine's 2 CPUs: using 2"
    ]
    assert config.use_threads(0) == 0 and calls == [2]
