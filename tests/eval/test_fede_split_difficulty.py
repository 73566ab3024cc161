r"""benchmarks/fede_split_difficulty.py: FedE's re-split rule, the degree
buckets, and the per-bucket MRR that re-weights to the run's own MRR."""

from __future__ import annotations

import json

import pytest
import torch


def test_degrees_and_buckets(load_script):
    m = load_script("benchmarks/fede_split_difficulty.py")
    t = torch.tensor([[0, 0, 1], [1, 0, 2], [2, 1, 2], [3, 0, 1]])
    # entity 2's self-loop counts once: (1,0,2) and (2,1,2)
    assert m.degrees(t, 5).tolist() == [1, 3, 2, 1, 0]
    deg = torch.tensor([0, 1, 2, 3, 5, 6, 20, 21, 400])
    assert m.bucket_of(deg).tolist() == [0, 0, 1, 2, 2, 3, 3, 4, 4]
    # head bucket * 5 + tail bucket
    assert m.cells(t, m.degrees(t, 5)).tolist() == [
        0 * 5 + 2,
        2 * 5 + 1,
        1 * 5 + 1,
        0 * 5 + 2,
    ]


def test_fede_rule_keeps_two_training_triples_per_drawn_entity(load_script):
    m = load_script("benchmarks/fede_split_difficulty.py")
    g = torch.Generator().manual_seed(0)
    n, e, r = 2000, 300, 7
    t = torch.stack(
        [
            torch.randint(e, (n,), generator=g),
            torch.randint(r, (n,), generator=g),
            torch.randint(e, (n,), generator=g),
        ],
        1,
    )
    kept, drawn = m.fede_rule_split(t, e, r, seed=3)
    assert len(kept) + len(drawn) == n and len(drawn) == int(0.2 * n)
    deg = m.degrees(kept, e)
    assert (deg[drawn[:, 0]] >= 2).all() and (deg[drawn[:, 2]] >= 2).all()
    assert (torch.bincount(kept[:, 1], minlength=r)[drawn[:, 1]] >= 2).all()
    # seeded: the same draw again, another one with another seed
    assert torch.equal(m.fede_rule_split(t, e, r, seed=3)[1], drawn)
    assert not torch.equal(m.fede_rule_split(t, e, r, seed=4)[1], drawn)
    # an entity in only two triples is never drawn
    rare = torch.tensor([[e, 0, 0], [e, 1, 1]])
    _, d2 = m.fede_rule_split(torch.cat([t, rare]), e + 1, r, seed=3)
    assert not (d2 == e).any()


def test_relation_draws_by_hand(load_script):
    m = load_script("benchmarks/fede_split_difficulty.py")
    # global relation id -> [test triples, summed reciprocal ranks]
    clients = [
        {"relations": {"5": [2, 1.5], "9": [1, 1.0]}},
        {"relations": {"7": [1, 0.25]}},
    ]
    rel = [torch.tensor([5, 9]), torch.tensor([7])]
    # one relation per client: every draw gives the same three MRRs
    same = m.relation_draws(
        clients, [torch.tensor([5]), torch.tensor([9]), torch.tensor([7])], 20
    )
    assert same["sorted_clients"] == [[1.0] * 3, [0.75] * 3, [0.25] * 3]
    assert same["mean"] == pytest.approx([2.0 / 3] * 3)
    # sizes 2 + 1: the lone relation is 5 (clients 1.25/2 and 0.75), 7
    # (2.5/3 and 0.25) or 9 (1.75/3 and 1.0); 51 draws: the median is a draw
    d = m.relation_draws(clients, rel, draws=51)
    assert d["relations_per_client"] == [2, 1] and d["draws"] == 51
    assert d["sorted_clients"][0][1] in (0.75, 2.5 / 3, 1.0)
    assert d["sorted_clients"][1][1] in (0.625, 0.25, 1.75 / 3)
    highs, lows = (0.75, 2.5 / 3, 1.0), (0.625, 0.25, 1.75 / 3)
    assert all(min(highs) <= v <= max(highs) for v in d["sorted_clients"][0])
    assert all(min(lows) <= v <= max(lows) for v in d["sorted_clients"][1])
    # relations shared by clients: not a relation split, no draws
    assert m.relation_draws(clients, [torch.tensor([5]), torch.tensor([5])], 5) is None


def test_the_script_reproduces_the_runs_mrr(tmp_path, load_script, capsys):
    import sys
    from pathlib import Path

    from fedgraph.cli.main import main as fedgraph

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "federated"))
    from fedlu_toy import write_toy_folders

    m = load_script("benchmarks/fede_split_difficulty.py")
    write_toy_folders(tmp_path / "toy")
    run = tmp_path / "single"
    args = ["train", str(tmp_path / "toy"), "--algorithm", "independent"]
    args += ["--out", str(run), "--rounds", "2", "--eval-every", "1", "--dim", "8"]
    args += ["--batch-size", "32", "--num-negatives", "4", "--protocol", "fede"]
    assert fedgraph([*args, "--corrupt", "tail", "--quiet"]) == 0
    out = tmp_path / "difficulty.json"
    assert m.main([str(run), "--seeds", "2", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    res = json.loads((run / "results.json").read_text())
    # the buckets partition the test triples: their count-weighted MRR is the
    # run's own test MRR, per client and weighted
    for c, rc in zip(doc["clients"], res["clients"], strict=True):
        assert c["mrr"] == pytest.approx(rc["mrr"], rel=1e-9)
        assert sum(x["n"] for x in c["cells"]) == c["test_triples"]
        assert sum(x["p_fede_rule"] for x in c["cells"]) == pytest.approx(1.0)
        # FedE's rule never draws a test triple with a degree-1 entity
        assert c["share_degree_1_fede_rule"] == 0.0
        # the per-relation sums add up to the client's test triples and MRR
        per = list(c["relations"].values())
        assert sum(k for k, _ in per) == c["test_triples"]
        assert sum(v for _, v in per) / c["test_triples"] == pytest.approx(c["mrr"])
    draws = doc["relation_draws"]
    assert draws["draws"] == 2000
    assert len(draws["sorted_clients"]) == len(doc["clients"]) == 2
    assert doc["weighted"]["mrr"] == pytest.approx(res["weighted"]["mrr"], rel=1e-9)
    assert not out.with_suffix(".json.tmp").exists()
    # a FedE run: the model it tested (the server's rows under FedE's protocol)
    fed_run = tmp_path / "fede"
    args[args.index("independent")] = "fede"
    args[args.index(str(run))] = str(fed_run)
    assert fedgraph([*args, "--corrupt", "tail", "--local-epochs", "1", "--quiet"]) == 0
    assert m.main([str(fed_run), "--seeds", "1", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    res = json.loads((fed_run / "results.json").read_text())
    assert res["settings"]["protocol"]["model_scored"] == "global"
    for c, rc in zip(doc["clients"], res["clients"], strict=True):
        assert c["mrr"] == pytest.approx(rc["mrr"], rel=1e-9)
    # an Entire run: the pooled model cut to each client's rows ranks as the
    # run tested it (candidates and filter of the client)
    ent = tmp_path / "entire"
    args[args.index("fede")] = "centralized"
    args[args.index(str(fed_run))] = str(ent)
    assert fedgraph([*args, "--corrupt", "tail", "--quiet"]) == 0
    assert m.main([str(ent), "--seeds", "1", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    res = json.loads((ent / "results.json").read_text())
    assert res["settings"]["setting"] == "centralized"
    for c, rc in zip(doc["clients"], res["clients"], strict=True):
        assert c["mrr"] == pytest.approx(rc["mrr"], rel=1e-9)
    # a folder without results: exit 2, one line
    capsys.readouterr()
    assert m.main([str(tmp_path / "nothing")]) == 2
    assert "results.json not found" in capsys.readouterr().err
