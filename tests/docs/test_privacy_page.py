r"""The measured privacy table (docs/papers/privacy.md) is generated from the
``PREFIX-NAME.json`` files that benchmarks/privacy_table.py collects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from generator.files import RESULTS
from generator.pages import BLOCKS

from fedgraph.report.privacy import privacy_files, privacy_table

PREFIX = "umls-r3-privacy"


def _audit(mean_f1, mean_auc, baseline_f1, known_auc=None, command="fedgraph audit"):
    report = {
        "mean": {"f1": mean_f1, "auc": mean_auc},
        "baseline": {"f1": baseline_f1, "auc": 0.5},
        "command": command,
    }
    if known_auc is not None:
        report["knowledge_only"] = {"auc": known_auc}
    return report


def _doc(mrr, up, down, secs, triple, membership, dp=None):
    res = {
        "weighted": {"mrr": mrr},
        "comm": {"bytes_up": up, "bytes_down": down},
        "seconds_per_round": secs,
        "settings": {"command": "fedgraph train --data /x/shared/datasets/umls"},
        "privacy": {"settings": {}} if dp is None else {"settings": {}, "dp": dp},
    }
    audits = {"triple-inference": triple}
    if membership is not None:
        audits["membership"] = membership
    return {"results": res, "audits": audits}


def _write(folder: Path, name: str, doc: dict) -> None:
    (folder / f"{PREFIX}-{name}.json").write_text(json.dumps(doc))


@pytest.fixture
def results(tmp_path):
    # written out of order: the table follows fede, dp-eps1, ..., fedr-secagg
    _write(
        tmp_path,
        "fedr",
        _doc(0.7, 500_000, 500_000, 3.0,
             _audit(0.25, 0.5, 0.5, known_auc=float("nan")), _audit(0.9, 0.5, 0.8)),
    )  # fmt: skip
    _write(
        tmp_path,
        "fede",
        _doc(0.6, 3_000_000, 1_000_000, 2.0,
             _audit(0.75, 0.9, 0.5, known_auc=0.6), _audit(1.0, 1.0, 0.8)),
    )  # fmt: skip
    dp = {str(c): {"epsilon": eps} for c, eps in enumerate((4.0, 4.0, 0.5))}
    _write(
        tmp_path,
        "dp-eps4",
        _doc(0.05, 3_000_000, 1_000_000, 1.0,
             _audit(0.45, 0.55, 0.5, known_auc=0.52), None, dp=dp),
    )  # fmt: skip
    return tmp_path


def test_rows_in_order_with_hand_computed_cells(results):
    lines = privacy_table(results, PREFIX).splitlines()
    assert lines[0].startswith("| setting | test MRR | triple F1 | triple AUC |")
    assert lines[0].count("|") == 13 and lines[1] == "|" + "---|" * 12
    link = f"../results/{PREFIX}"
    # FedE: 3 MB up + 1 MB down = 4.00 MB, the reference of both ratios
    assert lines[2] == (
        f"| [FedE, no defence]({link}-fede.json) | 0.6000 | 0.750 | 0.900 | 0.600 "
        "| 1.000 | 1.000 | 4.00 | 1.00 | 2.0 | 1.00 |  |"
    )
    # DP: same bytes, half the seconds; ε per client; no membership audit: –
    assert lines[3] == (
        f"| [FedE + DP ε=4]({link}-dp-eps4.json) | 0.0500 | 0.450 | 0.550 | 0.520 "
        "| – | – | 4.00 | 1.00 | 1.0 | 0.50 | 4/4/0.5 |"
    )
    # FedR: 1 MB = 0.25× FedE's, 3 s = 1.5× FedE's; an attack without rows is nan
    assert lines[4] == (
        f"| [FedR]({link}-fedr.json) | 0.7000 | 0.250 | 0.500 | nan "
        "| 0.900 | 0.500 | 1.00 | 0.25 | 3.0 | 1.50 |  |"
    )
    # the baselines are read from the audit reports (the runs agree on them)
    assert lines[5] == (
        "| random guess |  | 0.500 | 0.500 |  | 0.800 | 0.500 |  |  |  |  |  |"
    )
    assert len(lines) == 6  # the five settings without a file are left out


def test_baselines_that_differ_between_runs_are_all_shown(results):
    doc = json.loads((results / f"{PREFIX}-fedr.json").read_text())
    doc["audits"]["membership"]["baseline"]["f1"] = 0.7
    _write(results, "fedr", doc)
    last = privacy_table(results, PREFIX).splitlines()[-1]
    assert "| 0.800 / 0.700 | 0.500 |" in last


def test_without_fede_the_ratios_are_left_blank(results):
    (results / f"{PREFIX}-fede.json").unlink()
    row = privacy_table(results, PREFIX).splitlines()[2]
    assert row.startswith("| [FedE + DP ε=4]") and "| 4.00 | – | 1.0 | – |" in row


def test_no_file_renders_one_line(tmp_path):
    assert privacy_table(tmp_path, "fedlu-r3-privacy") == (
        "Not run yet: benchmarks/privacy_fedlu_r3.sh"
    )
    assert "no `other-*.json` results file" in privacy_table(tmp_path, "other")
    for block in ("privacy-r3", "privacy-r3-commands", "privacy-umls"):
        assert BLOCKS[block](tmp_path).startswith("Not run yet: benchmarks/")


def test_commands_block_lists_the_run_and_its_audits(results):
    assert privacy_files(results, PREFIX) == [
        f"{PREFIX}-{n}.json" for n in ("fede", "dp-eps4", "fedr")
    ]
    out = BLOCKS["privacy-umls-commands"](results).splitlines()
    assert len(out) == 3
    assert out[0] == (
        f"- `{PREFIX}-fede.json`: `fedgraph train $FEDGRAPH_DATA/umls`; "
        "`fedgraph audit`; `fedgraph audit`"
    )
    assert out[1].endswith("train $FEDGRAPH_DATA/umls`; `fedgraph audit`")


def test_umls_block_renders_the_recorded_runs():
    out = BLOCKS["privacy-umls"](RESULTS).splitlines()
    assert len(out) == 2 + 8 + 1
    assert out[2] == (
        "| [FedE, no defence](../results/umls-r3-privacy-fede.json) | 0.6730 "
        "| 0.815 | 0.970 | 0.601 | 1.000 | 1.000 | 11.55 | 1.00 | 1.4 | 1.00 |  |"
    )
    assert "| 0.0482 | 0.500 | 0.557 | 0.533 |" in out[3] and out[3].endswith(
        "| 1/1/1 |"
    )
    assert "| 18.88 | 1.63 |" in out[6] and "| 0.6989 |" in out[9]
    assert out[10] == (
        "| random guess |  | 0.500 | 0.500 |  | 0.914 | 0.500 |  |  |  |  |  |"
    )


def test_benchmark_collects_the_runs_and_prints_the_table(
    tmp_path, load_script, monkeypatch, capsys
):
    script = load_script("benchmarks/privacy_table.py")
    work = tmp_path / "work"
    for name, mrr in (("fede", 0.6), ("fedr", 0.7)):
        (work / name).mkdir(parents=True)
        doc = _doc(mrr, 1_000_000, 1_000_000, 1.0, _audit(0.5, 0.5, 0.5), None)
        (work / name / "results.json").write_text(json.dumps(doc["results"]))
        audit = work / name / "audit-triple-inference.json"
        audit.write_text(json.dumps(doc["audits"]["triple-inference"]))
    (work / "secagg").mkdir()  # unfinished: no results.json
    monkeypatch.chdir(tmp_path)
    assert script.main([str(work), PREFIX]) == 0
    written = sorted(p.name for p in (tmp_path / "docs" / "results").iterdir())
    assert written == [f"{PREFIX}-fede.json", f"{PREFIX}-fedr.json"]
    doc = json.loads((tmp_path / "docs" / "results" / written[0]).read_text())
    assert doc["results"]["weighted"] == {"mrr": 0.6}
    assert list(doc["audits"]) == ["triple-inference"]
    printed = capsys.readouterr().out.strip()
    assert printed == privacy_table(tmp_path / "docs" / "results", PREFIX)
    assert "| [FedR](../results/umls-r3-privacy-fedr.json) | 0.7000 |" in printed
    assert script.main([str(tmp_path / "nope"), PREFIX]) == 2
    assert "nope is not a folder" in capsys.readouterr().err
