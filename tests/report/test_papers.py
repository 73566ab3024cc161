r"""The results pages (docs/papers) are what ``python -m fedgraph.report.papers``
generates from docs/results/*.json, and the generator reads the files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fedgraph.report import papers

ROOT = Path(__file__).resolve().parents[2]


def test_pages_and_figures_agree_with_the_results_files(tmp_path):
    pytest.importorskip("matplotlib")
    stale = papers.stale(scratch=tmp_path)
    assert not stale, (
        "docs/papers is out of date with docs/results/*.json "
        f"({'; '.join(stale)}): run `python -m fedgraph.report.papers`"
    )


def test_every_block_and_figure_a_page_names_exists():
    for page in (ROOT / "docs" / "papers").glob("*.md"):
        text = page.read_text()
        for name in papers._BLOCK.findall(text):
            assert name[1] in papers.BLOCKS
        for ref in text.split("](img/")[1:]:
            assert (page.parent / "img" / ref.split(")")[0]).is_file()


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
    out = papers.render_page(page, results)
    assert out.startswith("a\n<!-- generated: fede-umls -->\n| method |")
    assert (
        "| FedE | 50.00 | 25.00 | 75.00 | 50.00 | round 5 of 10 | 2.0 | "
        "[`umls-r3-fede-transe.json`](../results/umls-r3-fede-transe.json) |"
    ) in out
    assert out.endswith("<!-- end generated -->\nb\n") and "old" not in out
    cmds = papers.render_page(
        "<!-- generated: fede-umls-commands -->\n<!-- end generated -->", results
    )
    assert "`fedgraph train $FEDGRAPH_DATA/umls`" in cmds
    with pytest.raises(ValueError, match="unknown generated block 'nope'"):
        papers.render_page("<!-- generated: nope -->\n<!-- end generated -->", results)


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
    assert papers.comm_curve(doc) == ([6, 15], [10.0, 20.0])


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
    rows = papers.server_optimiser_table(tmp_path).splitlines()
    assert "FedE's best (32.00)" in rows[0] and len(rows) == 5
    fede_row, avgm_row, adam_row = rows[2:]
    # FedE reaches its own best at its best round; FedAvgM at round 10
    assert "| 32.00 (15) | 15 | 31.00 |" in fede_row
    assert "server_lr = 1.0, momentum = 0.9 | 33.00 (10) | 10 | 30.00 |" in avgm_row
    assert "| 20.00 (10) | not within 10 | 19.00 |" in adam_row
    assert fede_row.endswith(
        "| 15 | [`fedlu-r3-fede-transe.json`](../results/fedlu-r3-fede-transe.json) |"
    )
    assert papers.server_optimiser_table(tmp_path / "none").startswith("FedE has not")


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
    rows = papers.fedmkgc_reduced_table(tmp_path).splitlines()
    assert len(rows) == 2 + 3 + 2  # header, 3 published rows, our 2 runs
    assert rows[2].startswith("| FedMKGC (paper: mBERT") and "| 52.2 |" in rows[2]
    assert "| 18.3 | 47.1 | 27.4 |" in rows[3] and "| 26.3 |" in rows[4]
    # Independent: 4 Greek rounds of 46 steps by its best round 4
    assert rows[5] == (
        "| Independent, Greek alone | 2.50 | 12.50 | 15.00 | 1,017 | 184 (184) | "
        "4 of 5 | — | [`fedmkgc-reduced-independent-el.json`]"
        "(../results/fedmkgc-reduced-independent-el.json) |"
    )
    # FedMKGC en → el: rounds 2, 4, 6, 8 train Greek (184 steps), 8 rounds in all
    assert rows[6].startswith(
        "| FedMKGC, sequential en → el | 2.50 | 12.50 | 15.00 | 1,017 | 184 (368) | "
        "8 of 10 | en 5.00 |"
    )
    curves = papers.fedmkgc_reduced_curves(tmp_path).splitlines()
    assert curves[0] == (
        "| Greek steps | Independent, Greek alone | FedMKGC, sequential en → el |"
    )
    assert curves[2:] == [
        "| 92 | 10.00 | 12.00 |",
        "| 184 | 20.00 | 25.00 |",
        "| 230 | 15.00 | 20.00 |",
    ]
    cmds = papers.BLOCKS["fedmkgc-reduced-commands"](tmp_path)
    assert "`fedgraph train $FEDGRAPH_DATA/dbp-5l --algorithm fedmkgc`" in cmds
    # a round that trained two clients merges their steps: not attributable
    fed["history"][1]["clients"] = [0, 1]
    assert papers.mkgc_client_steps(fed, 1, 8) is None
    assert papers.mkgc_client_steps(fed, 1, 1) == 0
    # no results files: the published rows only
    assert len(papers.fedmkgc_reduced_table(tmp_path / "none").splitlines()) == 5


def test_fedmkgc_reduced_losses_lists_the_greek_rounds_in_order(tmp_path):
    ind = _text_run("independent", ["el"], 3, 3, [3], [0.1])
    fed = _text_run("fedmkgc", ["en", "el"], 6, 6, [6], [0.1])
    for doc, losses in ((ind, [3.0, 2.5, 2.25]), (fed, [9, 3.5, 8, 2.75, 7, 2.125])):
        for h, loss in zip(doc["history"], losses, strict=True):
            h["train"]["loss"] = loss
    (tmp_path / "fedmkgc-reduced-independent-el.json").write_text(json.dumps(ind))
    (tmp_path / "fedmkgc-reduced-fedmkgc-en-el.json").write_text(json.dumps(fed))
    # English rounds (1, 3, 5: losses 9, 8, 7) are left out
    assert papers.fedmkgc_reduced_losses(tmp_path).splitlines() == [
        "| Greek round | 1 | 2 | 3 |",
        "|---|---|---|---|",
        "| Independent, Greek alone | 3.000 | 2.500 | 2.250 |",
        "| FedMKGC, sequential en → el (rounds 2, 4, 6) | 3.500 | 2.750 | 2.125 |",
    ]
    # a run still at its first Greek round: short rows are padded
    fed["history"] = fed["history"][:2]
    (tmp_path / "fedmkgc-reduced-fedmkgc-en-el.json").write_text(json.dumps(fed))
    assert papers.fedmkgc_reduced_losses(tmp_path).splitlines()[3] == (
        "| FedMKGC, sequential en → el (rounds 2) | 3.500 |  |  |"
    )
    assert papers.fedmkgc_reduced_losses(tmp_path / "none") == (
        "Not run yet: benchmarks/fedmkgc_reduced.sh."
    )
