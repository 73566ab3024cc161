r"""A run knows what it is: ``--resume`` continues only the run a folder
holds, trained with the command's settings on the same data.

Each test is named after a way ``--resume`` used to continue something else
without a word, and asserts the one-line error (exit 2) that now refuses it,
with every file of the run left as it was. The runs are tiny FedE
federations (two clients, a few dozen triples, one or two rounds)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import torch

from fedgraph.cli.main import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from test_train import _write_federation  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")

TRAIN = ["--algorithm", "fede", "--rounds", "2", "--local-epochs", "1", "--dim", "8",
         "--batch-size", "32", "--num-negatives", "4", "--eval-every", "1",
         "--lr", "0.01", "--quiet"]  # fmt: skip
KEEP = "resume with the recorded ones or train into a new `--out`"
LOST = "restore it from a copy, or train into a new `--out`"


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _argv(data: Path, out: Path, *extra: str) -> list[str]:
    return ["train", str(data), *TRAIN, "--out", str(out), *extra]


def _with(argv: list[str], option: str, value: str) -> list[str]:
    if option not in argv:
        return [*argv, option, value]
    argv = list(argv)
    argv[argv.index(option) + 1] = value
    return argv


def _refused(argv: list[str], out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    r"""Runs ``argv``: exit 2, one line on stderr, ``out`` untouched; the line."""
    before = _snapshot(out)
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert _snapshot(out) == before
    prefix = "fedgraph train: error: "
    assert lines[0].startswith(prefix), lines[0]
    return lines[0][len(prefix) :]


def _run_id(out: Path) -> str:
    return json.loads((out / "progress.json").read_text())["settings"]["run_id"]


@pytest.fixture
def stopped(tmp_path):
    r"""A FedE run stopped after round 1 of 2 (resumable): (data, out)."""
    data, out = tmp_path / "fed", tmp_path / "run"
    _write_federation(data)
    assert main(_argv(data, out, "--stop-after", "1")) == 0
    return data, out


def test_resume_without_progress_json_refuses_another_algorithm_and_lr(stopped, capsys):
    # the checkpoint alone knows it is a FedE run with lr 0.01
    data, out = stopped
    (out / "progress.json").unlink()
    argv = _with(_with(_argv(data, out), "--algorithm", "fedprox"), "--lr", "0.02")
    line = _refused(argv + ["--resume"], out, capsys)
    assert line == (
        f"`--resume`: {out} was trained with other settings (algorithm 'fede' -> "
        f"'fedprox', lr 0.01 -> 0.02); {KEEP}"
    )


def test_resume_refuses_a_last_pt_of_another_seed(stopped, tmp_path, capsys):
    data, out = stopped
    other = tmp_path / "seed1"
    assert main(_with(_argv(data, other), "--seed", "1") + ["--stop-after", "1"]) == 0
    shutil.copy(other / "checkpoints" / "last.pt", out / "checkpoints" / "last.pt")
    line = _refused(_argv(data, out, "--resume"), out, capsys)
    assert line == (
        f"`--resume`: {out / 'checkpoints' / 'last.pt'} is from another run than "
        f"{out / 'progress.json'} (run id {_run_id(other)} against {_run_id(out)}); "
        "restore this run's files from a copy, or train into a new `--out`"
    )
    # the seed-1 checkpoints alone, as if they were this run's: its seed shows
    shutil.rmtree(out / "checkpoints")
    (out / "progress.json").unlink()
    shutil.copytree(other / "checkpoints", out / "checkpoints")
    line = _refused(_argv(data, out, "--resume"), out, capsys)
    assert (
        line
        == f"`--resume`: {out} was trained with other settings (seed 1 -> 0); {KEEP}"
    )


def test_resume_refuses_a_partition_edited_in_place(stopped, capsys):
    data, out = stopped
    # the last training triple gets another tail named earlier: the same
    # entities, relations, ids and counts, so the checkpoint still fits
    train = data / "client0" / "train.txt"
    original = train.read_text()
    lines = original.splitlines()
    h, r, t = lines[-1].split("\t")
    named = {e for line in lines[:-1] for e in line.split("\t")[::2]}
    assert t in named
    lines[-1] = next(
        f"{h}\t{r}\t{e}" for e in sorted(named) if f"{h}\t{r}\t{e}" not in lines
    )
    train.write_text("\n".join(lines) + "\n")
    line = _refused(_argv(data, out, "--resume"), out, capsys)
    from fedgraph.runtime.run_record import data_fingerprint

    edited = data_fingerprint(data)
    train.write_text(original)
    recorded = data_fingerprint(data)
    # progress.json and every checkpoint record the fingerprint of the data
    settings = json.loads((out / "progress.json").read_text())["settings"]
    for name in ("last.pt", "best.pt"):
        state = torch.load(out / "checkpoints" / name, weights_only=False)
        assert state["settings"]["data_sha256"] == recorded
    assert settings["data_sha256"] == recorded != edited
    assert line == (
        f"`--resume`: {out} was trained with other settings (data_sha256 "
        f"{recorded[7:19]} -> {edited[7:19]} (the data files changed)); {KEEP}"
    )


def test_resume_refuses_a_run_whose_last_pt_was_deleted(stopped, capsys):
    data, out = stopped
    (out / "checkpoints" / "last.pt").unlink()
    line = _refused(_argv(data, out, "--resume"), out, capsys)
    assert line == (
        f"`--resume`: {out / 'progress.json'} records 1 trained round but "
        f"{out / 'checkpoints' / 'last.pt'} is missing, so the run would start "
        f"again from round 1; {LOST}"
    )


def test_resume_refuses_a_run_whose_checkpoints_folder_was_deleted(stopped, capsys):
    data, out = stopped
    shutil.rmtree(out / "checkpoints")
    line = _refused(_argv(data, out, "--resume"), out, capsys)
    assert line == (
        f"`--resume`: {out / 'progress.json'} records 1 trained round but "
        f"{out / 'checkpoints'} is missing, so the run would start again from "
        f"round 1; {LOST}"
    )


def test_resume_refuses_a_checkpoint_without_a_record(stopped, capsys):
    data, out = stopped
    last = out / "checkpoints" / "last.pt"
    recorded = last.read_bytes()
    state = torch.load(last, weights_only=False)
    state.pop("settings", None)
    torch.save(state, last)
    line = _refused(_argv(data, out, "--resume"), out, capsys)
    assert line == (
        f"`--resume`: {last} records no run settings, so this command cannot be "
        "checked against the run that wrote it; train into a new `--out`"
    )
    last.write_bytes(recorded)  # the checkpoint as written: it resumes
    assert main(_argv(data, out, "--resume")) == 0
    assert json.loads((out / "results.json").read_text())["rounds"] == 2


def test_resume_with_more_rounds_than_a_finished_run_is_refused(stopped, capsys):
    data, out = stopped
    assert main(_argv(data, out, "--resume")) == 0  # finished at round 2
    line = _refused(
        _with(_argv(data, out), "--rounds", "5") + ["--resume"], out, capsys
    )
    assert line == (
        f"`--rounds 5`: {out} already finished at round 2, its last; `--resume` "
        "does not train a finished run further: resume it with `--rounds 2` to "
        "see its results, or train into a new `--out` with `--rounds 5`"
    )
    # its own --rounds reports it as written
    assert main(_argv(data, out, "--resume")) == 0
    assert "already finished at round 2" in capsys.readouterr().out


def test_the_data_fingerprint_covers_every_file_but_hidden_ones(tmp_path):
    from fedgraph.runtime.run_record import data_fingerprint

    (tmp_path / "client0").mkdir()
    (tmp_path / "client0" / "train.txt").write_text("a\tr\tb\n")
    (tmp_path / "client0" / "test.txt").write_text("b\tr\ta\n")
    first = data_fingerprint(tmp_path)
    assert first.startswith("sha256:") and len(first) == 7 + 64
    (tmp_path / ".lock").write_text("12345")  # hidden: not data
    assert data_fingerprint(tmp_path) == first
    (tmp_path / "client0" / "test.txt").rename(tmp_path / "client0" / "valid.txt")
    renamed = data_fingerprint(tmp_path)
    (tmp_path / "client0" / "valid.txt").write_text("b\tr\tb\n")
    assert len({first, renamed, data_fingerprint(tmp_path)}) == 3


@pytest.mark.parametrize(
    "finished, early, rounds, message",
    [
        (False, False, 4, None),  # a stopped run may go on to more rounds
        (False, False, 3, "`--rounds 3`: R has trained 3 rounds and not finished; "
         "resume it with more `--rounds` than 3"),
        (True, False, 3, None),  # a finished run with its own --rounds: reported
        (True, True, 9, None),  # stopped early: a longer run stops there too
        (True, True, 2, "`--rounds 2`: R stopped early at round 3, so a run of 2 "
         "rounds would have ended sooner; resume it with `--rounds 3` or more to "
         "see its results, or train into a new `--out`"),
    ],
)  # fmt: skip
def test_rounds_are_checked_against_where_the_run_stands(
    finished, early, rounds, message
):
    from fedgraph.runtime.run_record import check_rounds

    last = {"round": 3, "finished": finished, "result": {"stopped_early": early}}
    if message is None:
        assert check_rounds("R", last, rounds) is None
    else:
        with pytest.raises(ValueError) as err:
            check_rounds("R", last, rounds)
        assert str(err.value) == message
