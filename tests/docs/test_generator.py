r"""The results pages (docs/papers) are what ``python docs/generate.py``
generates from docs/results/*.json and the published numbers in
docs/papers/published/*.json, and the generator reads both."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from generator import files
from generator.curves import comm_curve
from generator.fedmkgc import (
    fedmkgc_languages_table,
    fedmkgc_paired_table,
    fedmkgc_reduced_curves,
    fedmkgc_reduced_losses,
    fedmkgc_reduced_table,
    mkgc_client_steps,
)
from generator.fedmkgc import verdicts as fedmkgc_verdicts
from generator.kge_fb15k237 import fb15k237_table, r3_table
from generator.kge_fb15k237 import verdicts as fb15k237_verdicts
from generator.optimisers import server_optimiser_table
from generator.pages import BLOCKS
from generator.render import BLOCK, render_page, stale

ROOT = Path(__file__).resolve().parents[2]


def test_check_passes_on_the_committed_pages():
    pytest.importorskip("matplotlib")
    done = subprocess.run(
        [sys.executable, "docs/generate.py", "--check"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, ""), (
        f"docs/papers is out of date ({done.stdout.strip()}{done.stderr.strip()}): "
        "run `python docs/generate.py`"
    )


def test_check_names_a_stale_page(tmp_path):
    pages = tmp_path / "pages"
    pages.mkdir()
    current = render_page("<!-- generated: fede-umls -->\n<!-- end generated -->\n")
    (pages / "a.md").write_text(current)
    assert stale(pages, scratch=tmp_path / "out") == []
    (pages / "a.md").write_text(current.replace("| FedE |", "| FedE, edited |"))
    assert stale(pages, scratch=tmp_path / "out2") == ["a.md: out of date"]


def test_every_block_and_figure_a_page_names_exists():
    for page in (ROOT / "docs" / "papers").glob("*.md"):
        text = page.read_text()
        for name in BLOCK.findall(text):
            assert name[1] in BLOCKS
        for ref in text.split("](img/")[1:]:
            assert (page.parent / "img" / ref.split(")")[0]).is_file()


def test_a_changed_published_number_changes_the_page(tmp_path, monkeypatch):
    shutil.copytree(files.PUBLISHED, tmp_path / "published")
    path = tmp_path / "published" / "fedlu.json"
    doc = json.loads(path.read_text())
    assert doc["table1_test_mrr"]["values"]["r3"]["fede"] == 32.52
    doc["table1_test_mrr"]["values"]["r3"]["fede"] = 40.0
    path.write_text(json.dumps(doc))
    before = BLOCKS["fedlu-table"](files.RESULTS).splitlines()
    monkeypatch.setattr(files, "PUBLISHED", tmp_path / "published")
    after = BLOCKS["fedlu-table"](files.RESULTS).splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert len(changed) == 1
    old, new = changed[0]
    assert old.startswith("| R3 | FedE | 32.55 | 32.52 | +0.03 |")
    assert new.startswith("| R3 | FedE | 32.55 | 40.00 | -7.45 |")
    verdict = BLOCKS["verdict-fedlu"](files.RESULTS)
    assert (
        "| Table 1: FedE | 40.00 / 32.66 | 32.55 / 32.15 | partly (Δ -7.45 / -0.51) |"
        in verdict
    )


def test_a_missing_published_file_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "PUBLISHED", tmp_path)
    with pytest.raises(ValueError, match=r"fedlu.json: missing or not a JSON object$"):
        BLOCKS["fedlu-table"](files.RESULTS)
    (tmp_path / "fedlu.json").write_text(json.dumps({"source": "FedLU"}))
    with pytest.raises(
        ValueError, match=r"fedlu.json: no table `table1_test_mrr` with `values`$"
    ):
        BLOCKS["fedlu-table"](files.RESULTS)


def test_every_published_file_cites_its_source():
    for path in sorted(files.PUBLISHED.glob("*.json")):
        doc = json.loads(path.read_text())
        assert doc["source"].strip(), path.name
        tables = {k: v for k, v in doc.items() if k != "source"}
        assert tables and all(set(t) == {"about", "values"} for t in tables.values())


def test_a_changed_results_file_changes_the_page(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    doc = {
        "weighted": {"mrr": 0.5, "hits@1": 0.25, "hits@10": 0.75},
        "clients": [{"client": 0, "n_test": 3, "mrr": 0.5}],
        "best_round": 5,
        "rounds": 10,
        "comm": {"bytes_up": 2**20, "bytes_down": 2**20},
        "settings": {"command": "fedgraph train --data /x/shared/datasets/umls"},
    }
    (results / "umls-r3-fede-transe.json").write_text(json.dumps(doc))
    page = "a\n<!-- generated: fede-umls -->\nold\n<!-- end generated -->\nb\n"
    out = render_page(page, results)
    assert out.startswith("a\n<!-- generated: fede-umls -->\n| method |")
    assert (
        "| FedE | 50.00 | 25.00 | 75.00 | 50.00 | round 5 of 10 | 2.0 | "
        "[`umls-r3-fede-transe.json`](../results/umls-r3-fede-transe.json) |"
    ) in out
    assert out.endswith("<!-- end generated -->\nb\n") and "old" not in out
    cmds = render_page(
        "<!-- generated: fede-umls-commands -->\n<!-- end generated -->", results
    )
    assert "`fedgraph train $FEDGRAPH_DATA/umls`" in cmds
    with pytest.raises(ValueError, match="unknown generated block 'nope'"):
        render_page("<!-- generated: nope -->\n<!-- end generated -->", results)


def test_comm_curve_is_cumulative_through_each_evaluation():
    doc = {
        "history": [
            {"round": 2, "valid": {"mrr": 0.1}},
            {"round": 4, "valid": {"mrr": 0.2}},
        ],
        "comm_per_round": {
            str(r): {"params_up": r, "params_down": 1} for r in range(5)
        },
    }
    # rounds 0-2: (0+1)+(1+1)+(2+1) = 6; rounds 3-4: +(3+1)+(4+1) = 15
    assert comm_curve(doc) == ([6, 15], [10.0, 20.0])


def test_server_optimiser_table_counts_rounds_to_fede_best(tmp_path):
    def run(curve, test_mrr, params):
        return {
            "weighted": {"mrr": test_mrr, "hits@1": 0.1, "hits@10": 0.5},
            "best_valid": {"mrr": max(curve)},
            "best_round": 5 * (curve.index(max(curve)) + 1),
            "rounds": 5 * len(curve),
            "seconds_per_round": 20.0,
            "history": [
                {"round": 5 * (i + 1), "valid": {"mrr": m}, "train_seconds": 20 + i}
                for i, m in enumerate(curve)
            ],
            "settings": {"strategy_params": {"seed": 0, **params}},
        }

    fede = run([0.2, 0.3, 0.32], 0.31, {})
    fast = run([0.25, 0.33, 0.31], 0.3, {"server_lr": 1.0, "momentum": 0.9})
    slow = run([0.1, 0.2], 0.19, {"server_lr": 0.01})
    for name, doc in (("fede", fede), ("fedavgm", fast), ("fedadam", slow)):
        (tmp_path / f"fedlu-r3-{name}-transe.json").write_text(json.dumps(doc))
    rows = server_optimiser_table(tmp_path).splitlines()
    assert "FedE's best (32.00)" in rows[0] and len(rows) == 5
    fede_row, avgm_row, adam_row = rows[2:]
    # FedE reaches its own best at its best round; FedAvgM at round 10
    assert "| 32.00 (15) | 15 | 31.00 |" in fede_row
    assert "server_lr = 1.0, momentum = 0.9 | 33.00 (10) | 10 | 30.00 |" in avgm_row
    assert "| 20.00 (10) | not within 10 | 19.00 |" in adam_row
    assert fede_row.endswith(
        "| 15 | [`fedlu-r3-fede-transe.json`](../results/fedlu-r3-fede-transe.json) |"
    )
    assert server_optimiser_table(tmp_path / "none").startswith("FedE has not")


def test_fb15k237_rows_put_each_run_beside_its_recipes_source(tmp_path):
    def run(mrr, h1, h3, h10, dim, epochs, best, hours):
        return {
            "weighted": {"mrr": mrr, "hits@1": h1, "hits@3": h3, "hits@10": h10},
            "clients": [{"client": 0, "best_epoch": best}],
            "rounds": epochs,
            "settings": {
                "hidden_channels": dim, "max_epochs": 400,
                "train_seconds": 3600 * hours,
                "command": "fedgraph train fb15k-237 --algorithm centralized "
                "--recipe transe-libkge-fb15k-237 --out /tmp/x/transe-libkge",
            },
        }  # fmt: skip

    doc = run(0.3102, 0.2201, 0.3405, 0.4899, 128, 135, 85, 1.25)
    (tmp_path / "kge-fb15k237-transe-libkge.json").write_text(json.dumps(doc))
    table = fb15k237_table(tmp_path).splitlines()
    assert len(table) == 3  # header, rule, the one run made
    # LibKGE's TransE: 31.3 / 22.1 / 34.7 / 49.7 (the recipe's "reported")
    assert table[2] == (
        "| TransE, LibKGE's configuration | `transe-libkge-fb15k-237` | dim 128, "
        "135 of 400 epochs, best 85 | 31.02 | 22.01 | 34.05 | 48.99 | "
        "31.3 / 22.1 / 34.7 / 49.7 | -0.28 | 1.2 | [`kge-fb15k237-transe-libkge"
        ".json`](../results/kge-fb15k237-transe-libkge.json) |"
    )
    rows = {r[0]: r[1:] for r in fb15k237_verdicts(tmp_path)}
    assert rows["transe-libkge"][1:] == ("31.3", "31.02", "reproduced (Δ -0.28)")
    assert rows["complex-n3-d200-e30"][1:] == ("37.0", "not run", "not run")
    # a budgeted run: its epochs against the recipe's 100, not its own cap of 30
    n3 = run(0.3621, 0.2601, 0.3801, 0.5401, 200, 30, 28, 1.0)
    n3["settings"]["max_epochs"] = 30
    (tmp_path / "kge-fb15k237-complex-n3-d200-e30.json").write_text(json.dumps(n3))
    assert "| dim 200, 30 of 100 epochs, best 28 | 36.21 |" in fb15k237_table(tmp_path)
    rows = {r[0]: r[1:] for r in fb15k237_verdicts(tmp_path)}
    assert rows["complex-n3-d200-e30"][1:] == ("37.0", "36.21", "reproduced (Δ -0.79)")
    doc["weighted"]["mrr"] = 0.3070  # 0.6 below: outside the 0.5 points
    (tmp_path / "kge-fb15k237-transe-libkge.json").write_text(json.dumps(doc))
    verdict = dict((r[0], r[4]) for r in fb15k237_verdicts(tmp_path))
    assert verdict["transe-libkge"] == "not reproduced (Δ -0.60)"
    assert fb15k237_table(tmp_path / "none") == "No FB15k-237 run has finished yet."


def test_r3_table_puts_the_recipe_beside_fedlus_settings(tmp_path):
    def run(mrr):
        return {"weighted": {"mrr": mrr, "hits@1": 0.2, "hits@10": 0.5}}

    for name, mrr in (("fedlu-r3-fede-transe", 0.3255),
                      ("fedlu-r3-independent-transe", 0.3183),
                      ("kge-fb15k237-r3-fede-transe-libkge", 0.3401)):  # fmt: skip
        (tmp_path / f"{name}.json").write_text(json.dumps(run(mrr)))
    table, *notes = r3_table(tmp_path).split("\n\n")
    independent, fede = table.splitlines()[2:]
    assert independent.endswith("| not run | – |")
    assert fede.startswith("| FedE | 32.55 / 20.00 / 50.00 ([`fedlu-r3-fede-transe")
    assert fede.endswith("| +1.46 |")  # 34.01 - 32.55
    # FedE over Independent: FedLU's settings only (Independent's recipe run missing)
    assert notes == ["FedE's gain over Independent with FedLU's settings: +0.72 MRR."]


def _text_run(algorithm, languages, rounds, best, valid_at, mrr):
    r"""A results file of ``fedgraph train --model text``: client ``i``
    trains alone in rounds ``i + 1, i + 1 + M, …`` (the sequential order),
    46 steps each; Greek is validated at ``valid_at`` rounds with MRR
    ``mrr[k]``."""
    m = len(languages)
    greek = languages.index("el")
    history = []
    for r in range(1, rounds + 1):
        h = {"round": r, "clients": [(r - 1) % m], "train": {"count": 46.0}}
        if r in valid_at:
            k = valid_at.index(r)
            h["valid_clients"] = {str(c): {"mrr": 0.01} for c in range(m)}
            h["valid_clients"][str(greek)] = {"mrr": mrr[k]}
        history.append(h)
    clients = [
        {"client": c, "mrr": 0.05 + 0.1 * (c == greek), "hits@1": 0.025,
         "hits@10": 0.125, "n_test": 1017 if c == greek else 99}
        for c in range(m)
    ]  # fmt: skip
    return {
        "clients": clients,
        "best_round": best,
        "rounds": rounds,
        "history": history,
        "settings": {
            "algorithm": algorithm,
            "client_languages": languages,
            "command": f"fedgraph train /x/shared/datasets/dbp-5l --algorithm {algorithm}",
        },
    }


def test_fedmkgc_reduced_table_counts_greek_steps_at_the_tested_round(tmp_path):
    ind = _text_run("independent", ["el"], 5, 4, [2, 4, 5], [0.1, 0.2, 0.15])
    fed = _text_run("fedmkgc", ["en", "el"], 10, 8, [4, 8, 10], [0.12, 0.25, 0.2])
    (tmp_path / "fedmkgc-reduced-independent-el.json").write_text(json.dumps(ind))
    (tmp_path / "fedmkgc-reduced-fedmkgc-en-el.json").write_text(json.dumps(fed))
    rows = fedmkgc_reduced_table(tmp_path).splitlines()
    assert len(rows) == 2 + 3 + 2  # header, 3 published rows, our 2 runs
    assert rows[2].startswith("| FedMKGC (paper: mBERT") and "| 52.2 |" in rows[2]
    assert "| 18.3 | 47.1 | 27.4 |" in rows[3] and "| 26.3 |" in rows[4]
    # Independent: 4 Greek rounds of 46 steps by its best round 4
    assert rows[5] == (
        "| MiniLM: Independent, Greek alone | 2.50 | 12.50 | 15.00 | 1,017 | 184 (184) | "
        "4 of 5 | — | [`fedmkgc-reduced-independent-el.json`]"
        "(../results/fedmkgc-reduced-independent-el.json) |"
    )
    # FedMKGC en → el: rounds 2, 4, 6, 8 train Greek (184 steps), 8 rounds in all
    assert rows[6].startswith(
        "| MiniLM: FedMKGC, sequential en → el | 2.50 | 12.50 | 15.00 | 1,017 | 184 (368) | "
        "8 of 10 | en 5.00 |"
    )
    curves = fedmkgc_reduced_curves(tmp_path).splitlines()
    assert curves[0] == (
        "| Greek steps | MiniLM: Independent, Greek alone "
        "| MiniLM: FedMKGC, sequential en → el |"
    )
    assert curves[2:] == [
        "| 92 | 10.00 | 12.00 |",
        "| 184 | 20.00 | 25.00 |",
        "| 230 | 15.00 | 20.00 |",
    ]
    cmds = BLOCKS["fedmkgc-reduced-commands"](tmp_path)
    assert "`fedgraph train $FEDGRAPH_DATA/dbp-5l --algorithm fedmkgc`" in cmds
    # a round that trained two clients merges their steps: not attributable
    fed["history"][1]["clients"] = [0, 1]
    assert mkgc_client_steps(fed, 1, 8) is None
    assert mkgc_client_steps(fed, 1, 1) == 0
    # no results files: the published rows only
    assert len(fedmkgc_reduced_table(tmp_path / "none").splitlines()) == 5


def test_fedmkgc_languages_table_puts_each_language_beside_the_paper(tmp_path):
    langs = ["en", "fr", "es", "ja", "el"]
    ind = _text_run("independent", langs, 3, 3, [3], [0.1])
    fed = _text_run("fedmkgc", langs, 15, 15, [15], [0.1])
    for doc, mrr in ((ind, 0.25), (fed, 0.5)):
        for c in doc["clients"]:
            c["mrr"] = mrr + 0.01 * c["client"]
            c["n_split_triples"] = 4000 if langs[c["client"]] == "en" else c["n_test"]
    doc_names = (("e5-s20r3-independent", ind), ("e5-s20r3-fedmkgc", fed))
    for name, doc in doc_names:
        path = tmp_path / f"fedmkgc-reduced-{name}-en-fr-es-ja-el.json"
        path.write_text(json.dumps(doc))
    rows = fedmkgc_languages_table(tmp_path).splitlines()
    assert len(rows) == 2 + 5 * (3 + 2)  # header, per language 3 published + 2 runs
    # the paper's order: Greek first, with Table 2's and Table 3's numbers
    assert (
        rows[2]
        == "| Greek (el) | FedMKGC (paper, English titles) | 40.1 | 73.7 | 52.2 | | | |"
    )
    assert rows[3].endswith("| 18.3 | 47.1 | 27.4 | | | |")
    assert rows[4].endswith("| 22.8 | 46.5 | 26.3 | | | |")
    # Greek is client 4 of the runs: MRR 0.25 + 0.04 and 0.5 + 0.04
    assert rows[5] == (
        "| | multilingual-e5-small: Independent, alone | 2.50 | 12.50 | 29.00 | 1,017 | "
        "3 of 3 | [`fedmkgc-reduced-e5-s20r3-independent-en-fr-es-ja-el.json`]"
        "(../results/fedmkgc-reduced-e5-s20r3-independent-en-fr-es-ja-el.json) |"
    )
    assert rows[6].startswith(
        "| | multilingual-e5-small: FedMKGC, sequential en → fr → es → ja → el "
        "| 2.50 | 12.50 | 54.00 | 1,017 | 15 of 15 |"
    )
    assert rows[7].startswith("| Japanese (ja) |") and "| 15.4 |" in rows[8]
    # English (client 0) last: a test sample of 99 of its 4,000 triples
    assert rows[-5].startswith("| English (en) |") and rows[-4].startswith(
        "| | FedMKGC_OL"
    )
    assert "| 25.00 | 99 of 4,000 | 3 of 3 |" in rows[-2]
    assert "| 50.00 | 99 of 4,000 | 15 of 15 |" in rows[-1]
    cmds = BLOCKS["fedmkgc-languages-commands"](tmp_path).splitlines()
    assert [c.split("`")[1] for c in cmds] == [
        f"fedmkgc-reduced-{name}-en-fr-es-ja-el.json" for name, _ in doc_names
    ]
    # no results files: the published rows only
    assert len(fedmkgc_languages_table(tmp_path / "none").splitlines()) == 2 + 5 * 3
    assert BLOCKS["fedmkgc-languages-commands"](tmp_path / "none").startswith("Not run")


def test_fedmkgc_five_language_verdicts_compare_greek_and_japanese(tmp_path):
    langs = ["en", "fr", "es", "ja", "el"]
    ind = _text_run("independent", langs, 3, 3, [3], [0.1])
    fed = _text_run("fedmkgc", langs, 15, 15, [15], [0.1])
    # Greek (client 4) gains 1.5 points, Japanese (client 3) loses 2
    for doc, el, ja in ((ind, 0.20, 0.30), (fed, 0.215, 0.28)):
        doc["clients"][4]["mrr"], doc["clients"][3]["mrr"] = el, ja
        name = f"fedmkgc-reduced-translit-s20r3-{doc['settings']['algorithm']}"
        (tmp_path / f"{name}-en-fr-es-ja-el.json").write_text(json.dumps(doc))
    rows = fedmkgc_verdicts(tmp_path)
    # the Greek + English MiniLM row is always there ("not run" without runs)
    assert [r[0] for r in rows] == [
        "greek",
        "five-el-translit-s20r3",
        "five-ja-translit-s20r3",
    ]
    assert rows[0][3:] == ("not run", "not run")
    assert rows[1][1:] == (
        "Greek gains from the other four languages (Tables 2–3), MiniLM + romanised titles",
        "+25.9 (52.2 against 26.3); own-language titles +1.1 (27.4)",
        "+1.50 (21.50 against 20.00)",
        "reproduced (Δ +1.50)",
    )
    assert rows[2][2].startswith("+17.4 (45.4 against 28.0); own-language titles -12.6")
    assert rows[2][3:] == ("-2.00 (28.00 against 30.00)", "not reproduced (Δ -2.00)")
    # one run of the pair missing: no five-language rows
    (tmp_path / "fedmkgc-reduced-translit-s20r3-fedmkgc-en-fr-es-ja-el.json").unlink()
    assert [r[0] for r in fedmkgc_verdicts(tmp_path)] == ["greek"]


def test_fedmkgc_reduced_losses_lists_the_greek_rounds_in_order(tmp_path):
    ind = _text_run("independent", ["el"], 3, 3, [3], [0.1])
    fed = _text_run("fedmkgc", ["en", "el"], 6, 6, [6], [0.1])
    for doc, losses in ((ind, [3.0, 2.5, 2.25]), (fed, [9, 3.5, 8, 2.75, 7, 2.125])):
        for h, loss in zip(doc["history"], losses, strict=True):
            h["train"]["loss"] = loss
    (tmp_path / "fedmkgc-reduced-independent-el.json").write_text(json.dumps(ind))
    (tmp_path / "fedmkgc-reduced-fedmkgc-en-el.json").write_text(json.dumps(fed))
    # English rounds (1, 3, 5: losses 9, 8, 7) are left out
    assert fedmkgc_reduced_losses(tmp_path).splitlines() == [
        "| Greek round | 1 | 2 | 3 |",
        "|---|---|---|---|",
        "| MiniLM: Independent, Greek alone | 3.000 | 2.500 | 2.250 |",
        "| MiniLM: FedMKGC, sequential en → el (rounds 2, 4, 6) | 3.500 | 2.750 | 2.125 |",
    ]
    # a run still at its first Greek round: short rows are padded
    fed["history"] = fed["history"][:2]
    (tmp_path / "fedmkgc-reduced-fedmkgc-en-el.json").write_text(json.dumps(fed))
    assert fedmkgc_reduced_losses(tmp_path).splitlines()[3] == (
        "| MiniLM: FedMKGC, sequential en → el (rounds 2) | 3.500 |  |  |"
    )
    assert fedmkgc_reduced_losses(tmp_path / "none") == (
        "Not run yet: benchmarks/fedmkgc_reduced.sh."
    )


def test_fedmkgc_reduced_lists_each_encoders_runs(tmp_path):
    # benchmarks/fedmkgc_reduced.sh with TAG=e5- beside the untagged (MiniLM)
    # runs; no romanised-titles run (TAG=translit-): no row for it
    ind = _text_run("independent", ["el"], 5, 5, [5], [0.1])
    fed = _text_run("fedmkgc", ["en", "el"], 10, 10, [10], [0.2])
    e5_ind = _text_run("independent", ["el"], 5, 5, [5], [0.3])
    e5_fed = _text_run("fedmkgc", ["en", "el"], 10, 10, [10], [0.4])
    e5_fed["clients"][1]["mrr"] = 0.5
    for name, doc in (
        ("independent-el", ind),
        ("fedmkgc-en-el", fed),
        ("e5-independent-el", e5_ind),
        ("e5-fedmkgc-en-el", e5_fed),
    ):
        (tmp_path / f"fedmkgc-reduced-{name}.json").write_text(json.dumps(doc))  # fmt: skip
    rows = fedmkgc_reduced_table(tmp_path).splitlines()[5:]
    assert [r.split(" | ")[0] for r in rows] == [
        "| MiniLM: Independent, Greek alone",
        "| MiniLM: FedMKGC, sequential en → el",
        "| multilingual-e5-small: Independent, Greek alone",
        "| multilingual-e5-small: FedMKGC, sequential en → el",
    ]
    assert rows[3].startswith(
        "| multilingual-e5-small: FedMKGC, sequential en → el | 2.50 | 12.50 | 50.00 |"
    )
    assert rows[3].endswith(
        "| [`fedmkgc-reduced-e5-fedmkgc-en-el.json`]"
        "(../results/fedmkgc-reduced-e5-fedmkgc-en-el.json) |"
    )
    curves = fedmkgc_reduced_curves(tmp_path).splitlines()
    assert curves[0].count("multilingual-e5-small: ") == 2
    assert curves[2:] == ["| 230 | 10.00 | 20.00 | 30.00 | 40.00 |"]
    (tmp_path / "fedmkgc-reduced-translit-independent-el.json").write_text(
        json.dumps(ind)
    )
    rows = fedmkgc_reduced_table(tmp_path).splitlines()[5:]
    assert rows[2].startswith("| MiniLM + romanised titles: Independent, Greek alone |")
    assert len(rows) == 5
    cmds = BLOCKS["fedmkgc-reduced-commands"](tmp_path).splitlines()
    assert [c.split("`")[1] for c in cmds] == [
        "fedmkgc-reduced-independent-el.json",
        "fedmkgc-reduced-fedmkgc-en-el.json",
        "fedmkgc-reduced-translit-independent-el.json",
        "fedmkgc-reduced-e5-independent-el.json",
        "fedmkgc-reduced-e5-fedmkgc-en-el.json",
    ]
    # the verdict has a row per encoder whose two runs finished: the default
    # encoder's (Greek 15.00 in both), not the romanised titles' (Independent
    # only); the e5 runs, which have no reason in verdicts.json, left out
    for f in tmp_path.glob("fedmkgc-reduced-e5-*.json"):
        f.unlink()
    verdict = BLOCKS["verdict-fedmkgc"](tmp_path).splitlines()[2:]
    assert verdict[0].startswith(
        "| Greek gains from the other languages (Tables 2–3), MiniLM |"
    )
    assert "| +0.00 (15.00 against 15.00) | not reproduced (Δ +0.00) |" in verdict[0]
    assert verdict[1] == ""


@pytest.fixture(scope="module")
def script(load_script):
    return load_script("docs/generate.py")


def test_print_writes_the_named_blocks(script, tmp_path, capsys):
    assert (
        script.main(["--print", "fedmkgc-reduced-losses", "--results", str(tmp_path)])
        == 0
    )
    assert capsys.readouterr().out == (
        "<!-- fedmkgc-reduced-losses -->\n"
        "Not run yet: benchmarks/fedmkgc_reduced.sh.\n\n"
    )


def test_bad_arguments_exit_2_with_one_line(script, tmp_path, capsys):
    assert script.main(["--print", "nope", "--results", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: `--print` 'nope' is no generated block (choose from ")
    assert err.count("\n") == 1 and "fedlu-table" in err
    assert script.main(["--check", "--results", str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err == (
        f"error: `--results` {tmp_path / 'none'} is not a folder\n"
    )


def test_fedmkgc_paired_table_gives_the_difference_and_its_interval(tmp_path):
    def side(mrr):
        return {"mrr": mrr, "hits@1": 0.0, "hits@10": 0.0}

    lang = {"test_triples": 3, "a": side(0.125), "b": side(0.1), "queries": 6,
            "mrr_difference": 0.025, "ci95": [-0.0125, 0.05],
            "a_ranks_higher": 0.5, "b_ranks_higher": 1 / 3}  # fmt: skip
    doc = {"command": "python benchmarks/fedmkgc_paired.py A B --languages ja",
           "languages": {"ja": lang}}  # fmt: skip
    assert (
        fedmkgc_paired_table(tmp_path) == "Not run yet: benchmarks/fedmkgc_paired.py."
    )
    (tmp_path / "fedmkgc-paired-translit-s20r3.json").write_text(json.dumps(doc))
    rows = fedmkgc_paired_table(tmp_path).splitlines()
    assert rows[2:] == [
        "| MiniLM + romanised titles | Japanese | 12.50 | 10.00 | +2.50 | "
        "-1.25 to +5.00 | 50.0 % / 33.3 % | 6 | [`fedmkgc-paired-translit-s20r3.json`]"
        "(../results/fedmkgc-paired-translit-s20r3.json) |"
    ]
    cmds = BLOCKS["fedmkgc-paired-commands"](tmp_path)
    assert cmds == (
        "- `fedmkgc-paired-translit-s20r3.json`: "
        "`python benchmarks/fedmkgc_paired.py A B --languages ja`"
    )
