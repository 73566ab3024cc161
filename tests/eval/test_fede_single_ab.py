r"""benchmarks/fede_single_ab.py rebuilds one client of a Single run: with no
change it repeats the run's validation curve bit for bit."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def test_series_variant_repeats_the_single_run(tmp_path, load_script, capsys):
    from fedgraph.cli.main import main as fedgraph

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "federated"))
    from fedlu_toy import write_toy_folders

    m = load_script("benchmarks/fede_single_ab.py")
    data = tmp_path / "toy"
    write_toy_folders(data)
    run = tmp_path / "single"
    s = m.SETTINGS
    args = ["train", str(data), "--algorithm", "independent"]
    args += ["--out", str(run), "--rounds", "3", "--eval-every", "1"]
    args += ["--model", s["model"], "--dim", str(s["dim"]), "--gamma", str(s["gamma"])]
    args += ["--loss", s["loss"], "--lr", str(s["lr"]), "--batch-size", "512"]
    args += ["--num-negatives", "256", "--corrupt", "tail", "--no-subsampling"]
    args += ["--protocol", s["protocol"], "--seed", "0", "--quiet"]
    assert fedgraph(args) == 0
    out = tmp_path / "ab.json"
    common = [str(data), "--client", "1", "--epochs", "3", "--eval-every", "1"]
    common += ["--series", str(run), "--work", str(tmp_path / "work")]
    assert m.main([*common, "--variant", "series", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["repeats_the_series"] is True
    for key in ("mrr", "loss"):
        assert [h[key] for h in doc["valid"]] == [h[key] for h in doc["series"]]
    assert len(doc["valid"]) == 3
    # and its best model's test metrics are the run's for that client
    single = json.loads((run / "results.json").read_text())["clients"][1]
    assert doc["best_epoch"] == single["best_epoch"]
    assert doc["test_at_best"]["mrr"] == single["mrr"]
    # FedE's negatives change the curve
    assert m.main([*common, "--variant", "per-positive", "--out", str(out)]) == 0
    pp = json.loads(out.read_text())
    assert pp["settings"]["shared_negatives"] is False
    assert [h["loss"] for h in pp["valid"]] != [h["loss"] for h in pp["series"]]
    # one-line errors, exit 2
    capsys.readouterr()
    assert (
        m.main(
            [
                str(data),
                "--client",
                "5",
                "--variant",
                "series",
                "--work",
                str(tmp_path / "w2"),
            ]
        )
        == 2
    )
    assert "`--client` 5 is not a client of" in capsys.readouterr().err
    assert m.main([*common[:-4], "--variant", "series", "--series", str(tmp_path)]) == 2
    assert "trainer1.pt not found" in capsys.readouterr().err
