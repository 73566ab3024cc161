r"""benchmarks/fede_gain_by_sharing.py: which clients train each entity, the
sharing cells of the test triples, and per-cell MRRs that add up to the
runs' own test MRRs."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch


def _shard(entity_ids, train, test=None):
    triples = {"train": torch.tensor(train), "test": torch.tensor(test or [[0, 0, 0]])}
    graph = SimpleNamespace(triples=lambda split: triples[split])
    return SimpleNamespace(entity_ids=torch.tensor(entity_ids), graph=graph)


def test_trained_by_and_cells_by_hand(load_script):
    m = load_script("benchmarks/fede_gain_by_sharing.py")
    # client 0: local 0,1,2 = global 5,6,7, trains on 5 and 6 (7 only in test)
    # client 1: local 0,1 = global 6,7, trains on both
    # client 2: local 0,1 = global 6,8
    a = _shard([5, 6, 7], [[0, 0, 1]], [[0, 0, 2], [1, 0, 0], [2, 0, 1]])
    b = _shard([6, 7], [[0, 0, 1]])
    c = _shard([6, 8], [[1, 0, 0]])
    held = m.trained_by([a, b, c], 9)
    assert held.nonzero().tolist() == [[0, 5], [0, 6], [1, 6], [1, 7], [2, 6], [2, 8]]
    others = held.sum(0) - held[0].long()
    assert others[[5, 6, 7, 8]].tolist() == [0, 2, 1, 1]
    # (5,7): head 0 others, tail 1 -> 0*3+1; (6,5): 2*3+0; (7,6): 1*3+2
    test = a.graph.triples("test")
    assert m.sharing_cells(test, a.entity_ids, others, 3).tolist() == [1, 6, 5]
    # without client 2, no entity of client 0 is trained by two others: the
    # cells still read 3 * head + tail for 3 clients, not 2 * head + tail
    fewer = m.trained_by([a, b, _shard([8], [[0, 0, 0]])], 9)
    others = fewer.sum(0) - fewer[0].long()
    assert int(others.max()) == 1
    assert m.sharing_cells(test, a.entity_ids, others, 3).tolist() == [1, 3, 4]


def test_occurrence_shares_by_hand(load_script):
    m = load_script("benchmarks/fede_gain_by_sharing.py")
    # client 0 trains (0,1), (1,1), (1,2): global 1 occurs 4 times, 0 and 2 once
    # client 1 trains (1,2); client 2 trains (1,3)
    a = _shard([0, 1, 2], [[0, 0, 1], [1, 0, 1], [1, 0, 2]], [[1, 0, 1], [0, 0, 1]])
    b = _shard([1, 2], [[0, 0, 1]])
    c = _shard([1, 3], [[0, 0, 1]])
    occ = m.occurrences([a, b, c], 4)
    assert occ.tolist() == [[1, 4, 1, 0], [0, 1, 1, 0], [0, 1, 0, 1]]
    assert m.trained_by([a, b, c], 4).tolist() == (occ > 0).tolist()
    ends = a.entity_ids[a.graph.triples("test")[:, [0, 2]]].flatten()
    got = m.occurrence_shares(0, occ, ends)
    # shared entities 1 (4 of 6 occurrences, 3 holders) and 2 (1 of 2, 2 holders);
    # only the test triple (1,1) has both entities trained by all three clients
    assert got["shared_entities"] == pytest.approx((4 / 6 + 1 / 2) / 2)
    assert got["shared_entities_weight"] == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert got["fully_shared_test"] == pytest.approx(4 / 6)
    assert got["fully_shared_test_weight"] == pytest.approx(1 / 3)
    got = m.occurrence_shares(1, occ, b.entity_ids[[0, 1]])  # test triple (1,2)
    assert got["shared_entities"] == pytest.approx((1 / 6 + 1 / 2) / 2)
    assert math.isnan(got["fully_shared_test"])  # entity 2 has two holders


def test_client_cells_by_hand(load_script):
    m = load_script("benchmarks/fede_gain_by_sharing.py")
    cells = torch.tensor([0, 0, 3, 1])
    single = torch.tensor([1.0, 0.5, 0.25, 0.2], dtype=torch.float64)
    fed = torch.tensor([1.0, 1.0, 0.5, 0.1], dtype=torch.float64)
    rows = m.client_cells(cells, {"single": single, "federated": fed}, 2)
    assert [(r["head_others"], r["tail_others"], r["n"]) for r in rows] == [
        (0, 0, 2),
        (0, 1, 1),
        (1, 0, 0),
        (1, 1, 1),
    ]
    assert rows[0]["mrr_single"] == 0.75 and rows[0]["mrr_federated"] == 1.0
    assert rows[1]["mrr_single"] == 0.2 and rows[3]["mrr_federated"] == 0.5
    assert math.isnan(rows[2]["mrr_single"])


def _train(tmp_path, algorithm, name, rounds, *extra):
    from fedgraph.cli.main import main as fedgraph

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "federated"))
    from fedlu_toy import write_toy_folders

    if not (tmp_path / "toy").is_dir():
        write_toy_folders(tmp_path / "toy")
    args = ["train", str(tmp_path / "toy"), "--algorithm", algorithm]
    args += ["--out", str(tmp_path / name), "--rounds", str(rounds), "--dim", "8"]
    args += ["--eval-every", "1", "--batch-size", "32", "--num-negatives", "4"]
    args += ["--protocol", "fede", "--corrupt", "tail", "--local-epochs", "1"]
    assert fedgraph([*args, *extra, "--quiet"]) == 0
    return tmp_path / name


def test_the_script_reproduces_both_runs_mrr(tmp_path, load_script, capsys):
    m = load_script("benchmarks/fede_gain_by_sharing.py")
    runs = {a: _train(tmp_path, a, a, 2) for a in ("independent", "fede")}
    out = tmp_path / "sharing.json"
    argv = [str(runs["fede"]), "--single", str(runs["independent"]), "--out", str(out)]
    assert m.main(argv) == 0
    doc = json.loads(out.read_text())
    single = json.loads((runs["independent"] / "results.json").read_text())
    fed = json.loads((runs["fede"] / "results.json").read_text())
    for c, rs, rf in zip(
        doc["clients"], single["clients"], fed["clients"], strict=True
    ):
        assert c["mrr_single"] == pytest.approx(rs["mrr"], rel=1e-9)
        assert c["mrr_federated"] == pytest.approx(rf["mrr"], rel=1e-9)
        # the cells partition the test triples; count-weighted they give the MRRs
        n = [x["n"] for x in c["cells"]]
        assert sum(n) == c["test_triples"]
        for key in ("mrr_single", "mrr_federated"):
            got = sum(x["n"] * x[key] for x in c["cells"] if x["n"]) / sum(n)
            assert got == pytest.approx(c[key], rel=1e-9)
        assert 0 <= c["training_entities_shared"] <= c["training_entities"]
        share = c["occurrence_share"]
        assert 0 < share["shared_entities"] < 1
        assert 0 < share["shared_entities_weight"] <= 0.5
    w = doc["weighted"]
    assert w["single_all"] == pytest.approx(single["weighted"]["mrr"], rel=1e-9)
    assert w["federated_all"] == pytest.approx(fed["weighted"]["mrr"], rel=1e-9)
    assert "local_rows_all" not in w
    assert not out.with_suffix(".json.tmp").exists()
    capsys.readouterr()
    # the runs the wrong way round, or a folder without results: exit 2, one line
    assert m.main([str(runs["independent"]), "--single", str(runs["fede"])]) == 2
    err = capsys.readouterr().err
    assert "--single takes a Single" in err and err.count("\n") == 1
    assert m.main([str(tmp_path / "none"), "--single", str(runs["independent"])]) == 2
    assert "none/results.json not found" in capsys.readouterr().err


def test_an_entire_run_in_place_of_the_federated_one(tmp_path, load_script, capsys):
    # the pooled model cut to each client's rows ranks the client's test
    # triples as the Entire run tested them; its results are named "entire"
    m = load_script("benchmarks/fede_gain_by_sharing.py")
    single = _train(tmp_path, "independent", "single", 2)
    entire = _train(tmp_path, "centralized", "entire", 2)
    out = tmp_path / "sharing.json"
    assert m.main([str(entire), "--single", str(single), "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    ref = json.loads((entire / "results.json").read_text())
    for c, rc in zip(doc["clients"], ref["clients"], strict=True):
        assert c["mrr_entire"] == pytest.approx(rc["mrr"], rel=1e-9)
        assert "mrr_federated" not in c
        got = sum(x["n"] * x["mrr_entire"] for x in c["cells"] if x["n"])
        assert got / c["test_triples"] == pytest.approx(rc["mrr"], rel=1e-9)
    assert doc["weighted"]["entire_all"] == pytest.approx(
        ref["weighted"]["mrr"], rel=1e-9
    )
    assert "client 0: MRR Single" in capsys.readouterr().out
    # an Entire run has no clients' own tables: exit 2, one line
    argv = [str(entire), "--single", str(single), "--local-rows"]
    assert m.main(argv) == 2
    err = capsys.readouterr().err
    assert "--local-rows needs a federated run" in err and err.count("\n") == 1


def test_local_rows_are_what_local_evaluation_reports(tmp_path, load_script):
    # one round: the same training whichever rows are scored, so the run
    # evaluated with its clients' own tables is the reference for --local-rows
    # (3 local epochs at lr 0.05 move the local rows enough to change ranks)
    m = load_script("benchmarks/fede_gain_by_sharing.py")
    steps = ("--lr", "0.05", "--local-epochs", "3")
    single = _train(tmp_path, "independent", "single", 1)
    fed = _train(tmp_path, "fede", "global", 1, *steps)
    local = _train(tmp_path, "fede", "local", 1, *steps, "--evaluate-with", "local")
    out = tmp_path / "sharing.json"
    assert (
        m.main([str(fed), "--single", str(single), "--local-rows", "--out", str(out)])
        == 0
    )
    doc = json.loads(out.read_text())
    ref = json.loads((local / "results.json").read_text())
    assert ref["settings"]["protocol"]["model_scored"] == "local"
    for c, rc in zip(doc["clients"], ref["clients"], strict=True):
        assert c["mrr_local_rows"] == pytest.approx(rc["mrr"], rel=1e-9)
        assert c["mrr_local_rows"] != pytest.approx(c["mrr_federated"], rel=1e-6)
    w = doc["weighted"]["local_rows_all"]
    assert w == pytest.approx(ref["weighted"]["mrr"], rel=1e-9)


def test_recorded_cells_stand_in_for_the_single_models(tmp_path, load_script, capsys):
    # a FedE run's output recorded with --single, then an Entire run against
    # that file: the same Single (and FedE) cells as ranking the models again
    m = load_script("benchmarks/fede_gain_by_sharing.py")
    single = _train(tmp_path, "independent", "single", 2)
    fed = _train(tmp_path, "fede", "fede", 2)
    entire = _train(tmp_path, "centralized", "entire", 2)
    rec, direct, got = (tmp_path / f"{n}.json" for n in ("rec", "direct", "got"))
    assert m.main([str(fed), "--single", str(single), "--out", str(rec)]) == 0
    assert m.main([str(entire), "--single", str(single), "--out", str(direct)]) == 0
    assert m.main([str(entire), "--recorded", str(rec), "--out", str(got)]) == 0
    rec, direct, got = (json.loads(p.read_text()) for p in (rec, direct, got))
    assert got["recorded"].endswith("rec.json") and got["single"] is None
    for g, d, r in zip(got["clients"], direct["clients"], rec["clients"], strict=True):
        assert g["mrr_single"] == pytest.approx(d["mrr_single"], rel=1e-12)
        assert g["mrr_entire"] == pytest.approx(d["mrr_entire"], rel=1e-12)
        assert g["mrr_recorded_federated"] == r["mrr_federated"]
        assert "mrr_federated" not in g
        for gc, dc, rc in zip(g["cells"], d["cells"], r["cells"], strict=True):
            assert gc["n"] == dc["n"] == rc["n"]
            if gc["n"]:
                assert gc["mrr_single"] == pytest.approx(dc["mrr_single"], rel=1e-12)
                assert gc["mrr_entire"] == dc["mrr_entire"]
                assert gc["mrr_recorded_federated"] == rc["mrr_federated"]
    for key in ("single_all", "entire_all", "single_shared", "entire_shared"):
        assert got["weighted"][key] == pytest.approx(direct["weighted"][key], rel=1e-9)
    assert got["weighted"]["recorded_federated_all"] == pytest.approx(
        rec["weighted"]["federated_all"], rel=1e-9
    )
    # a federated run against a recorded federated one keeps both
    again = tmp_path / "again.json"
    assert (
        m.main(
            [str(fed), "--recorded", str(tmp_path / "rec.json"), "--out", str(again)]
        )
        == 0
    )
    c0 = json.loads(again.read_text())["clients"][0]
    assert c0["mrr_recorded_federated"] == c0["mrr_federated"]
    capsys.readouterr()
    # another partition (a cell's count changed), or no such file: exit 2, one line
    rec["clients"][0]["cells"][0]["n"] += 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(rec))
    assert m.main([str(entire), "--recorded", str(bad), "--out", str(got)]) == 2
    err = capsys.readouterr().err
    assert "bad.json: client 0's sharing cells differ" in err and err.count("\n") == 1
    assert m.main([str(entire), "--recorded", str(tmp_path / "none.json")]) == 2
    assert "none.json not found" in capsys.readouterr().err
    del rec["clients"][0]["cells"]
    bad.write_text(json.dumps(rec))
    assert m.main([str(entire), "--recorded", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "not an output of fede_gain_by_sharing.py (no 'cells')" in err
    assert err.count("\n") == 1
    assert json.loads((tmp_path / "got.json").read_text())["recorded"]  # kept whole
    # --single and --recorded together: argparse's usage error, exit 2
    with pytest.raises(SystemExit) as e:
        m.main([str(entire), "--single", str(single), "--recorded", str(bad)])
    assert e.value.code == 2
