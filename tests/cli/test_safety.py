r"""Bad input and damaged files meet a one-line error (exit 2) or a warning,
and leave every existing file as it was."""

import json
import shutil
from pathlib import Path

import pytest
from test_train import _write_federation

from fedgraph.cli.main import main


def _snapshot(folder):
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _one_line(err):
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err
    return lines[-1]


TRAIN = ["--algorithm", "fede", "--rounds", "3", "--local-epochs", "1", "--dim", "8",
         "--batch-size", "32", "--num-negatives", "4", "--eval-every", "1",
         "--lr", "0.01", "--quiet"]  # fmt: skip


@pytest.fixture
def stopped_run(tmp_path):
    r"""A FedE run stopped after round 1 (resumable), and its argv."""
    data = tmp_path / "fed"
    _write_federation(data)
    out = tmp_path / "run"
    argv = ["train", str(data), *TRAIN, "--out", str(out)]
    assert main(argv + ["--stop-after", "1"]) == 0
    return argv, out


@pytest.mark.parametrize(
    "change, keys",
    [
        (["--algorithm", "fedprox"], "algorithm 'fede' -> 'fedprox'"),
        (["--lr", "0.02"], "lr 0.01 -> 0.02"),
        (["--seed", "1"], "seed 0 -> 1"),
        (["--dim", "16"], "dim 8 -> 16"),
        (["--num-negatives", "8", "--model", "distmult"], "model 'transe' -> 'distmult', num_negatives 4 -> 8"),
    ],
)  # fmt: skip
def test_resume_refuses_settings_that_change_the_result(
    stopped_run, capsys, change, keys
):
    argv, out = stopped_run
    before = _snapshot(out)
    capsys.readouterr()
    assert main(argv + change + ["--resume"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "`--resume`" in line and keys in line
    assert _snapshot(out) == before


def test_resume_refuses_another_dataset(stopped_run, tmp_path, capsys):
    argv, out = stopped_run
    other = tmp_path / "other"
    _write_federation(other, n_clients=3, seed=1)
    before = _snapshot(out)
    swapped = [str(other) if a == argv[1] else a for a in argv]
    assert main(swapped + ["--resume"]) == 2
    assert "data " in _one_line(capsys.readouterr().err)
    assert _snapshot(out) == before


def test_resume_accepts_threads_device_quiet_and_rounds(stopped_run):
    argv, out = stopped_run
    argv = [a for a in argv if a != "--quiet"]
    i = argv.index("--rounds")
    argv[i + 1] = "4"
    assert main(argv + ["--threads", "1", "--device", "cpu", "--resume"]) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["rounds"] == 4


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda p: p.write_bytes(b""), "is empty"),
        (lambda p: p.write_bytes(p.read_bytes()[:200]), "truncated or corrupt"),
        (lambda p: p.write_bytes(b"not a checkpoint at all\n" * 10), "checkpoint"),
    ],
    ids=["empty", "truncated", "garbage"],
)
def test_resume_with_a_damaged_checkpoint_names_it(
    stopped_run, capsys, damage, message
):
    argv, out = stopped_run
    last = out / "checkpoints" / "last.pt"
    damage(last)
    before = _snapshot(out)
    capsys.readouterr()
    assert main(argv + ["--resume"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert str(last) in line and message in line
    assert "delete" in line  # what to do
    assert _snapshot(out) == before


def test_checkpoint_with_python_objects_is_refused(stopped_run, capsys):
    import torch

    argv, out = stopped_run
    last = out / "checkpoints" / "last.pt"
    torch.save({"round": 1, "payload": _Evil()}, last)
    assert main(argv + ["--resume"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert str(last) in line and "Python objects" in line


class _Evil:
    pass


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("--batch-size", "0", "argument --batch-size: must be a positive integer (got 0)"),
        ("--rounds", "-1", "argument --rounds: must be a positive integer (got -1)"),
        ("--dim", "x", "argument --dim: must be an integer (got 'x')"),
        ("--fraction", "0", "argument --fraction: must lie in (0, 1]"),
        ("--lr", "0", "argument --lr: must be > 0"),
        ("--model", "transx", "argument --model: invalid choice: 'transx'"),
    ],
)  # fmt: skip
def test_train_rejects_bad_numbers_naming_the_option(
    tmp_path, capsys, option, value, message
):
    out = tmp_path / "o"
    with pytest.raises(SystemExit) as exc:
        main(["train", str(tmp_path), *TRAIN, option, value, "--out", str(out)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err
    assert not out.exists()


def test_partition_clients_zero_names_the_option(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["partition", "umls", "--strategy", "relation", "--clients", "0",
              "--out", str(tmp_path / "p")])  # fmt: skip
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "argument --clients: must be a positive integer (got 0)" in err
    assert "num_clients" not in err


def test_train_takes_the_dataset_as_partition_and_info_do(tmp_path, capsys):
    data = tmp_path / "fed"
    _write_federation(data)
    args = [*TRAIN, "--rounds", "1", "--stop-after", "1"]
    assert main(["train", str(data), *args, "--out", str(tmp_path / "a")]) == 0
    assert main(["train", *args, "--out", str(tmp_path / "c")]) == 2  # none given
    assert "give the dataset" in capsys.readouterr().err
    a = json.loads((tmp_path / "a" / "progress.json").read_text())["history"]
    assert [h["round"] for h in a] == [1]


def test_train_on_a_single_kg_says_how_to_federate_it(tmp_path, capsys):
    kg = tmp_path / "kg"
    kg.mkdir()
    for split in ("train", "valid", "test"):
        (kg / f"{split}.txt").write_text("a\tr\tb\nb\tr\tc\n")
    out = tmp_path / "o"
    assert main(["train", str(kg), *TRAIN, "--out", str(out)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "not a federated dataset" in line
    assert f"fedgraph partition {kg} --strategy relation --clients" in line
    assert not out.exists()


def test_unseen_evaluation_triples_warn_and_can_be_dropped(tmp_path, capsys):
    data = tmp_path / "fed"
    for c in range(2):
        d = data / f"client{c}"
        d.mkdir(parents=True)
        (d / "train.txt").write_text("a\tr\tb\nb\tr\tc\nc\tq\ta\n")
        (d / "valid.txt").write_text("a\tr\tc\na\tr\tz\n")  # z: never trained on
        (d / "test.txt").write_text("b\tq\tc\nb\tnew\tc\n")  # relation `new` unseen
    args = [*TRAIN, "--rounds", "1", "--batch-size", "2", "--num-negatives", "2"]
    assert main(["train", str(data), *args, "--out", str(tmp_path / "keep")]) == 0
    err = capsys.readouterr().err
    assert "fedgraph: warning: 4 evaluation triples hold an entity or relation" in err
    assert "client 0: 1 test, 1 valid" in err and "`--unseen drop`" in err
    keep = json.loads((tmp_path / "keep" / "results.json").read_text())
    drop_dir = tmp_path / "drop"
    assert (
        main(["train", str(data), *args, "--unseen", "drop", "--out", str(drop_dir)])
        == 0
    )
    assert "dropped 4 evaluation triples" in capsys.readouterr().err
    drop = json.loads((drop_dir / "results.json").read_text())
    assert [c["n_test"] for c in keep["clients"]] == [2, 2]
    assert [c["n_test"] for c in drop["clients"]] == [1, 1]


def test_overwrite_replaces_only_a_partition_fedgraph_wrote(tmp_path, capsys):
    data = tmp_path / "kg"
    data.mkdir()
    lines = [f"e{i}\tr{i % 4}\te{(i * 7 + 1) % 20}" for i in range(80)]
    for split, part in (
        ("train", lines[:60]),
        ("valid", lines[60:70]),
        ("test", lines[70:]),
    ):
        (data / f"{split}.txt").write_text("\n".join(part) + "\n")
    out = tmp_path / "part"
    argv = ["partition", str(data), "--strategy", "relation", "--clients", "2",
            "--out", str(out), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    assert main(argv + ["--overwrite"]) == 0  # its own partition: replaced
    (out / "notes.txt").write_text("mine")
    before = _snapshot(out)
    assert main(argv + ["--overwrite"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "not a partition written by fedgraph" in line and "notes.txt" in line
    assert _snapshot(out) == before
    # a folder of someone's files, or a training run, is never replaced
    for folder in (tmp_path / "photos", tmp_path / "run"):
        folder.mkdir()
        (folder / "a.jpg").write_bytes(b"\xff\xd8")
        before = _snapshot(folder)
        argv[-2] = str(folder)
        assert main(argv + ["--overwrite"]) == 2
        assert _snapshot(folder) == before


def test_partition_with_more_clients_than_relations_writes_nothing(tmp_path, capsys):
    data = tmp_path / "kg"
    data.mkdir()
    for split in ("train", "valid", "test"):
        (data / f"{split}.txt").write_text("a\tr\tb\nb\tq\tc\n")
    out = tmp_path / "p"
    assert main(["partition", str(data), "--strategy", "relation", "--clients",
                 "5", "--out", str(out), "--quiet"]) == 2  # fmt: skip
    line = _one_line(capsys.readouterr().err)
    assert "`--clients`=5" in line and "at most 2 clients" in line
    assert not out.exists()


@pytest.mark.dataset
def test_partition_aifb_with_1000_clients_fails_before_writing(tmp_path, capsys):
    out = tmp_path / "p"
    argv = ["partition", "aifb", "--strategy", "rdf-type", "--clients", "1000",
            "--out", str(out), "--quiet"]  # fmt: skip
    assert main(argv) == 2
    line = _one_line(capsys.readouterr().err)
    assert "`--clients`=1000" in line and "labelled training node" in line
    assert "at most 140 clients" in line
    assert not out.exists()


@pytest.mark.parametrize("deleted", ["client0", "client2"])
def test_a_client_layout_names_its_missing_client(tmp_path, capsys, deleted):
    data = tmp_path / "R3"  # FedLU's naming: three clients
    _write_federation(data, n_clients=3)
    shutil.rmtree(data / deleted)
    before = _snapshot(data)
    assert main(["stats", str(data)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert f"missing {deleted}/" in line and "META.json" not in line
    assert main(["train", str(data), *TRAIN, "--out", str(tmp_path / "o")]) == 2
    assert f"missing {deleted}/" in _one_line(capsys.readouterr().err)
    assert _snapshot(data) == before and not (tmp_path / "o").exists()


def test_a_mistyped_data_root_leaves_no_folders(tmp_path, monkeypatch, capsys):
    import urllib.request

    def offline(*args, **kwargs):
        raise OSError("network unreachable")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    root = tmp_path / "typo" / "datasets"
    monkeypatch.setenv("FEDGRAPH_DATA", str(root))
    monkeypatch.setenv("FEDGRAPH_CACHE", str(tmp_path / "cache"))
    assert main(["info", "umls"]) == 2
    assert "network unreachable" in _one_line(capsys.readouterr().err)
    assert not (tmp_path / "typo").exists()


def test_resume_refuses_a_federation_that_lost_a_client(stopped_run, capsys):
    argv, out = stopped_run
    data = Path(argv[1])
    _write_federation(data.parent / "three", n_clients=3)
    shutil.rmtree(data)
    shutil.copytree(data.parent / "three", data)  # same folder, 3 clients now
    before = _snapshot(out)
    assert main(argv + ["--resume"]) == 2
    assert "num_clients 2 -> 3" in _one_line(capsys.readouterr().err)
    assert _snapshot(out) == before


def test_resume_into_a_folder_that_is_not_a_run_is_refused(tmp_path, capsys):
    data = tmp_path / "fed"
    _write_federation(data)
    mine = tmp_path / "photos"
    mine.mkdir()
    (mine / "a.jpg").write_bytes(b"\xff\xd8")
    assert main(["train", str(data), *TRAIN, "--out", str(mine), "--resume"]) == 2
    assert "not a `fedgraph train` run" in _one_line(capsys.readouterr().err)
    assert _snapshot(mine) == {"a.jpg": b"\xff\xd8"}


def test_a_diverging_run_stops_with_exit_1_naming_round_and_client(tmp_path, capsys):
    data = tmp_path / "fed"
    _write_federation(data)
    out = tmp_path / "run"
    argv = ["train", str(data), *TRAIN, "--lr", "1e38", "--out", str(out)]
    assert main(argv) == 1
    line = _one_line(capsys.readouterr().err)
    assert "training diverged in round 1 on client 0: `loss_sum` is nan" in line
    assert not (out / "results.json").exists()
