r"""The runs behind FedE's own claims (``docs/papers/fede-claims.md``) and
FedE's published numbers: ``fede-DATA-MODEL-SETTING.json`` results files
(``fedgraph train --protocol fede``; ``fede-DATA-MODEL-fusion.json`` from
``fedgraph fuse``; a second run of the same command is
``fede-DATA-MODEL-SETTING-repeat.json``), ``published/fede.json``, and the
comparisons the tables and verdicts share."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from generator.files import published_table

DATASETS = {"fb15k237-fed3": "FB15k-237-Fed3", "nell995-fed3": "NELL-995-Fed3"}
MODELS = {
    "transe": "TransE",
    "distmult": "DistMult",
    "complex": "ComplEx",
    "rotate": "RotatE",
}
SETTINGS = {"single": "Single", "entire": "Entire", "fede": "FedE"}
METRICS = ("mrr", "hits@1", "hits@5", "hits@10")

#: a run's client rows in FedE's Tables 3-4: (MRR, Hits@1, Hits@5, Hits@10).
Rows = list[list[float]]


def published_clients() -> dict[str, dict[str, dict[str, Rows]]]:
    r"""FedE Tables 3 (FB15k-237-Fed3) and 4 (NELL-995-Fed3): data set → KGE
    → setting → per client (MRR, Hits@1, Hits@5, Hits@10)."""
    return published_table("fede", "clients")


def published_gain() -> dict[str, float]:
    r"""FedE's text: RotatE FedE's relative MRR gain over Single, averaged
    over clients (%)."""
    return published_table("fede", "rotate_gain_over_single")


def published_fusion() -> dict[str, list[float]]:
    r"""FedE Table 5 (average MRR; the table names no model, FedE's fusion
    script runs TransE): data set → (w/o fusion, w/ fusion)."""
    return published_table("fede", "fusion")


def results_name(data: str, model: str, setting: str) -> str:
    r"""The results file of a run under ``docs/results/``."""
    return f"fede-{data}-{model}-{setting}.json"


def _run_folder(data: str, model: str, setting: str) -> Path:
    r"""``benchmarks/fede_claims.sh``'s ``results.json`` of a run."""
    folder = Path(f"{data}-{model}-{'fede' if setting == 'fusion' else setting}")
    return folder / ("fusion" if setting == "fusion" else "") / "results.json"


def stage_run_folders(runs: Path, out: Path) -> list[Path]:
    r"""Copies the ``results.json`` of each finished run of
    ``benchmarks/fede_claims.sh`` under ``runs`` to ``out`` under its
    results-file name, as a finished run is copied to ``docs/results/``."""
    written = []
    for data in DATASETS:
        for model in MODELS:
            for setting in (*SETTINGS, "fusion"):
                source = runs / _run_folder(data, model, setting)
                if source.is_file():
                    target = out / results_name(data, model, setting)
                    written.append(Path(shutil.copyfile(source, target)))
    return written


def load(results: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    r"""``{(data, model, setting): results doc}`` for every file present
    (setting ``"fusion"``: the fusion results; ``"SETTING-repeat"``: the
    same command run again)."""
    out = {}
    for data in DATASETS:
        for model in MODELS:
            for setting in (*SETTINGS, "fusion", *(f"{s}-repeat" for s in SETTINGS)):
                path = results / results_name(data, model, setting)
                if path.is_file():
                    out[(data, model, setting)] = json.loads(path.read_text())
    return out


def client_mean(doc: dict[str, Any], metric: str) -> float:
    r"""The unweighted mean of ``metric`` over the run's clients."""
    return sum(c[metric] for c in doc["clients"]) / len(doc["clients"])


def pct(x: float) -> str:
    return f"{100 * x:.2f}"


def delta(ours: float, published: float) -> str:
    return f"{100 * (ours - published):+.2f}"


def relative_gains(
    single: dict[str, Any], fede: dict[str, Any], pub_s: list, pub_f: list
) -> list[tuple[int, float, float]]:
    r"""``(client, FedE's relative test-MRR gain over Single ours (%), the same
    in FedE's tables (%))`` per client."""
    out = []
    for cs, cf in zip(single["clients"], fede["clients"], strict=True):
        k = int(cs["client"])
        ours = 100 * (cf["mrr"] / cs["mrr"] - 1)
        out.append((k, ours, 100 * (pub_f[k][0] / pub_s[k][0] - 1)))
    return out


def mean_gains(gains: list[tuple[int, float, float]]) -> tuple[float, float]:
    r"""The mean over clients of :func:`_relative_gains`: (ours, FedE's tables)."""
    return (
        sum(g for _, g, _ in gains) / len(gains),
        sum(p for _, _, p in gains) / len(gains),
    )


def pairs(runs: dict, base: str) -> Iterator[tuple]:
    r"""``(data, model, base run, FedE run, FedE's tables' base rows, FedE's
    tables' FedE rows)`` for every data set and model with both results, in
    the tables' order."""
    for data in DATASETS:
        for model in MODELS:
            first, fede = runs.get((data, model, base)), runs.get((data, model, "fede"))
            if first is not None and fede is not None:
                pub = published_clients()[data][model]
                yield data, model, first, fede, pub[base], pub["fede"]


def entire_means(
    entire: dict[str, Any], fede: dict[str, Any], pub_e: list, pub_f: list
) -> tuple[float, float, float, float, int, int]:
    r"""``(Entire, FedE, FedE's tables' Entire, FedE's tables' FedE)`` test
    MRR as the mean over clients, and the clients where FedE beats Entire
    (ours, FedE's tables)."""
    pairs = zip(entire["clients"], fede["clients"], strict=True)
    wins = sum(cf["mrr"] > ce["mrr"] for ce, cf in pairs)
    pub_wins = sum(f[0] > e[0] for e, f in zip(pub_e, pub_f, strict=True))
    return (
        client_mean(entire, "mrr"),
        client_mean(fede, "mrr"),
        sum(c[0] for c in pub_e) / len(pub_e),
        sum(c[0] for c in pub_f) / len(pub_f),
        wins,
        pub_wins,
    )
