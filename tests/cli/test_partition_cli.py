import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "partition"))
from partition_kgs import random_kg  # noqa: E402

import fedgraph.data  # noqa: E402
from fedgraph.cli.main import main  # noqa: E402


@pytest.fixture
def fake_dataset(monkeypatch):
    calls = []

    def load_dataset(name, root=None, **kwargs):
        calls.append(name)
        return random_kg(num_relations=8)

    monkeypatch.setattr(fedgraph.data, "load_dataset", load_dataset)
    return calls


def test_partition_then_stats_json(fake_dataset, tmp_path, capsys):
    out = tmp_path / "fed3"
    rc = main(
        [
            "partition",
            "toy",
            "--strategy",
            "relation",
            "--clients",
            "3",
            "--seed",
            "2",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert rc == 0 and fake_dataset == ["toy"]
    assert (out / "META.json").is_file()
    capsys.readouterr()
    assert main(["stats", str(out), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert len(stats["clients"]) == 3
    for c in stats["clients"]:
        assert {"entities", "relations", "triples", "shared_entities"} <= set(c)
        assert set(c["triples"]) == {"train", "valid", "test"}
    assert sum(c["relations"] for c in stats["clients"]) == 8
    meta = json.loads((out / "META.json").read_text())
    assert meta["partitioner"] == "RandomRelationPartitioner" and meta["seed"] == 2


def test_spectral_table_output(fake_dataset, tmp_path, capsys):
    out = tmp_path / "c2"
    assert (
        main(
            [
                "partition",
                "toy",
                "--strategy",
                "spectral",
                "--clients",
                "2",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "SpectralRelationPartitioner(num_clients=2" in text
    assert "shared_entities" in text
    assert main(["stats", str(out)]) == 0
    assert "clustering" in capsys.readouterr().out


def test_user_errors_are_one_line(fake_dataset, tmp_path, capsys):
    assert (
        main(
            [
                "partition",
                "toy",
                "--strategy",
                "nope",
                "--clients",
                "2",
                "--out",
                str(tmp_path / "x"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "Could not resolve 'nope'" in err and "Traceback" not in err
    (tmp_path / "y").mkdir()
    assert (
        main(
            [
                "partition",
                "toy",
                "--strategy",
                "relation",
                "--clients",
                "2",
                "--out",
                str(tmp_path / "y"),
            ]
        )
        == 2
    )
    assert "--overwrite" in capsys.readouterr().err
    assert main(["stats", str(tmp_path / "y")]) == 2
    assert "META.json is missing" in capsys.readouterr().err


def test_stats_reads_a_published_client_folder_layout(tmp_path, capsys):
    clients = [
        {"train": "a\tr\tb\nb\tr\tc\n", "valid": "a\tr\tc\n", "test": "b\tr\ta\n"},
        {"train": "c\ts\td\n", "valid": "d\ts\tc\n", "test": "d\ts\tc\n"},
    ]
    for c, files in enumerate(clients):
        folder = tmp_path / "pub" / f"client{c}"
        folder.mkdir(parents=True)
        for split, text in files.items():
            (folder / f"{split}.txt").write_text(text)
    assert main(["stats", str(tmp_path / "pub"), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert [c["entities"] for c in stats["clients"]] == [3, 2]
    assert [c["shared_entities"] for c in stats["clients"]] == [1, 1]
    assert stats["overall"]["overlap"] == [[3, 1], [1, 2]]


def _partition(out, *extra):
    return main(["partition", "toy", "--out", str(out), "--quiet", *extra])


def test_dirichlet_makes_more_clients_than_relations(fake_dataset, tmp_path, capsys):
    out = tmp_path / "d12"
    args = [
        "--strategy",
        "dirichlet",
        "--clients",
        "12",
        "--partition-kwargs",
        "alpha=2",
    ]
    assert _partition(out, *args) == 0
    meta = json.loads((out / "META.json").read_text())
    assert meta["partitioner"] == "DirichletRelationPartitioner"
    assert meta["params"]["alpha"] == 2.0 and meta["num_clients"] == 12 > 8


def test_dirichlet_user_errors_write_nothing(fake_dataset, tmp_path, capsys):
    out = tmp_path / "bad"
    # alpha belongs to the Dirichlet partitioner only
    relation = ["--strategy", "relation", "--clients", "2"]
    assert _partition(out, *relation, "--partition-kwargs", "alpha=1") == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "fedgraph partition: error: `--partition-kwargs` key 'alpha' is not an "
        "argument of RandomRelationPartitioner (its arguments: ratios, splits)"
    )
    dirichlet = ["--strategy", "dirichlet", "--clients", "2"]
    assert _partition(out, *dirichlet, "--partition-kwargs", "alpha=0") == 2
    assert "`alpha` must be a positive number (got 0.0)" in capsys.readouterr().err
    assert _partition(out, *dirichlet, "--partition-kwargs", "alpha=NaN") == 2
    assert (
        "`--partition-kwargs` key 'alpha' must be a finite number (got nan)"
        in capsys.readouterr().err
    )
    assert _partition(out, *dirichlet, "--partition-kwargs", "seed=3") == 2
    assert (
        "`--partition-kwargs` key 'seed' is set by the partition's `seed` (--seed)"
        in capsys.readouterr().err
    )
    assert _partition(out, *dirichlet, "--partition-kwargs", "alpha") == 2
    assert "`--partition-kwargs` expects KEY=VALUE (got 'alpha')" in (
        capsys.readouterr().err
    )
    # more clients than triples / min_triples: refused before anything is written
    assert _partition(out, "--strategy", "dirichlet", "--clients", "400") == 2
    err = capsys.readouterr().err
    assert "`--clients`=400" in err and len(err.strip().splitlines()) == 1
    assert not out.exists() and list(tmp_path.iterdir()) == []
