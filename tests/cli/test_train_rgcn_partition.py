r"""``fedgraph train --model rgcn`` on a named RDF graph takes its partitioner
from the registry: ``--strategy`` (default rdf-type) and ``--partition-kwargs``,
checked before any data is read; the default run records what it did before."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from fedgraph.cli.main import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "federated"))
from test_fedalign import toy_graph  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")

FAST = ["--rounds", "1", "--local-epochs", "1", "--num-bases", "2", "--dim", "4",
        "--clients", "2", "--quiet"]  # fmt: skip


@pytest.fixture
def toy_aifb(monkeypatch):
    r"""``aifb`` read as the toy RDF graph (nothing is loaded from disk)."""
    monkeypatch.setattr(
        "fedgraph.data.rdf_entities.load_rdf", lambda name, root=None: toy_graph()
    )


def _argv(out, *extra):
    return ["train", "aifb", "--model", "rgcn", "--algorithm", "fedalign",
            "--out", str(out), *FAST, *extra]  # fmt: skip


def _results(out: Path) -> dict:
    return json.loads((out / "results.json").read_text())


def test_partition_kwargs_num_types_is_num_types(toy_aifb, tmp_path):
    assert main(_argv(tmp_path / "a", "--num-types", "2")) == 0
    assert main(_argv(tmp_path / "b", "--partition-kwargs", "num_types=2")) == 0
    a, b = _results(tmp_path / "a"), _results(tmp_path / "b")
    assert a["weighted"] == b["weighted"]
    for doc in (a, b):  # the default partitioner is recorded as before
        assert doc["settings"]["num_clients"] == 2
        assert doc["settings"]["num_types"] == 2
        assert "partitioner" not in doc["settings"]
    assert main(_argv(tmp_path / "c", "--num-types", "1")) == 0
    assert _results(tmp_path / "c")["settings"]["num_types"] == 1


def test_resume_refuses_other_partition_kwargs(toy_aifb, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(_argv(out, "--num-types", "2")) == 0
    capsys.readouterr()
    argv = _argv(out, "--partition-kwargs", "num_types=1", "--resume")
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "num_types" in err, err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--strategy", "nope"], "`--strategy nope`: Could not resolve 'nope'"),
        (
            ["--partition-kwargs", "alpha=1"],
            "`--strategy rdf-type`: `--partition-kwargs` key 'alpha' is not an "
            "argument of RDFTypePartitioner (its arguments: num_types, types)",
        ),
        (
            ["--num-types", "3", "--partition-kwargs", "num_types=2"],
            "`--num-types 3` and `--partition-kwargs num_types=2` both set "
            "num_types: give one",
        ),
        (
            ["--strategy", "relation", "--num-types", "3"],
            "`--num-types 3` is an argument of rdf-type, not of relation (leave "
            "it out)",
        ),
    ],
)
def test_bad_partitioner_is_one_line_before_any_data(tmp_path, capsys, extra, message):
    out = tmp_path / "run"
    argv = _argv(out, *extra, "--root", str(tmp_path / "no-data"))
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
    assert not out.exists()


def test_a_kg_partitioner_is_refused_for_an_rdf_graph(toy_aifb, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(_argv(out, "--strategy", "relation")) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "`--strategy relation`: `graph`" in err and "RDFGraph" in err, err
    assert not out.exists()


def test_a_saved_partition_refuses_a_partitioner(tmp_path, capsys):
    from fedgraph.partition.rdf_type import RDFTypePartitioner

    part = tmp_path / "toy-rdf"
    RDFTypePartitioner(2, num_types=2, seed=0)(toy_graph()).save(part)
    argv = ["train", str(part), "--model", "rgcn", "--algorithm", "fedalign",
            "--out", str(tmp_path / "run"), "--strategy", "relation"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "`--strategy relation`: DATASET" in err and "saved partition" in err, err


def test_kge_refuses_the_rgcn_partitioner_options(tmp_path, capsys):
    argv = ["train", str(tmp_path), "--algorithm", "fede", "--out",
            str(tmp_path / "run"), "--strategy", "relation"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "`--strategy relation` applies to --model rgcn only" in err, err
