r"""``fedgraph predict RUN``: the answers of a saved pipeline result and of a
``fedgraph train`` run, and one-line errors (exit 2) naming the option."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import fedgraph
from fedgraph.cli.main import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
from test_pipeline import FAST, LOOP, TRAINING, write_federation  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    root = tmp_path_factory.mktemp("predict-cli")
    fed = write_federation(root / "fed")
    res = fedgraph.pipeline(fed, training=TRAINING, loop=LOOP)
    return res, res.save(root / "saved")


def _table(answers) -> list[str]:
    return [f"{i:>3}  {a.score:>10.4f}  {a.name}" for i, a in enumerate(answers, 1)]


def test_predict_prints_the_results_answers(saved, capsys):
    res, path = saved
    head, rel = res.trained[1].entity_names[2], res.trained[1].relation_names[1]
    argv = ["predict", str(path), "--head", head, "--relation", rel, "--client", "1"]
    assert main(argv + ["--k", "4"]) == 0
    asked = res.predict(head=head, relation=rel, client=1, k=4)
    assert capsys.readouterr().out.splitlines() == _table(asked)
    assert main(argv + ["--unfiltered", "--json"]) == 0
    every = res.predict(head=head, relation=rel, client=1, filtered=False)
    assert json.loads(capsys.readouterr().out) == [a._asdict() for a in every]
    assert main(["predict", str(path), "--tail", head, "--relation", rel,
                 "--client", "1", "--k", "3"]) == 0  # fmt: skip
    heads = res.predict(tail=head, relation=rel, client=1, k=3)
    assert capsys.readouterr().out.splitlines() == _table(heads)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--head", "e1x", "--relation", "r0_1", "--client", "0"],
         "fedgraph predict: error: `--head` 'e1x' is not a name of this model (12 "
         "known); did you mean 'e1', 'e11', 'e10'?"),
        (["--head", "e1", "--relation", "r0_7", "--client", "0"],
         "fedgraph predict: error: `--relation` 'r0_7' is not a name of this model (3 "
         "known); did you mean 'r0_2', 'r0_1', 'r0_0'?"),
        (["--head", "e1", "--relation", "r0_1"],
         "fedgraph predict: error: `--client` is needed: this fede run has one "
         "model per client [0, 1]"),
        (["--head", "e1", "--relation", "r0_1", "--client", "4"],
         "fedgraph predict: error: `--client` must be one of [0, 1] (got 4)"),
        (["--head", "e1", "--client", "0"],
         "fedgraph predict: error: a KGE query is `--head` + `--relation` or "
         "`--relation` + `--tail` (got relation=None, entity=None)"),
    ],
)  # fmt: skip
def test_predict_errors_are_one_line_naming_the_option(saved, capsys, extra, message):
    assert main(["predict", str(saved[1]), *extra]) == 2
    captured = capsys.readouterr()
    assert captured.err == message + "\n" and captured.out == ""


def test_predict_refuses_a_folder_that_is_no_run(tmp_path, capsys):
    assert main(["predict", str(tmp_path), "--head", "a", "--relation", "r"]) == 2
    assert capsys.readouterr().err == (
        f"fedgraph predict: error: `RUN` {tmp_path} holds neither models.pt "
        "(PipelineResult.save) nor progress.json (`fedgraph train`)\n"
    )
    for argv, message in (
        (
            ["--relation", "r"],
            "one of the arguments --head --tail --entity is required",
        ),
        (
            ["--head", "a", "--k", "0"],
            "argument --k: must be a positive integer (got 0)",
        ),
    ):
        with pytest.raises(SystemExit) as exit:
            main(["predict", str(tmp_path), *argv])
        assert exit.value.code == 2 and message in capsys.readouterr().err


def test_predict_reads_a_fedgraph_train_run(saved, tmp_path, capsys):
    res, _ = saved
    fed = tmp_path / "fed"
    write_federation(fed)
    out = tmp_path / "run"
    assert (
        main(["train", str(fed), "--algorithm", "fede", "--out", str(out), *FAST]) == 0
    )
    capsys.readouterr()
    head, rel = res.trained[0].entity_names[0], res.trained[0].relation_names[0]
    argv = ["predict", str(out), "--head", head, "--relation", rel, "--client", "0"]
    assert main(argv) == 0
    # the train run's best round is the pipeline's: the same answers
    asked = res.predict(head=head, relation=rel, client=0)
    assert capsys.readouterr().out.splitlines() == _table(asked)


def test_predict_refuses_a_baseline_train_run(tmp_path, capsys):
    fed = tmp_path / "fed"
    write_federation(fed)
    out = tmp_path / "run"
    assert main(["train", str(fed), "--algorithm", "independent", "--out", str(out),
                 *FAST]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["predict", str(out), "--head", "e1", "--relation", "r0_1"]) == 2
    assert capsys.readouterr().err == (
        f"fedgraph predict: error: `{out}` is a independent run of `fedgraph "
        "train`: its models are read back for the federated KGE algorithms only; "
        "run it with `fedgraph.pipeline` and `PipelineResult.save` to query it\n"
    )
