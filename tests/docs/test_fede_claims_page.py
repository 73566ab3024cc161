r"""The tables of docs/papers/fede-claims.md (FedE's own claims) from
synthetic results files, and FedE's published numbers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from generator.fede_claims_runs import (
    MODELS,
    SETTINGS,
    load,
    published_clients,
    stage_run_folders,
)
from generator.fede_claims_tables import TABLES
from generator.render import render_page

ROOT = Path(__file__).resolve().parents[2]


def _tables(results: Path) -> list[str]:
    r"""The page's tables in order: per data set, gain, Entire, fusion,
    repeat, claims at a glance."""
    runs = load(results)
    return [table(runs) for table in TABLES.values()]


def _metrics(mrr: float) -> dict[str, float]:
    return {"mrr": mrr, "hits@1": mrr / 2, "hits@5": mrr, "hits@10": 1.5 * mrr}


def _run(mrrs, n_test=(100, 100, 200), **extra) -> dict:
    clients = [
        {"client": k, "n_test": n, **_metrics(m)}
        for k, (m, n) in enumerate(zip(mrrs, n_test, strict=True))
    ]
    total = sum(n_test)
    weighted = {
        key: sum(c[key] * c["n_test"] for c in clients) / total
        for key in ("mrr", "hits@1", "hits@5", "hits@10")
    }
    return {"weighted": weighted, "clients": clients, "rounds": 20, **extra}


def test_tables_from_synthetic_results(tmp_path):
    single = _run([0.50, 0.40, 0.30])
    for c in single["clients"]:
        c.update(best_epoch=100, epochs=250)
    (tmp_path / "fede-nell995-fed3-rotate-single.json").write_text(json.dumps(single))
    fede = _run([0.55, 0.38, 0.33], best_round=15)
    (tmp_path / "fede-nell995-fed3-rotate-fede.json").write_text(json.dumps(fede))
    fusion = {
        **_run([0.6, 0.4, 0.35]),
        "weighted_single": {"mrr": 0.375},
        "weighted_federated": {"mrr": 0.3975},
    }
    (tmp_path / "fede-nell995-fed3-rotate-fusion.json").write_text(json.dumps(fusion))
    fb, nell, gain, entire, fused, repeat, claims = _tables(tmp_path)
    assert entire.count("\n") == 1  # header only: no Entire run
    assert repeat.count("\n") == 1  # header only: no repeated run
    assert fb.count("\n") == 1  # header only: no FB15k-237-Fed3 file
    rows = nell.splitlines()[2:]
    assert len(rows) == 10  # (3 clients + weighted + mean) x (Single, FedE)
    # client 1 of Single: 50.00 ours vs 49.61 published (Table 4), +0.39
    assert rows[0].startswith("| RotatE | Single | 1 | 50.00 | 49.61 | +0.39 |")
    assert "epochs 100/100/100 of 250/250/250" in rows[0]
    # weighted MRR: (50 + 40 + 2 * 30) / 4 = 37.5
    assert rows[3].startswith("| RotatE | Single | weighted | 37.50 | – | – |")
    # unweighted mean: (50 + 40 + 30) / 3 = 40; Table 4's Single RotatE MRR
    # (49.61 + 31.87 + 30.34) / 3 = 37.27
    assert rows[4].startswith(
        "| RotatE | Single | mean of clients | 40.00 | 37.27 | +2.73 | 20.00 |"
    )
    assert "round 15 of 20" in rows[5]
    g = gain.splitlines()[2:]
    # 0.55 / 0.50 - 1 = +10.0 %, Table 4: 0.5312 / 0.4961 - 1 = +7.1 %
    assert g[0] == "| NELL-995-Fed3 | RotatE | 1 | 50.00 | 55.00 | +10.0 | +7.1 | yes |"
    assert g[1].endswith("| -5.0 | +18.3 | no |")
    # mean over clients: (10 - 5 + 10) / 3 = +5.0; Table 4's: (7.08 + 18.32 + 26.17) / 3
    assert g[3] == (
        "| NELL-995-Fed3 | RotatE | mean | – | – | +5.0 | +17.2 (text: +14.2) "
        "| not every client |"
    )
    f = fused.splitlines()[2]
    # fused: (60 + 40 + 2 * 35) / 4 = 42.5, +2.75 over the federated 39.75
    assert f.startswith(
        "| NELL-995-Fed3 | RotatE | 37.50 | 39.75 | 42.50 | +2.75 | 42.89 | 44.33 |"
    )
    assert "+1.44" in f
    # claims: FedE beats Single on 2 of 3 clients (Table 4: 3), mean gain +5.0 %
    # against +17.2 %; no Entire run; fusion +2.75 against Table 5's +1.44
    assert claims.splitlines()[2:] == [
        "| NELL-995-Fed3 | RotatE | 2 / 3 of 3 | +5.0 / +17.2 | – | – | +2.75 / +1.44 |"
    ]


def test_entire_table(tmp_path):
    entire = _run([0.52, 0.40, 0.30])
    for c in entire["clients"]:  # one pooled model: the same epochs on every row
        c.update(best_epoch=90, epochs=240)
    (tmp_path / "fede-nell995-fed3-rotate-entire.json").write_text(json.dumps(entire))
    fede = _run([0.55, 0.38, 0.33], best_round=15)
    (tmp_path / "fede-nell995-fed3-rotate-fede.json").write_text(json.dumps(fede))
    # an Entire run without its FedE run has no row
    (tmp_path / "fede-fb15k237-fed3-transe-entire.json").write_text(json.dumps(entire))
    rows = _tables(tmp_path)[3].splitlines()[2:]
    # Table 4, RotatE: Entire 52.15 / 37.75 / 37.85, FedE 53.12 / 37.71 / 38.28
    assert rows == [
        "| NELL-995-Fed3 | RotatE | 1 | 52.00 | 55.00 | +3.00 | +0.97 | yes / yes |",
        "| NELL-995-Fed3 | RotatE | 2 | 40.00 | 38.00 | -2.00 | -0.04 | no / no |",
        "| NELL-995-Fed3 | RotatE | 3 | 30.00 | 33.00 | +3.00 | +0.43 | yes / yes |",
        # means: 40.67 -> 42.00; Table 4's 42.58 -> 43.04
        "| NELL-995-Fed3 | RotatE | mean | 40.67 | 42.00 | +1.33 | +0.45 | 2 / 2 of 3 clients |",
    ]  # fmt: skip
    # the client table names the pooled model's epoch once, not once per client
    nell = _tables(tmp_path)[1].splitlines()[2:]
    assert all(r.endswith("| epoch 90 of 240 | [`fede-nell995-fed3-rotate-entire.json`]"
                          "(../results/fede-nell995-fed3-rotate-entire.json) |")
               for r in nell if "| Entire |" in r)  # fmt: skip
    assert sum("| Entire |" in r for r in nell) == 5
    # claims: FedE beats Entire on 2 clients (Table 4: 2), mean +1.33 against
    # +0.45 points; no Single run, no fusion
    claims = _tables(tmp_path)[6].splitlines()[2:]
    assert claims == [
        "| NELL-995-Fed3 | RotatE | – | – | 2 / 2 of 3 | +1.33 / +0.45 | – |"
    ]


def test_the_tables_are_blocks_of_the_page(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    single = _run([0.50, 0.40, 0.30])
    (results / "fede-nell995-fed3-rotate-single.json").write_text(json.dumps(single))
    page = (
        "NELL-995-Fed3, test (%):\n\n<!-- generated: fede-claims-nell995-fed3 -->\n"
        "| old |\n<!-- end generated -->\n\nText.\n"
    )
    tables = _tables(results)
    assert render_page(page, results) == (
        "NELL-995-Fed3, test (%):\n\n<!-- generated: fede-claims-nell995-fed3 -->\n"
        f"{tables[1]}\n<!-- end generated -->\n\nText.\n"
    )
    assert tables[1].count("\n") == 6  # header, rule, 3 clients, weighted, mean


def test_run_folders_are_read_as_results_files(tmp_path, load_script, capsys):
    runs = tmp_path / "runs"
    fede = _run([0.55, 0.38, 0.33], best_round=15)
    fusion = {**_run([0.6, 0.4, 0.35]), "weighted_single": {"mrr": 0.375},
              "weighted_federated": {"mrr": 0.3975}}  # fmt: skip
    for folder, doc in (("nell995-fed3-rotate-single", _run([0.50, 0.40, 0.30])),
                        ("nell995-fed3-rotate-fede", fede),
                        ("nell995-fed3-rotate-fede/fusion", fusion)):  # fmt: skip
        (runs / folder).mkdir(parents=True)
        (runs / folder / "results.json").write_text(json.dumps(doc))
    out = tmp_path / "staged"
    out.mkdir()
    staged = stage_run_folders(runs, out)
    assert sorted(p.name for p in staged) == [
        "fede-nell995-fed3-rotate-fede.json",
        "fede-nell995-fed3-rotate-fusion.json",
        "fede-nell995-fed3-rotate-single.json",
    ]
    script = load_script("docs/generate.py")
    argv = ["--print", "fede-claims-glance", "--results", str(runs), "--run-folders"]
    assert script.main(argv) == 0
    assert capsys.readouterr().out.splitlines()[3:] == [
        "| NELL-995-Fed3 | RotatE | 2 / 3 of 3 | +5.0 / +17.2 | – | – | +2.75 / +1.44 |",
        "",
    ]


def test_repeat_table(tmp_path):
    first = _run([0.50, 0.40, 0.30])
    again = _run([0.51, 0.38, 0.30])
    for doc, best in ((first, (100, 90, 30)), (again, (120, 90, 20))):
        for c, e in zip(doc["clients"], best, strict=True):
            c.update(best_epoch=e, epochs=e + 150)
    (tmp_path / "fede-nell995-fed3-rotate-single.json").write_text(json.dumps(first))
    (tmp_path / "fede-nell995-fed3-rotate-single-repeat.json").write_text(
        json.dumps(again)
    )
    # a repeat without its first run has no row
    (tmp_path / "fede-fb15k237-fed3-rotate-fede-repeat.json").write_text(
        json.dumps(_run([0.4, 0.4, 0.4], best_round=5))
    )
    rows = _tables(tmp_path)[5].splitlines()[2:]
    assert rows == [
        "| NELL-995-Fed3 | RotatE | Single | 1 | 50.00 | 51.00 | +1.00 | epoch 100 | epoch 120 |",
        "| NELL-995-Fed3 | RotatE | Single | 2 | 40.00 | 38.00 | -2.00 | epoch 90 | epoch 90 |",
        "| NELL-995-Fed3 | RotatE | Single | 3 | 30.00 | 30.00 | +0.00 | epoch 30 | epoch 20 |",
        # weighted: (50 + 40 + 2 * 30) / 4 = 37.5 and (51 + 38 + 60) / 4 = 37.25
        "| NELL-995-Fed3 | RotatE | Single | weighted | 37.50 | 37.25 | -0.25 | – | – |",
        # mean of clients: 40.00 and 39.67
        "| NELL-995-Fed3 | RotatE | Single | mean of clients | 40.00 | 39.67 | -0.33 | – | – |",
    ]  # fmt: skip
    # the repeat is not a run of its own in the other tables
    assert "repeat" not in _tables(tmp_path)[1]


def _paper_table(lines: list[str], caption: str) -> dict:
    r"""``{(model, setting): [(MRR, H@1, H@5, H@10) per client]}`` of the
    Markdown table printed just above ``caption`` in FedE's text."""
    end = next(k for k, line in enumerate(lines) if line.startswith(caption))
    rows: list[str] = []
    k = end - 1
    while not lines[k].strip():
        k -= 1
    while lines[k].startswith("|"):
        rows.insert(0, lines[k])
        k -= 1
    table, model = {}, None
    for row in rows[3:]:  # header, rule, metric names
        cells = [c.strip() for c in row.strip("|").split("|")]
        model = cells[0].lower() or model
        values = [float(re.sub(r"<[^>]*>|\*", "", c)) for c in cells[2:]]
        table[(model, cells[1].lower())] = [tuple(values[i : i + 4]) for i in (0, 4, 8)]
    return table


def test_published_numbers_are_fedes_tables():
    # every (model, setting, client) of Tables 3 and 4, as FedE's text prints them
    text = ROOT.parent / "shared" / "papers" / "fede.txt"
    if not text.is_file():
        pytest.skip(f"{text} not found (FedE's text, ../shared beside the checkout)")
    lines = text.read_text().split("\n")
    for caption, data in (("Table 3:", "fb15k237-fed3"), ("Table 4:", "nell995-fed3")):
        paper = _paper_table(lines, caption)
        assert len(paper) == 12
        ours = {
            (m, s): [tuple(row) for row in published_clients()[data][m][s]]
            for m in MODELS
            for s in SETTINGS
        }
        assert ours == paper
