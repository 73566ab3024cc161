r"""``fedgraph train``'s checks return what they derive instead of writing it
into the parsed arguments, and its baselines run through the pipeline's one
function (:func:`fedgraph.runtime.pipeline_kge.run_kge_baseline`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import fedgraph
from fedgraph.cli import train
from fedgraph.cli.main import build_parser, main
from fedgraph.runtime import pipeline_kge

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
from test_pipeline import write_federation  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize(
    ("extra", "protocol", "evaluate_with"),
    [
        (["--protocol", "FedE"], "fede", "global"),
        ([], "fedlu", "local"),
        (["--protocol", "fede", "--evaluate-with", "local"], "fede", "local"),
    ],
)
def test_checking_the_arguments_leaves_them_as_parsed(
    tmp_path, extra, protocol, evaluate_with
):
    argv = ["train", "d", "--algorithm", "FedE", "--out", str(tmp_path / "o")]
    args = build_parser().parse_args(argv + extra)
    before = dict(vars(args))
    checked = train._check_args(args, "kge")
    assert vars(args) == before
    assert (checked.algorithm, checked.protocol, checked.evaluate_with) == (
        "fede",
        protocol,
        evaluate_with,
    )
    assert checked.privacy.active is False


class Reached(Exception):
    pass


def test_train_and_pipeline_baselines_run_through_one_function(tmp_path, monkeypatch):
    fed = write_federation(tmp_path / "fed")
    calls = []

    def record(fed, setting, s, loop, **kw):
        calls.append((setting, s, loop.num_rounds, loop.eval_every, kw))
        raise Reached

    monkeypatch.setattr(pipeline_kge, "run_kge_baseline", record)
    argv = ["train", str(fed), "--algorithm", "centralized", "--out",
            str(tmp_path / "run"), "--rounds", "2", "--eval-every", "1", "--dim",
            "8", "--batch-size", "32", "--num-negatives", "4", "--lr", "0.01",
            "--protocol", "fede", "--corrupt", "tail", "--quiet"]  # fmt: skip
    with pytest.raises(Reached):
        main(argv)
    training = {"dim": 8, "batch_size": 32, "num_negatives": 4, "lr": 0.01}
    with pytest.raises(Reached):
        fedgraph.pipeline(
            fed,
            model="transe",
            algorithm="centralized",
            training=training,
            loop={"num_rounds": 2, "eval_every": 1},
            evaluation="fede",
            corrupt="tail",
        )
    (cli, cli_s, *cli_loop, cli_kw), (api, api_s, *api_loop, api_kw) = calls
    assert cli == api == "centralized" and cli_loop == api_loop == [2, 1]
    same = ("model", "dim", "gamma", "lr", "batch_size", "num_negatives", "seed")
    assert [getattr(cli_s, k) for k in same] == [getattr(api_s, k) for k in same]
    assert cli_kw["protocol"] == api_kw["protocol"] == "fede"
    assert cli_kw["corrupt"] == api_kw["corrupt"] == "tail"
    assert cli_kw["log"] is True and cli_kw["out"] == tmp_path / "run"
    assert cli_kw["record"]["algorithm"] == "centralized"
