import json
import sys
from pathlib import Path

import pytest

from fedgraph.cli.main import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "federated"))
from fedlu_toy import write_toy_folders  # noqa: E402

COMMON = ["--dim", "8", "--batch-size", "32", "--num-negatives", "4"]
COMMON += ["--lr", "0.05", "--gamma", "4", "--quiet"]


def _train(data: Path, out: Path, algorithm: str) -> dict:
    args = ["train", str(data), "--algorithm", algorithm]
    args += ["--out", str(out), "--rounds", "3", "--eval-every", "1", *COMMON]
    if algorithm != "independent":
        args += ["--local-epochs", "1"]
    assert main(args) == 0
    return json.loads((out / "results.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuse")
    data = root / "toy"
    write_toy_folders(data)
    fed = _train(data, root / "fede", "fede")
    single = _train(data, root / "single", "independent")
    return root, data, fed, single


@pytest.mark.slow
def test_fuse_reports_the_runs_own_test_numbers_and_the_fused_model(runs):
    root, _, fed, single = runs
    assert main(["fuse", str(root / "fede"), "--single", str(root / "single")]) == 0
    doc = json.loads((root / "fede" / "fusion" / "results.json").read_text())
    # the single and federated models are the ones their runs tested: the
    # same numbers, to the last digit
    for key in ("mrr", "hits@1", "hits@3", "hits@10", "n_queries"):
        assert doc["weighted_single"][key] == single["weighted"][key]
        assert doc["weighted_federated"][key] == fed["weighted"][key]
    assert [c["n_test"] for c in doc["clients"]] == [
        c["n_test"] for c in fed["clients"]
    ]
    for row, f_row in zip(doc["clients"], fed["clients"], strict=True):
        assert row["federated"]["mrr"] == f_row["mrr"]
        assert set(row["fusion"]) == {"w_single", "w_federated", "bias", "fit_loss"}
        assert 0 < row["mrr"] <= 1
    assert doc["settings"]["single"]["from"] == str(root / "single" / "results.json")
    assert doc["settings"]["fit_on"] == "valid"
    assert doc["settings"]["checkpoint"].endswith("(best valid)")
    # the fused metrics are the query-weighted merge of the clients'
    n = sum(c["n_queries"] for c in doc["clients"])
    mrr = sum(c["mrr"] * c["n_queries"] for c in doc["clients"]) / n
    assert doc["weighted"]["mrr"] == pytest.approx(mrr, rel=1e-6)


@pytest.mark.slow
def test_fuse_errors_name_the_missing_or_mismatched_file(runs, tmp_path, capsys):
    root, _, _, _ = runs
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["fuse", str(root / "fede"), "--single", str(empty)]) == 2
    assert f"{empty / 'trainer0.pt'} not found" in capsys.readouterr().err
    # an Independent run of another width does not fit the clients
    wrong = tmp_path / "wrong.json"
    wrong.write_text(
        json.dumps({"settings": {"setting": "independent", "hidden_channels": 16}})
    )
    args = ["fuse", str(root / "fede"), "--single", str(root / "single")]
    assert main([*args, "--single-results", str(wrong)]) == 2
    err = capsys.readouterr().err
    assert "trainer0.pt does not fit client 0" in err and "dim 16" in err
    assert not (tmp_path / "fusion").exists()
    # a folder that is not a run
    assert main(["fuse", str(tmp_path), "--single", str(root / "single")]) == 2
    assert "progress.json not found" in capsys.readouterr().err


@pytest.mark.slow
def test_fuse_keeps_the_runs_fede_protocol(tmp_path):
    data = tmp_path / "toy"
    write_toy_folders(data)
    fede = ["--protocol", "fede", "--corrupt", "tail", "--loss", "nssa"]
    runs = {}
    for name, algorithm in (("fede", "fede"), ("single", "independent")):
        args = ["train", str(data), "--algorithm", algorithm]
        args += ["--out", str(tmp_path / name), "--rounds", "3", "--eval-every", "1"]
        args += [*COMMON, *fede] + (["--local-epochs", "1"] if name == "fede" else [])
        assert main(args) == 0
        runs[name] = json.loads((tmp_path / name / "results.json").read_text())
    assert (
        main(["fuse", str(tmp_path / "fede"), "--single", str(tmp_path / "single")])
        == 0
    )
    doc = json.loads((tmp_path / "fede" / "fusion" / "results.json").read_text())
    # ranked as the runs were: tails only, the server's rows for FedE
    for key in ("mrr", "hits@10", "n_queries"):
        assert doc["weighted_single"][key] == runs["single"]["weighted"][key]
        assert doc["weighted_federated"][key] == runs["fede"]["weighted"][key]
    assert "head_mrr" not in doc["weighted"]
    assert doc["settings"]["protocol"]["name"] == "fede"
