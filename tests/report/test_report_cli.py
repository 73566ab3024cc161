r"""``fedgraph report`` on two tiny runs (FedE and Independent on a synthetic
federation): a table, report.md and PNG plots; bad input names the path."""

from __future__ import annotations

import json
import random

import pytest

from fedgraph.cli.main import main
from fedgraph.report import load_run, runs_table

pytestmark = pytest.mark.usefixtures("one_thread")


def _write_federation(root, n_clients=2, seed=0):
    rng = random.Random(seed)
    for c in range(n_clients):
        d = root / f"client{c}"
        d.mkdir(parents=True)
        ents = [f"e{i}" for i in range(c * 4, c * 4 + 12)]  # overlapping
        for split, n in (("train", 60), ("valid", 8), ("test", 8)):
            lines = {
                f"{rng.choice(ents)}\tr{c}_{rng.randrange(3)}\t{rng.choice(ents)}"
                for _ in range(n)
            }
            (d / f"{split}.txt").write_text("\n".join(sorted(lines)) + "\n")


SMALL = ["--dim", "8", "--batch-size", "32", "--num-negatives", "4",
         "--lr", "0.01", "--quiet", "--eval-every", "1"]  # fmt: skip


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runs")
    _write_federation(tmp / "fed")
    for alg, rounds in (("fede", "2"), ("independent", "3")):
        argv = ["train", str(tmp / "fed"), "--algorithm", alg,
                "--out", str(tmp / alg), "--rounds", rounds, *SMALL]  # fmt: skip
        if alg == "fede":
            argv += ["--local-epochs", "1"]
        assert main(argv) == 0
    return tmp


def test_report_table_and_pngs(two_runs, capsys):
    out = two_runs / "report"
    assert main(["report", str(two_runs / "fede"), str(two_runs / "independent"),
                 "--out", str(out)]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    rows = [line for line in printed.splitlines() if line.startswith("| fede")]
    assert len(rows) == 1
    fede = json.loads((two_runs / "fede" / "results.json").read_text())
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    # test MRR cell = the results file's weighted MRR in %
    assert cells[6] == f"{100 * fede['weighted']['mrr']:.2f}"
    assert cells[9] == "2"  # rounds
    for name in ("report.md", "curves.png", "communication.png", "clients.png"):
        assert (out / name).stat().st_size > 0
    assert (out / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (out / "report.md").read_text()
    assert "![validation curves](curves.png)" in md
    assert "| independent | independent |" in md


def test_report_curves_and_communication_from_the_files(two_runs):
    fede = load_run(two_runs / "fede")
    doc = json.loads((two_runs / "fede" / "results.json").read_text())
    assert fede.curve == [(h["round"], h["valid"]["mrr"]) for h in doc["history"]
                          if "valid" in h]  # fmt: skip
    # cumulative parameters, up + down, through each evaluated round
    per = {int(r): c["params_up"] + c["params_down"]
           for r, c in doc["comm_per_round"].items()}  # fmt: skip
    assert [x for x, _ in fede.comm_curve] == [
        sum(v for r, v in per.items() if r <= rnd) for rnd, _ in fede.curve
    ]
    ind = load_run(two_runs / "independent")
    assert ind.algorithm == "independent" and not ind.comm_curve
    assert [r for r, _ in ind.curve] == [1, 2, 3]
    # baseline curve: clients' validation MRRs weighted by their queries
    hist = json.loads((two_runs / "independent" / "results.json").read_text())[
        "history"
    ]
    v = [next(e["valid"] for e in h if e["epoch"] == 1) for h in hist]
    want = sum(x["mrr"] * x["n_queries"] for x in v) / sum(x["n_queries"] for x in v)
    assert ind.curve[0][1] == pytest.approx(want)


def test_report_reads_a_run_still_training(two_runs, tmp_path):
    run = tmp_path / "partial"
    run.mkdir()
    progress = json.loads((two_runs / "fede" / "progress.json").read_text())
    (run / "progress.json").write_text(json.dumps(progress))
    summary = load_run(run)
    assert not summary.finished and summary.curve
    assert "(training)" in runs_table([summary])


def test_report_bad_input_names_it_and_writes_nothing(two_runs, tmp_path, capsys):
    out = tmp_path / "rep"
    missing = tmp_path / "nope"
    assert (
        main(["report", str(two_runs / "fede"), str(missing), "--out", str(out)]) == 2
    )
    assert str(missing) in capsys.readouterr().err
    assert not out.exists()
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert main(["report", str(two_runs / "fede"), "--out", str(afile)]) == 2
    assert "is not a folder" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["report", str(bad)]) == 2
    assert "bad.json" in capsys.readouterr().err


def test_report_draws_fedlu_global_model(tmp_path):
    doc = {
        "weighted": {"mrr": 0.5},
        "clients": [{"client": 0, "n_test": 2, "mrr": 0.5}],
        "rounds": 2,
        "history": [
            {"round": 1},
            {"round": 2, "valid": {"mrr": 0.4, "global_mrr": 0.3}},
        ],
        "settings": {"algorithm": "fedlu"},
    }
    path = tmp_path / "fedlu.json"
    path.write_text(json.dumps(doc))
    run = load_run(path)
    assert run.curve == [(2, 0.4)] and run.global_curve == [(2, 0.3)]
    assert run.label == "fedlu" and run.algorithm == "fedlu"
