import json
import sys
from pathlib import Path

import pytest
import torch

from fedgraph.cli.main import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "federated"))
from fedlu_toy import write_toy_folders  # noqa: E402


@pytest.mark.slow
def test_train_then_unlearn_writes_issue_shape(tmp_path):
    data, run = tmp_path / "toy", tmp_path / "run"
    write_toy_folders(data)
    common = [
        "--dim",
        "8",
        "--batch-size",
        "32",
        "--num-negatives",
        "4",
        "--lr",
        "0.05",
        "--gamma",
        "4",
        "--local-epochs",
        "1",
        "--quiet",
    ]
    assert (
        main(
            [
                "train",
                str(data),
                "--algorithm",
                "fedlu",
                "--out",
                str(run),
                "--rounds",
                "2",
                "--eval-every",
                "1",
                *common,
            ]
        )
        == 0
    )
    res = json.loads((run / "results.json").read_text())
    assert "mrr" in res["weighted_global"] and "global_mrr" not in res["weighted"]
    assert (
        main(
            [
                "unlearn",
                str(run),
                "--forget",
                str(data),
                "--epochs",
                "2",
                "--decay-epochs",
                "1",
                "--retrain-max-epochs",
                "1",
            ]
        )
        == 0
    )
    doc = json.loads((run / "unlearn" / "results.json").read_text())
    for model in ("raw", "retrained", "unlearned"):
        for which in ("local", "global"):
            for split in ("forget", "test"):
                assert set(doc[model][which][split]) >= {"hits@1", "mrr"}
    assert doc["settings"]["n_forget"] == {"0": 3, "1": 3}
    assert doc["seconds"]["unlearn"] > 0 and "local" in doc["seconds"]["retrain"]
    assert doc["versions"]["torch"] == torch.__version__
    assert (run / "unlearn" / "retrain" / "global.pt").exists()
    # --resume keeps the raw/unlearned results and the finished re-training
    unlearn_args = ["unlearn", str(run), "--forget", str(data), "--epochs", "2"]
    unlearn_args += ["--decay-epochs", "1", "--retrain-max-epochs", "1", "--resume"]
    assert main([*unlearn_args, "--threads", "1"]) == 0
    again = json.loads((run / "unlearn" / "results.json").read_text())
    for key in ("raw", "unlearned", "retrained"):
        assert again[key] == doc[key]
    assert again["seconds"]["unlearn"] == doc["seconds"]["unlearn"]
    # the re-training had finished: the file keeps the first call's record
    # (command, timings), not the re-evaluation's
    assert again == doc
    # a higher epoch cap trains on, and the file then records this call
    unlearn_args[unlearn_args.index("--retrain-max-epochs") + 1] = "2"
    assert main(unlearn_args) == 0
    more = json.loads((run / "unlearn" / "results.json").read_text())
    assert more["unlearned"] == doc["unlearned"]
    assert more["retrain_epochs"] != doc["retrain_epochs"]
    assert "--retrain-max-epochs 2" in more["settings"]["command"]


def test_unlearn_rejects_non_fedlu_run(tmp_path):
    (tmp_path / "progress.json").write_text(
        json.dumps({"settings": {"algorithm": "fede"}})
    )
    assert main(["unlearn", str(tmp_path), "--forget", str(tmp_path)]) == 2
