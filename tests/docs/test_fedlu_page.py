r"""The FedLU and FedS tables of the results pages (docs/papers/fedlu.md,
feds.md) from synthetic results files."""

from __future__ import annotations

import json
from pathlib import Path

from generator.fedlu import link_prediction_table, local_start, unlearning_table
from generator.feds import feds_table


def _write(path: Path, doc: dict) -> None:
    path.write_text(json.dumps(doc))


def test_tables_from_synthetic_results(tmp_path):
    _write(
        tmp_path / "fedlu-c3-fedlu-transe.json",
        {
            "weighted": {"mrr": 0.3371},
            "weighted_global": {"mrr": 0.3},
            "clients": [],
            "best_round": 40,
            "rounds": 55,
        },
    )
    _write(
        tmp_path / "fedlu-r3-independent-transe.json",
        {
            "weighted": {"mrr": 0.33},
            "clients": [
                {"epochs": 20, "best_epoch": 15},
                {"epochs": 30, "best_epoch": 10},
            ],
        },
    )
    rows = link_prediction_table(tmp_path).splitlines()[2:]
    # R3 before C3; only runs with a file; local and global rows for FedLU
    assert rows == [
        "| R3 | Independent | 33.00 | 31.96 | +1.04 | epochs 15/10 of 20/30 | "
        "[`fedlu-r3-independent-transe.json`](../results/fedlu-r3-independent-transe.json) |",
        "| C3 | FedLU local, distillation from round 1 | 33.71 | 33.71 | +0.00 | "
        "round 40 of 55 | [`fedlu-c3-fedlu-transe.json`](../results/fedlu-c3-fedlu-transe.json) |",
        "| C3 | FedLU global, distillation from round 1 | 30.00 | 33.30 | -3.30 | "
        "round 40 of 55 | [`fedlu-c3-fedlu-transe.json`](../results/fedlu-c3-fedlu-transe.json) |",
    ]
    m = {"hits@1": 0.1, "mrr": 0.25}
    _write(
        tmp_path / "fedlu-c3-fedlu-unlearn-transe.json",
        {
            "raw": {
                "local": {"forget": m, "test": m},
                "global": {"forget": m, "test": m},
            }
        },
    )
    unlearn = unlearning_table(tmp_path).splitlines()
    assert unlearn[2] == (
        "| raw | 10.00 / 25.00 | 10.00 / 25.00 | 10.00 / 25.00 | 10.00 / 25.00 "
        "| 38.86 / 21.27 |"
    )
    assert unlearn[3].count("not run") == 4 and unlearn[4].count("not run") == 4


def _feds_run(mrrs, comm, best, hits10=0.5):
    r"""A results file with validation MRRs every 5 rounds and ``comm``
    parameters per round (up + down split in half)."""
    rounds = 5 * len(mrrs)
    return {
        "weighted": {"mrr": mrrs[best // 5 - 1], "hits@10": hits10},
        "best_round": best,
        "rounds": rounds,
        "history": [
            {"round": 5 * (i + 1), "valid": {"mrr": m}} for i, m in enumerate(mrrs)
        ],
        "comm_per_round": {
            str(r): {"params_up": comm // 2, "params_down": comm // 2}
            for r in range(1, rounds + 1)
        },
    }


def test_feds_table_from_synthetic_results(tmp_path):
    assert feds_table(tmp_path) == "FedEP has not been run."
    _write(
        tmp_path / "fedlu-r10-fedep-transe.json", _feds_run([0.2, 0.3, 0.35], 100, 15)
    )
    # FedS: half the traffic per round; reaches 99 % of FedEP's best validation
    # (0.3465) at round 15 and converges at round 20
    feds = _feds_run([0.25, 0.33, 0.347, 0.352], 50, 20)
    _write(tmp_path / "fedlu-r10-feds-transe.json", feds)
    rows = feds_table(tmp_path).splitlines()
    assert rows[2].startswith(
        "| FedEP | 35.00 | 100.0 % | 50.00 | 15 / 15 | 1,500 | 1.00× | 1.00× | 1.00× |"
    )
    # P@CG = 20*50 / 15*100; P@99: 15*50 / 15*100; P@98 (0.343): same rounds
    assert rows[3].startswith(
        "| FedS | 35.20 | 100.6 % | 50.00 | 20 / 20 | 1,000 | 0.67× | 0.50× | 0.50× |"
    )
    assert rows[3].endswith(
        "| 35.41 / 0.52× / 0.44× | [`fedlu-r10-feds-transe.json`]"
        "(../results/fedlu-r10-feds-transe.json) |"
    )


def test_fedlu_start_read_from_params_then_repr():
    def doc(**settings):
        return {"settings": settings}

    glob, own = (
        ", local tables from the global rows",
        ", local tables' own random start",
    )
    # recorded parameters decide (over the repr)
    assert (
        local_start(
            doc(
                strategy="FedLU(local_init='global')",
                strategy_params={"local_init": "own"},
            )
        )
        == own
    )
    assert (
        local_start(
            doc(
                strategy="FedLU(mu_distill=2.0)",
                strategy_params={"local_init": "global"},
            )
        )
        == glob
    )
    # the repr only; neither: the run's own random rows
    assert local_start(doc(strategy="FedLU(local_init='global')")) == glob
    assert local_start(doc(strategy="FedLU(mu_distill=2.0)")) == own
    assert local_start(doc(strategy="FedE(seed=0)")) == ""


def test_ablation_rows_are_labelled_as_such(tmp_path):
    _write(
        tmp_path / "fedlu-r3-fedlu-gated-ownrel-transe.json",
        {
            "weighted": {"mrr": 0.33},
            "weighted_global": {"mrr": 0.34},
            "clients": [],
            "best_round": 30,
            "rounds": 45,
            "settings": {
                "strategy": "FedLU(global_relations='own')",
                "strategy_params": {"local_init": "global", "global_relations": "own"},
            },
        },
    )
    rows = link_prediction_table(tmp_path).splitlines()[2:]
    assert [r.split(" | ")[1] for r in rows] == [
        f"FedLU {m}, gated distillation, ablation: global model's own relations, "
        "local tables from the global rows"
        for m in ("local", "global")
    ]
