r"""``fedgraph.pipeline(..., out=DIR)``: the run's folder of ``fedgraph train
--out`` (a checkpoint every round, ``progress.json``), a run stopped after a
round and resumed with the numbers of one that was not, and the refusals of
a folder that holds something else."""

from __future__ import annotations

import json

import pytest
from test_pipeline import TRAINING, curves, write_federation

import fedgraph

pytestmark = pytest.mark.usefixtures("one_thread")

LOOP = {"num_rounds": 2, "eval_every": 1}


@pytest.fixture(scope="module")
def federation(tmp_path_factory):
    return write_federation(tmp_path_factory.mktemp("pipeline-folder") / "fed")


def _run(federation, **kwargs):
    loop = {**LOOP, **kwargs.pop("loop", {})}
    training = {**TRAINING, **kwargs.pop("training", {})}
    return fedgraph.pipeline(
        federation, algorithm="fede", training=training, loop=loop, **kwargs
    )


def test_a_stopped_run_resumes_to_the_numbers_of_an_uninterrupted_one(
    federation, tmp_path
):
    whole = _run(federation)
    out = tmp_path / "run"
    stopped = _run(federation, loop={"stop_after": 1}, out=out)
    assert stopped.rounds == 1 and stopped.metrics == {}
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == [
        "best.pt",
        "last.pt",
    ]
    progress = json.loads((out / "progress.json").read_text())
    assert [h["round"] for h in progress["history"]] == [1]
    resumed = _run(federation, out=out, resume=True)
    assert resumed.rounds == whole.rounds == 2
    assert resumed.metrics == whole.metrics
    assert curves(resumed.history) == curves(whole.history)
    progress = json.loads((out / "progress.json").read_text())
    assert [h["round"] for h in progress["history"]] == [1, 2]


def test_the_folder_of_another_run_is_refused(federation, tmp_path):
    out = tmp_path / "run"
    _run(federation, loop={"stop_after": 1}, out=out)
    with pytest.raises(ValueError, match=r"^`out` .* is not empty: resume it"):
        _run(federation, out=out)
    with pytest.raises(ValueError, match=r"lr"):  # other settings: another run
        _run(federation, training={"lr": 0.5}, out=out, resume=True)
    with pytest.raises(ValueError, match=r"^`resume=True` needs the run's folder"):
        _run(federation, resume=True)
    with pytest.raises(ValueError, match=r"^`out` applies to federated KGE"):
        fedgraph.pipeline(federation, algorithm="independent", out=tmp_path / "b")
