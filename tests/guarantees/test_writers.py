r"""One guard for every writer: a file or folder fedgraph did not write is
never replaced, and a folder is written by one process at a time.

Each CLI test is named after a way a command used to replace someone's file
(or another process's results) without a word, and asserts the one-line
error (exit 2) that now refuses it, the file left byte for byte; beside it,
fedgraph's own outputs are still replaced where that is documented. The runs
are FedLU's two-client toy federation, one round each. The last tests pin
down :mod:`fedgraph.guard` itself."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fedgraph.cli.main import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "federated"))
from fedlu_toy import write_toy_folders  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")

SMALL = ["--rounds", "1", "--eval-every", "1", "--dim", "8", "--batch-size", "32",
         "--num-negatives", "4", "--lr", "0.05", "--gamma", "4", "--quiet"]  # fmt: skip
THESIS = b"\\documentclass{article}\n\\begin{document}chapter 1\\end{document}\n"
REFUSED = "was not written by fedgraph"
NOT_REPLACED = "not replaced; pick another"
#: holds ``argv[1]`` locked (flock, as a second fedgraph process would) until
#: its stdin closes
HOLDER = (
    "import fcntl, os, sys\n"
    "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
    "fcntl.flock(fd, fcntl.LOCK_EX)\n"
    "os.write(fd, f'{os.getpid()}\\n'.encode())\n"
    "print('held', flush=True)\n"
    "sys.stdin.read()\n"
)


def _train(data: Path, out: Path, algorithm: str, *extra: str) -> int:
    argv = ["train", str(data), "--algorithm", algorithm, "--out", str(out), *SMALL]
    if algorithm != "independent":
        argv += ["--local-epochs", "1"]
    return main([*argv, *extra])


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _error(capsys) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err and len(lines) >= 1
    return lines[-1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    r"""The toy data, a FedE run recording its uploads, an Independent run
    and a FedLU run (one round each)."""
    root = tmp_path_factory.mktemp("writers")
    data = root / "toy"
    write_toy_folders(data)
    assert _train(data, root / "fede", "fede", "--record-uploads", "last") == 0
    assert _train(data, root / "single", "independent") == 0
    assert _train(data, root / "fedlu", "fedlu") == 0
    return root


def _mine(tmp_path: Path, name: str = "thesis.tex") -> Path:
    path = tmp_path / "mine" / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(THESIS)
    return path


# ------------------------------------------------------------------ audit
def test_audit_out_does_not_replace_a_foreign_file(runs, tmp_path, capsys):
    thesis = _mine(tmp_path)
    argv = ["audit", str(runs / "fede"), "--attack", "membership", "--out"]
    assert main([*argv, str(thesis)]) == 2
    line = _error(capsys)
    assert line == (
        f"fedgraph audit: error: `{thesis}` {REFUSED} ({thesis.parent / '.fedgraph'} "
        "does not list it): not replaced; pick another `--out` or remove it yourself"
    )
    assert thesis.read_bytes() == THESIS
    assert not (thesis.parent / ".fedgraph").exists()  # nothing was written


def test_audit_out_replaces_its_own_report(runs, tmp_path, capsys):
    report = tmp_path / "mine" / "audit.json"
    report.parent.mkdir()
    (report.parent / "notes.txt").write_text("mine")
    argv = ["audit", str(runs / "fede"), "--attack", "membership", "--out"]
    assert main([*argv, str(report)]) == 0
    report.write_text(report.read_text().replace('"round"', '"old_round"'))
    assert main([*argv, str(report)]) == 0  # fedgraph's own report: replaced
    doc = json.loads(report.read_text())
    assert doc["round"] == 1 and "old_round" not in doc
    assert (report.parent / "notes.txt").read_text() == "mine"
    ledger = json.loads((report.parent / ".fedgraph").read_text())
    assert ledger == {"format": "fedgraph.outputs", "names": ["audit.json"]}


# ------------------------------------------------------------------- fuse
def test_fuse_results_does_not_replace_a_foreign_file(runs, tmp_path, capsys):
    thesis = _mine(tmp_path)
    argv = ["fuse", str(runs / "fede"), "--single", str(runs / "single"),
            "--epochs", "2", "--quiet", "--results"]  # fmt: skip
    assert main([*argv, str(thesis)]) == 2
    line = _error(capsys)
    assert line.startswith(f"fedgraph fuse: error: `{thesis}` {REFUSED} (")
    assert line.endswith(f"{NOT_REPLACED} `--results` or remove it yourself")
    assert thesis.read_bytes() == THESIS
    # its own results file is replaced by the next fusion
    own = tmp_path / "fusion.json"
    assert main([*argv, str(own)]) == 0
    own.write_text("{}")
    assert main([*argv, str(own)]) == 0
    assert json.loads(own.read_text())["rounds"] == 2


# ----------------------------------------------------------------- report
def test_report_out_does_not_replace_a_folders_report_md_and_curves_png(
    runs, tmp_path, capsys
):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "report.md").write_text("# my notes\n")
    (docs / "curves.png").write_bytes(b"\x89PNG my figure")
    before = _snapshot(docs)
    assert main(["report", str(runs / "fede"), "--out", str(docs)]) == 2
    captured = capsys.readouterr()
    line = captured.err.strip()
    assert "\n" not in line and captured.out == ""  # refused before the table
    assert line == (
        f"fedgraph report: error: `{docs / 'curves.png'}` {REFUSED} "
        f"({docs / '.fedgraph'} does not list it): not replaced; pick another "
        "`--out` or remove it yourself"
    )
    assert _snapshot(docs) == before


def test_report_out_replaces_its_own_report_beside_other_files(runs, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "thesis.tex").write_bytes(THESIS)
    run = str(runs / "fede")
    assert main(["report", run, "--out", str(docs)]) == 0
    first = (docs / "report.md").read_text()
    (docs / "report.md").write_text("stale\n")
    assert main(["report", run, str(runs / "single"), "--out", str(docs)]) == 0
    again = (docs / "report.md").read_text()
    assert again != "stale\n" and again.count("\n") > first.count("\n")
    assert (docs / "thesis.tex").read_bytes() == THESIS


# ------------------------------------------------------------------ train
def test_train_resume_refuses_a_foreign_progress_json(runs, tmp_path, capsys):
    folder = tmp_path / "experiment"
    folder.mkdir()
    progress = json.dumps({"step": 1200, "loss": 0.31}).encode()
    (folder / "progress.json").write_bytes(progress)
    rc = _train(runs / "toy", folder, "fede", "--resume")
    assert rc == 2
    line = _error(capsys)
    assert line == (
        f"fedgraph train: error: `{folder / 'progress.json'}` {REFUSED} "
        f"({folder / '.fedgraph'} does not list it): not replaced; pick another "
        "`--out` or remove it yourself"
    )
    assert _snapshot(folder) == {"progress.json": progress}


def test_train_resume_continues_its_own_run(runs, tmp_path):
    out = tmp_path / "run"
    assert _train(runs / "toy", out, "fede", "--rounds", "2", "--stop-after", "1") == 0
    assert not (out / "results.json").exists()
    assert _train(runs / "toy", out, "fede", "--rounds", "2", "--resume") == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["rounds"] == 2
    ledger = json.loads((out / ".fedgraph").read_text())
    assert ledger == {"format": "fedgraph.outputs", "names": ["*"]}


def _hold_lock(folder: Path) -> subprocess.Popen:
    r"""A live process holding ``folder``'s lock."""
    folder.mkdir(exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder / ".fedgraph.lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline() == "held\n"
    return proc


def test_second_train_on_same_out_is_refused(runs, tmp_path, capsys):
    out = tmp_path / "run"
    argv = ("fede", "--rounds", "2")
    assert _train(runs / "toy", out, *argv, "--stop-after", "1") == 0
    before = _snapshot(out)
    holder = _hold_lock(out)  # the first process, still training
    try:
        assert _train(runs / "toy", out, *argv, "--resume") == 2
        line = _error(capsys)
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
    assert line == (
        f"fedgraph train: error: `{out}` is being written by another fedgraph "
        f"process (pid {holder.pid}): wait for it to end, or pick another `--out`"
    )
    changed = {k for k in before if _snapshot(out).get(k) != before[k]}
    assert changed == {".fedgraph.lock"}  # the holder's pid, nothing else
    # the holder has ended: its lock file blocks nothing
    assert _train(runs / "toy", out, *argv, "--resume") == 0
    assert json.loads((out / "results.json").read_text())["rounds"] == 2


def test_second_train_on_a_new_out_is_refused_while_the_first_holds_it(
    runs, tmp_path, capsys
):
    out = tmp_path / "run"
    holder = _hold_lock(out)
    try:
        assert _train(runs / "toy", out, "fede") == 2
        line = _error(capsys)
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
    assert f"`{out}` is being written by another fedgraph process (pid " in line
    assert sorted(p.name for p in out.iterdir()) == [".fedgraph.lock"]


def test_second_train_finding_the_first_ones_results_is_refused(
    runs, tmp_path, monkeypatch, capsys
):
    r"""Two ``train`` processes started together on one ``--out``: both find
    it empty; the first finishes while the second loads its data. The
    second must not overwrite the first's ``results.json``."""
    import fedgraph.cli.train as train_cli

    out = tmp_path / "run"
    first = tmp_path / "first"
    assert _train(runs / "toy", first, "fede") == 0
    load = train_cli._load_federation

    def first_one_finishes(*args, **kwargs):
        out.mkdir()
        for path in first.glob("*.json"):  # its results, progress (and ledger)
            (out / path.name).write_bytes(path.read_bytes())
        if (first / ".fedgraph").exists():
            (out / ".fedgraph").write_bytes((first / ".fedgraph").read_bytes())
        return load(*args, **kwargs)

    monkeypatch.setattr(train_cli, "_load_federation", first_one_finishes)
    assert _train(runs / "toy", out, "fede", "--seed", "1") == 2
    line = _error(capsys)
    assert line == (
        f"fedgraph train: error: `--out` {out} is not empty (it holds "
        "progress.json, written since this command started): pass --resume to "
        "continue it"
    )
    assert (out / "results.json").read_bytes() == (first / "results.json").read_bytes()


def test_a_lock_file_left_by_a_killed_train_blocks_nothing(runs, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / ".fedgraph.lock").write_text("999999\n")  # no process holds it
    assert _train(runs / "toy", out, "fede") == 0
    assert json.loads((out / "results.json").read_text())["rounds"] == 1
    # released when the command ended: another process may take it now
    fd = os.open(out / ".fedgraph.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)


# ---------------------------------------------------------------- unlearn
def test_unlearn_results_does_not_replace_a_foreign_file(runs, tmp_path, capsys):
    thesis = _mine(tmp_path)
    argv = ["unlearn", str(runs / "fedlu"), "--forget", str(runs / "toy"),
            "--epochs", "1", "--decay-epochs", "1", "--no-retrain", "--quiet",
            "--results"]  # fmt: skip
    assert main([*argv, str(thesis)]) == 2
    line = _error(capsys)
    assert line.startswith(f"fedgraph unlearn: error: `{thesis}` {REFUSED} (")
    assert thesis.read_bytes() == THESIS
    own = tmp_path / "unlearn.json"
    assert main([*argv, str(own)]) == 0
    own.write_text("{}")
    assert main([*argv, str(own)]) == 0  # its own file: replaced
    assert "unlearned" in json.loads(own.read_text())


# ------------------------------------------------------------- partition
def test_partition_overwrite_applies_the_writers_rule(tmp_path, capsys):
    from fedgraph.guard import NotFedgraphsError
    from fedgraph.partition.io import check_replaceable

    data = tmp_path / "kg"
    data.mkdir()
    lines = [f"e{i}\tr{i % 4}\te{(i * 7 + 1) % 20}" for i in range(80)]
    for split, part in (("train", lines[:60]), ("valid", lines[60:70]),
                        ("test", lines[70:])):  # fmt: skip
        (data / f"{split}.txt").write_text("\n".join(part) + "\n")
    out = tmp_path / "part"
    argv = ["partition", str(data), "--strategy", "relation", "--clients", "2",
            "--out", str(out), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    assert main([*argv, "--overwrite"]) == 0  # its own partition: replaced
    (out / ".fedgraph.lock").write_text("")  # the guard's files are no one's data
    check_replaceable(out)
    (out / "client0" / "notes.txt").write_text("mine")
    with pytest.raises(NotFedgraphsError, match="it also holds client0/notes.txt"):
        check_replaceable(out)
    assert main([*argv, "--overwrite"]) == 2
    assert "is not a partition written by fedgraph" in _error(capsys)
    assert (out / "client0" / "notes.txt").read_text() == "mine"


# ------------------------------------------------------- the guard itself
def test_guard_claims_listed_names_and_refuses_others(tmp_path):
    from fedgraph import guard

    folder = tmp_path / "out"
    with guard.command():
        guard.claim(folder, ("report.md", "curves.*"))
        (folder / "report.md").write_text("fedgraph's")
        (folder / "curves.png").write_text("fedgraph's")
        (folder / "notes.md").write_text("mine")
        guard.claim(folder, ("report.md", "curves.*"))  # its own: accepted
        guard.check_file(folder / "curves.pdf")
        with pytest.raises(guard.NotFedgraphsError, match=r"notes\.md` was not"):
            guard.claim(folder, ("*.md",))
    assert guard.unlisted(["a.txt", "b[1].txt", ".fedgraph"], ["b[[]1].txt"]) == [
        "a.txt"
    ]
    assert guard.contents(folder) == ["curves.png", "notes.md", "report.md"]


@pytest.mark.parametrize(
    "name, text, why",
    [
        (".fedgraph", '{"names": ["*"]}', "not a fedgraph ledger"),
        (".fedgraph", "my dotfile", "not a fedgraph ledger"),
        (".fedgraph.lock", "my lock notes", "not a fedgraph lock file"),
    ],
)
def test_guard_refuses_someone_elses_guard_files(tmp_path, name, text, why):
    from fedgraph import guard

    (tmp_path / name).write_text(text)
    with guard.command(), pytest.raises(guard.NotFedgraphsError, match=why):
        guard.claim(tmp_path, ("x.json",))
    assert (tmp_path / name).read_text() == text


def test_guard_lock_is_held_once_per_command_and_released_on_error(tmp_path):
    from fedgraph import guard

    folder = tmp_path / "run"
    with pytest.raises(RuntimeError, match="inside a command"):
        guard.hold(folder)
    with pytest.raises(KeyError), guard.command():
        guard.hold(folder)
        guard.claim(folder, fresh=True)  # held already: taken once
        assert (folder / ".fedgraph.lock").read_text() == f"{os.getpid()}\n"
        fd = os.open(folder / ".fedgraph.lock", os.O_RDWR)
        with pytest.raises(BlockingIOError):  # another open file: refused
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.close(fd)
        raise KeyError("a command that fails")
    fd = os.open(folder / ".fedgraph.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released by the error
    os.close(fd)
