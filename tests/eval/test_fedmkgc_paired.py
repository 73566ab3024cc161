r"""benchmarks/fedmkgc_paired.py: two finished text runs ranked again on the
same test queries (their recorded metrics recomputed exactly), and the
paired bootstrap of their MRR difference against hand computations."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("transformers")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
from text_toy import save_tiny_model, write_toy_dbp5l  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")

FAST = ["--rounds", "2", "--eval-every", "2", "--lr", "1e-3", "--batch-size", "6",
        "--max-length", "6", "--prefix-tokens", "2", "--quiet", "--threads", "1"]  # fmt: skip


@pytest.fixture
def script(load_script):
    return load_script("benchmarks/fedmkgc_paired.py")


def test_paired_difference_and_interval_by_hand(script):
    # 4 test triples, two directions each: per-triple differences 0.5, 0, 0, -0.25
    a = torch.tensor([[1.0, 1.0], [0.5, 0.5], [0.25, 1.0], [0.5, 0.5]])
    b = torch.tensor([[0.5, 0.5], [0.5, 0.5], [0.25, 1.0], [1.0, 0.5]])
    out = script.paired(a, b, resamples=2000, seed=0)
    assert out["mrr_difference"] == pytest.approx((0.5 + 0 + 0 - 0.25) / 4)
    assert out["queries"] == 8
    assert out["a_ranks_higher"] == pytest.approx(2 / 8)
    assert out["b_ranks_higher"] == pytest.approx(1 / 8)
    low, high = out["ci95"]
    # resampled means of four of {0.5, 0, 0, -0.25} lie in [-0.25, 0.5]
    assert -0.25 <= low < out["mrr_difference"] < high <= 0.5
    # a constant difference has no spread: the interval is that value
    same = script.paired(a, a - 0.125, resamples=500, seed=1)
    assert same["ci95"] == pytest.approx([0.125, 0.125])
    assert same["share_of_resamples_above_zero"] == 1.0


def test_recorded_ranks_keep_every_rank_and_the_same_metrics(script):
    state = script.RecordedRanks()
    state.update(torch.tensor([1.0, 4.0]), "tail").update(torch.tensor([2.0]), "tail")
    state.update(torch.tensor([2.0, 1.0, 8.0]), "head")
    assert torch.equal(
        state.reciprocal_ranks(),
        torch.tensor([[1.0, 0.5], [0.25, 1.0], [0.5, 0.125]], dtype=torch.double),
    )
    assert state.compute()["mrr"] == pytest.approx(
        (1 + 0.25 + 0.5 + 0.5 + 1 + 0.125) / 6
    )


def test_two_toy_runs_are_ranked_again_as_recorded(script, tmp_path, capsys):
    from fedgraph.cli.main import main as fedgraph

    data = write_toy_dbp5l(tmp_path / "dbp")
    model = save_tiny_model(tmp_path / "bert")
    runs = {}
    for algorithm in ("fedmkgc", "independent"):
        runs[algorithm] = tmp_path / algorithm
        argv = ["train", str(data), "--model", "text", "--encoder", str(model),
                "--algorithm", algorithm, "--out", str(runs[algorithm]), *FAST]  # fmt: skip
        assert fedgraph(argv) == 0
    out = tmp_path / "paired.json"
    languages = json.loads((runs["fedmkgc"] / "results.json").read_text())["settings"][
        "client_languages"
    ]
    argv = [str(runs["fedmkgc"]), str(runs["independent"]), "--languages",
            *languages[::-1], "--resamples", "200", "--threads", "1", "--out", str(out)]  # fmt: skip
    assert script.main(argv) == 0
    doc = json.loads(out.read_text())
    for run, side in ((runs["fedmkgc"], "a"), (runs["independent"], "b")):
        recorded = json.loads((run / "results.json").read_text())["clients"]
        for c, lang in enumerate(languages):
            assert doc["languages"][lang][side]["mrr"] == recorded[c]["mrr"]
    for lang in languages:
        d = doc["languages"][lang]
        assert d["mrr_difference"] == pytest.approx(d["a"]["mrr"] - d["b"]["mrr"])
        assert d["ci95"][0] <= d["mrr_difference"] <= d["ci95"][1]
    assert "(as recorded)" in capsys.readouterr().out

    # a run that has not finished, a language it has no client for, or a
    # missing checkpoint: one line on stderr, exit code 2
    bad = [
        ([str(tmp_path), str(runs["independent"]), "--languages", "en"],
         "no results file (the run has not finished)"),
        ([str(runs["fedmkgc"]), str(runs["independent"]), "--languages", "xx"],
         r"no client for language(s) ['xx']"),
    ]  # fmt: skip
    for argv, message in bad:
        assert script.main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1
    (runs["independent"] / "checkpoints" / "best.pt").unlink()
    argv = [str(runs["fedmkgc"]), str(runs["independent"]), "--languages", "en"]
    assert script.main(argv) == 2
    assert "best.pt" in capsys.readouterr().err
