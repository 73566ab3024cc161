r"""benchmarks/series_status.py summarises a run folder from its progress
and results files."""

from __future__ import annotations

import json
import os


def test_status_lines(tmp_path, load_script):
    qs = load_script("benchmarks/series_status.py")
    run = tmp_path / "fedlu-c3-fedlu-transe"
    run.mkdir()
    assert qs.status(run) is None  # not started
    hist = [{"round": r, "train_seconds": 10.0 * r} for r in range(1, 11)]
    hist[4]["valid"] = {"mrr": 0.25, "global_mrr": 0.2}
    hist[9]["valid"] = {"mrr": 0.24, "global_mrr": 0.21}
    (run / "progress.json").write_text(json.dumps({"settings": {}, "history": hist}))
    # mean of rounds 6-10: 80 s; FedLU's global MRR after the slash
    line = "fedlu-c3-fedlu-transe: round 10, 80 s/round, valid r5=25.00/20.00 r10=24.00/21.00; best r5=25.00/20.00"
    assert qs.status(run) == line
    # a results file older than the progress file is a previous call's
    res = run / "results.json"
    res.write_text(json.dumps({"weighted": {"mrr": 0.2468}}))
    old = (run / "progress.json").stat().st_mtime - 10
    os.utime(res, (old, old))
    assert qs.status(run) == line
    os.utime(res, None)
    assert qs.status(run) == line + ", FINISHED test 24.68"
    # FedLU's distillation switches: the first round each direction was on
    for h in hist:
        h["train"] = {"mu_local": 0.0, "mu_global": 2.0 * (h["round"] >= 7)}
    (run / "progress.json").write_text(json.dumps({"settings": {}, "history": hist}))
    assert qs.status(run) == line + ", l2g on since r7"


def test_status_names_the_earliest_stop(tmp_path, load_script):
    qs = load_script("benchmarks/series_status.py")
    run = tmp_path / "nell995-fed3-rotate-fede"
    run.mkdir()
    hist = [{"round": r, "train_seconds": 40.0} for r in range(1, 21)]
    for r, mrr in ((5, 0.30), (10, 0.35), (15, 0.34), (20, 0.33)):
        hist[r - 1]["valid"] = {"mrr": mrr}
    settings = {"patience": 15, "eval_every": 5, "rounds_max": 10000}
    (run / "progress.json").write_text(
        json.dumps({"settings": settings, "history": hist})
    )
    # best at round 10: 15 validations later, 10 + 15 * 5
    assert qs.status(run).endswith("best r10=35.00, earliest stop r85")
    settings["rounds_max"] = 50  # the cap comes first
    (run / "progress.json").write_text(
        json.dumps({"settings": settings, "history": hist})
    )
    assert qs.status(run).endswith("best r10=35.00, earliest stop r50")
    settings["patience"] = 0  # no early stopping
    (run / "progress.json").write_text(
        json.dumps({"settings": settings, "history": hist})
    )
    assert qs.status(run).endswith("best r10=35.00")


def test_baseline_status_from_trainer_checkpoints(tmp_path, load_script):
    import torch

    qs = load_script("benchmarks/series_status.py")
    run = tmp_path / "fb15k237-fed3-rotate-single"
    run.mkdir()
    assert qs.status(run) is None
    hist = [
        {"epoch": 10, "valid": {"mrr": 0.3851}},
        {"epoch": 20, "valid": {"mrr": 0.41}},
    ]
    state = {"epoch": 20, "train_seconds": 400.0, "history": hist}
    torch.save({**state, "best_epoch": 20, "best_mrr": 0.41}, run / "trainer0.pt")
    torch.save({"epoch": 0, "train_seconds": 0.0, "history": []}, run / "trainer1.pt")
    assert qs.status(run) == (
        "fb15k237-fed3-rotate-single: trainer0 epoch 20, 20 s/epoch, valid "
        "e10=38.51 e20=41.00; best e20=41.00; trainer1 epoch 0, 0 s/epoch"
    )
    # with the run's settings: patience 15 validations every 10 epochs after
    # the best epoch 20, at most 100 epochs
    settings = {"eval_every": 10, "patience": 15, "rounds": 10000}
    (run / "progress.json").write_text(json.dumps({"settings": settings}))
    assert "best e20=41.00, earliest stop e170; trainer1" in qs.status(run)
    settings["rounds"] = 100
    (run / "progress.json").write_text(json.dumps({"settings": settings}))
    assert "best e20=41.00, earliest stop e100; trainer1" in qs.status(run)
