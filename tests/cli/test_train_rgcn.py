r"""``fedgraph train --model rgcn`` on a toy RDF partition: the options the
R-GCN family does not read are refused, and ``--resume`` refuses other
result-changing settings, each before anything in ``--out`` is written."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from fedgraph.cli.main import main

pytestmark = pytest.mark.usefixtures("one_thread")

FAST = ["--rounds", "2", "--local-epochs", "1", "--num-bases", "4", "--dim", "4",
        "--quiet"]  # fmt: skip


@pytest.fixture(scope="module")
def partition(tmp_path_factory):
    from fedgraph.partition.rdf_type import RDFTypePartitioner

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "federated"))
    from test_fedalign import toy_graph

    path = tmp_path_factory.mktemp("rgcn-cli") / "toy-rdf-3"
    RDFTypePartitioner(3, num_types=2, seed=0)(toy_graph()).save(path)
    return path


def _argv(partition, out, *extra, algorithm="fedalign"):
    return ["train", str(partition), "--model", "rgcn", "--algorithm", algorithm,
            "--out", str(out), *FAST, *extra]  # fmt: skip


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


PRIVACY = "the privacy options apply to the federated KGE algorithms; --model rgcn "


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--dp-epsilon", "1"], f"`--dp-epsilon 1.0`: {PRIVACY}does not read them"),
        (["--dp-delta", "1e-6"], f"`--dp-delta 1e-06`: {PRIVACY}"),
        (["--dp-clip", "2"], f"`--dp-clip 2.0`: {PRIVACY}"),
        (["--secagg"], f"`--secagg`: {PRIVACY}"),
        (["--secagg-neighbours", "2"], f"`--secagg-neighbours 2`: {PRIVACY}"),
        (["--private-alignment"], f"`--private-alignment`: {PRIVACY}"),
        (["--record-uploads", "all"], f"`--record-uploads all`: {PRIVACY}"),
        (["--loss", "nssa"], "`--loss nssa` applies to the KGE models only; "
         "--model rgcn does not read it (leave it out)"),
        (["--num-negatives", "8"], "`--num-negatives 8` applies to the KGE models"),
        (["--protocol", "fede"], "`--protocol fede` applies to the KGE models"),
        (["--selection", "per-client"], "`--selection per-client` applies to the KGE"),
        (["--proximal-mu", "1"], "`--proximal-mu 1.0` applies to the KGE models"),
        (["--corrupt", "tail"], "`--corrupt tail` applies to the KGE models"),
        (["--no-subsampling"], "`--no-subsampling` applies to the KGE models"),
        (["--sample-on", "device"], "`--sample-on device` applies to the KGE "
         "models only; --model rgcn does not read it"),
        (["--batch-size", "8"], "`--batch-size 8` applies to the KGE models and "
         "--model text only; --model rgcn does not read it"),
        (["--eval-every", "1"], "`--eval-every 1` applies to the KGE models and "
         "--model text only"),
        (["--fraction", "0.5"], "`--fraction 0.5` applies to the KGE models and"),
        (["--patience", "0"], "`--patience 0` applies to the KGE models and"),
        (["--gamma", "1"], "`--gamma 1.0` applies to the KGE models and"),
        (["--languages", "en", "fr"], "`--languages en fr` applies to --model text "
         "only; --model rgcn does not read it"),
        (["--encoder", "bert"], "`--encoder bert` applies to --model text only"),
        (["--clients", "4"], "`--clients 4`: DATASET"),
        (["--num-types", "3"], "`--num-types 3`: DATASET"),
        (["--device", "meta"], "`--device meta`: the R-GCN family trains on the CPU"),
    ],
)  # fmt: skip
def test_rgcn_refuses_options_it_does_not_read(
    partition, tmp_path, capsys, extra, message
):
    out = tmp_path / "o"
    assert main(_argv(partition, out, *extra)) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_rgcn_resume_refuses_other_settings_and_leaves_the_run(
    partition, tmp_path, capsys
):
    out = tmp_path / "run"
    assert main(_argv(partition, out, "--stop-after", "1")) == 0
    before = _snapshot(out)
    assert "progress.json" in before and "checkpoints/last.pt" in before
    for extra, shown in [
        (["--dim", "8"], "hidden_channels 4 -> 8"),
        (["--num-bases", "2"], "num_bases 4 -> 2"),
        (["--lr", "0.5"], "lr 0.1 -> 0.5"),
        (["--seed", "1"], "seed 0 -> 1"),
        (["--set", "mu=1"], "extra {"),
        (["--algorithm", "fedavg"], "algorithm 'fedalign' -> 'fedavg'"),
    ]:
        assert main(_argv(partition, out, *extra, "--resume")) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1, extra
        assert f"`--resume`: {out} was trained with other settings (" in err
        assert shown in err, (extra, err)
        assert _snapshot(out) == before, extra
    # the same settings (more rounds allowed) continue it to the end
    assert main(_argv(partition, out, "--resume")) == 0
    resumed = json.loads((out / "results.json").read_text())
    assert [h["round"] for h in resumed["history"]] == [1, 2]
    full = tmp_path / "full"
    assert main(_argv(partition, full)) == 0
    doc = json.loads((full / "results.json").read_text())
    assert resumed["weighted"] == doc["weighted"]
    # resuming the finished run reports it and leaves every file as it is
    finished = _snapshot(out)
    assert main(_argv(partition, out, "--resume")) == 0
    assert "already finished at round 2" in capsys.readouterr().out
    assert _snapshot(out) == finished
