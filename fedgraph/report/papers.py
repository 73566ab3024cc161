r"""The results pages of the documentation, generated from ``docs/results/*.json``.

    python -m fedgraph.report.papers            # rewrite docs/papers/*.md blocks + figures
    python -m fedgraph.report.papers --check    # exit 1 when a page or figure is stale

Each page under ``docs/papers/`` is hand-written prose with generated blocks
between ``<!-- generated: NAME -->`` and ``<!-- end generated -->``; the
block's text is :data:`BLOCKS` ``[NAME](results)``. Figures are SVG files in
``docs/papers/img/`` drawn by :data:`FIGURES`. Published numbers are quoted
from the papers (FedLU Table 1 and §5.3, FedS Tables II–III, FedAlign Table 4,
R-GCN Table 3); every other number is read from the results files.
"""

from __future__ import annotations

import argparse
import glob
import json
import re
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fedgraph.report._io import LINK, atomic_write_text
from fedgraph.report._io import load_json as _load
from fedgraph.report.privacy import not_run, privacy_files, privacy_table

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results"
PAGES = ROOT / "docs" / "papers"

# ----------------------------------------------------------------- FedLU

#: FedLU Table 1, TransE, weighted test MRR (%).
PUBLISHED = {
    "r3": {
        "independent": 31.96,
        "centralized": 32.44,
        "fede": 32.52,
        "fedprox": 32.38,
        "fedec": 32.40,
        "fedlu local": 33.12,
        "fedlu global": 34.75,
    },
    "c3": {
        "independent": 31.44,
        "centralized": 32.65,
        "fede": 32.66,
        "fedprox": 32.50,
        "fedec": 32.99,
        "fedlu local": 33.71,
        "fedlu global": 33.30,
    },
}

#: results-file method name → (row label, published column, which weighted
#: block: ``weighted`` = the local model, ``weighted_global`` = FedLU's global).
ROWS = [
    ("independent", "Independent", "independent", "weighted"),
    ("independent-runlocal", "Independent, FedLU's `run_local.sh` schedule",
     "independent", "weighted"),
    ("centralized", "Centralized", "centralized", "weighted"),
    ("fede", "FedE", "fede", "weighted"),
    ("fedprox", "FedProx", "fedprox", "weighted"),
    ("fedprox-mean", "FedProx, proximal term's mean over entities", "fedprox",
     "weighted"),
    ("fedec", "FedEC", "fedec", "weighted"),
] + [
    (method, f"FedLU {model}, {schedule}", f"fedlu {model}", block)
    for method, schedule in (("fedlu", "distillation from round 1"),
                             ("fedlu-gated", "gated distillation"),
                             ("fedlu-gated-globalinit", "gated distillation"),
                             ("fedlu-gated-ownrel",
                              "gated distillation, ablation: global model's own "
                              "relations"))
    for model, block in (("local", "weighted"), ("global", "weighted_global"))
]  # fmt: skip

#: FedLU §5.3 (C3, TransE, local model, Hits@1 %): (forget, test).
PUBLISHED_UNLEARN = {
    "raw": (38.86, 21.27),
    "retrained": (21.10, 20.86),
    "unlearned": (13.23, 21.04),
}

#: FedS Table II/III (TransE, FB15k-237-R10): test MRR (%), P@CG, P@99.
PUBLISHED_FEDS = {"fedep": (35.17, 1.0, 1.0), "feds": (35.41, 0.52, 0.44)}


def _start(doc: dict[str, Any]) -> str:
    r"""Where a FedLU run's local tables started: ``local_init`` from the
    strategy's recorded parameters (``settings.strategy_params``), else parsed
    from the strategy's repr; a run that records neither used its own random
    rows (the only start fedgraph's FedLU then had)."""
    settings = doc.get("settings", {})
    strategy = str(settings.get("strategy", ""))
    if not strategy.startswith("FedLU("):
        return ""
    params = settings.get("strategy_params")
    if params is not None:
        init = params.get("local_init", "own")
    else:
        init = "global" if "local_init='global'" in strategy else "own"
    if init == "global":
        return ", local tables from the global rows"
    return ", local tables' own random start"


def _length(doc: dict[str, Any]) -> str:
    r"""Rounds (federated) or epochs per client (baselines) of a run."""
    clients = doc.get("clients", [])
    if "best_round" in doc:
        return f"round {doc['best_round']} of {doc['rounds']}"
    if clients and "epochs" in clients[0]:
        epochs = "/".join(str(c["epochs"]) for c in clients)
        best = "/".join(str(c["best_epoch"]) for c in clients)
        return f"epochs {best} of {epochs}"
    return f"{doc.get('rounds', '?')} rounds"


def _fedlu_files(results: Path) -> list[tuple[str, str, str, str, str, dict]]:
    out = []
    for data in ("r3", "c3"):
        for method, label, column, block in ROWS:
            name = f"fedlu-{data}-{method}-transe.json"
            doc = _load(results / name)
            if doc is not None and block in doc:
                out.append((data, method, label, column, block, doc))
    return out


def link_prediction_table(results: Path, link: str = "results/") -> str:
    r"""Markdown: every finished run of :data:`ROWS` on R3 and C3 against the
    published number (runs without a results file are left out)."""
    lines = [
        "| data | run | ours | published | Δ | best / run length | results file |",
        "|---|---|---|---|---|---|---|",
    ]
    for data, method, label, column, block, doc in _fedlu_files(results):
        name = f"fedlu-{data}-{method}-transe.json"
        ours = 100 * doc[block]["mrr"]
        pub = PUBLISHED[data][column]
        lines.append(
            f"| {data.upper()} | {label}{_start(doc)} | {ours:.2f} | {pub:.2f} | "
            f"{ours - pub:+.2f} | {_length(doc)} | [`{name}`]({link}{name}) |"
        )
    return "\n".join(lines)


def unlearning_table(results: Path) -> str:
    r"""Markdown: FedLU §5.3's table (Hits@1 / MRR, %) from the C3 unlearning
    results, with the published local Hits@1."""
    doc = _load(results / "fedlu-c3-fedlu-unlearn-transe.json")
    lines = [
        "| model | local forget ↓ | local test | global forget ↓ | global test "
        "| FedLU §5.3, local Hits@1 (forget / test) |",
        "|---|---|---|---|---|---|",
    ]
    for key, label in (
        ("raw", "raw"),
        ("retrained", "re-trained on the retained data"),
        ("unlearned", "unlearned"),
    ):
        cells = []
        for which in ("local", "global"):
            for split in ("forget", "test"):
                m = (doc or {}).get(key, {}).get(which, {}).get(split)
                cells.append(
                    "not run"
                    if m is None
                    else f"{100 * m['hits@1']:.2f} / {100 * m['mrr']:.2f}"
                )
        forget, test = PUBLISHED_UNLEARN[key]
        lines.append(
            f"| {label} | " + " | ".join(cells) + f" | {forget:.2f} / {test:.2f} |"
        )
    return "\n".join(lines)


def _ratio(x: float | None) -> str:
    return "not reached" if x is None else f"{x:.2f}×"


def feds_table(results: Path, link: str = "results/") -> str | None:
    r"""Markdown: FedS against FedEP on R10 (FedS §IV-B's metrics, relative to
    FedEP), with the published numbers; ``None`` until FedEP's run is there."""
    from fedgraph.eval.feds_metrics import feds_metrics

    base = _load(results / "fedlu-r10-fedep-transe.json")
    if base is None:
        return None
    lines = [
        "| R10, TransE | test MRR | vs FedEP | Hits@10 | R@CG (best / last round) "
        "| params up+down to R@CG | P@CG | P@99 | P@98 | published MRR / P@CG / P@99 "
        "| results file |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for method, label in (("fedep", "FedEP"), ("feds", "FedS")):
        name = f"fedlu-r10-{method}-transe.json"
        doc = _load(results / name)
        if doc is None:
            continue
        m = feds_metrics(doc, base)
        pub = PUBLISHED_FEDS[method]
        lines.append(
            f"| {label} | {100 * m['mrr@cg']:.2f} | "
            f"{100 * m['mrr@cg_vs_baseline']:.1f} % | "
            f"{100 * doc['weighted']['hits@10']:.2f} | {m['r@cg']} / {doc['rounds']} | "
            f"{m['params@cg']['method']:,} | {_ratio(m['p@cg'])} | "
            f"{_ratio(m['p@99'])} | {_ratio(m['p@98'])} | "
            f"{pub[0]:.2f} / {pub[1]:.2f}× / {pub[2]:.2f}× | "
            f"[`{name}`]({link}{name}) |"
        )
    return "\n".join(lines)


def fedlu_tables(results: Path, link: str = "results/") -> list[str]:
    r"""The FedLU link-prediction, unlearning and (once FedEP ran) FedS tables."""
    out = [link_prediction_table(results, link), unlearning_table(results)]
    feds = feds_table(results, link)
    return out if feds is None else [*out, feds]


# -------------------------------------------------------- commands, curves


def recorded_command(doc: dict[str, Any]) -> str:
    r"""The command a results file records, with the machine's data folder
    written ``$FEDGRAPH_DATA`` and a folder in the system's temporary folder
    written ``runs/`` and its last name."""
    cmd = str((doc.get("settings") or {}).get("command") or "")
    cmd = re.sub(r"\S*/shared/datasets", "$FEDGRAPH_DATA", cmd)
    cmd = re.sub(r"/tmp/(?:[^\s/]+/)*([^\s/]+)", r"runs/\1", cmd)
    return re.sub(r"\.devdata/", "$FEDGRAPH_DATA/fedlu-fb15k-237/", cmd)


def recorded_commands(doc: dict[str, Any]) -> list[str]:
    r"""The commands a results file records: its run's, or for a privacy
    benchmark's file (``{"results": ..., "audits": ...}``, see
    :mod:`fedgraph.report.privacy`) the run's and then each audit's."""
    if "results" not in doc or "audits" not in doc:
        return [c for c in [recorded_command(doc)] if c]
    cmds = [recorded_command(doc["results"])]
    cmds += [recorded_command({"settings": a}) for a in doc["audits"].values()]
    return [c for c in cmds if c]


def commands_list(results: Path, names: Sequence[str]) -> str:
    r"""Markdown: one bullet per results file with the commands it records."""
    lines = []
    for name in dict.fromkeys(names):
        doc = _load(results / name)
        if doc is None:
            continue
        cmds = "; ".join(f"`{c}`" for c in recorded_commands(doc))
        lines.append(f"- `{name}`: {cmds or 'not recorded'}")
    return "\n".join(lines)


def valid_curve(doc: dict[str, Any], key: str = "valid") -> tuple[list, list]:
    r"""``(rounds, validation MRR %)`` of a federated run's history."""
    pts = [
        (h["round"], 100 * h[key]["mrr"]) for h in doc.get("history", []) if key in h
    ]
    return [p[0] for p in pts], [p[1] for p in pts]


def comm_curve(doc: dict[str, Any]) -> tuple[list, list]:
    r"""``(parameters sent up + down so far, validation MRR %)`` at every
    evaluation of a federated run (from ``comm_per_round``)."""
    per = {
        int(r): c.get("params_up", 0) + c.get("params_down", 0)
        for r, c in (doc.get("comm_per_round") or {}).items()
    }
    xs, ys = [], []
    total, done = 0, -1  # round 0: registration
    for rnd, mrr in zip(*valid_curve(doc), strict=True):
        total += sum(v for r, v in per.items() if done < r <= rnd)
        done = rnd
        xs.append(total)
        ys.append(mrr)
    return xs, ys


# ------------------------------------------------------------------ FedE


def fusion_table(results: Path, link: str = LINK) -> str:
    r"""Markdown: FedE's model fusion (``fedgraph fuse``) on FB15k-237 R3 and
    UMLS R3: the single, federated and fused models' weighted test metrics."""
    lines = [
        "| data | model | MRR | Hits@1 | Hits@3 | Hits@10 | MRR per client | results file |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for data, prefix in (("FB15k-237 R3", "fedlu-r3"), ("UMLS R3", "umls-r3")):
        shown = set()
        for kind in ("fusionsum", "fusion"):
            name = f"{prefix}-fede-{kind}-transe.json"
            doc = _load(results / name)
            if doc is None:
                continue
            per = {
                "single": [c["single"]["mrr"] for c in doc["clients"]],
                "federated": [c["federated"]["mrr"] for c in doc["clients"]],
                "fusion": [c["mrr"] for c in doc["clients"]],
            }
            label_fused = (
                "fused, plain sum (`--epochs 0`)"
                if kind == "fusionsum"
                else ("fused, fitted layer (FedE's fusion)")
            )
            rows = [
                ("single", "Independent (single)", doc["weighted_single"]),
                ("federated", "FedE (federated)", doc["weighted_federated"]),
                ("fusion", label_fused, doc["weighted"]),
            ]
            for key, label, m in rows:
                if key != "fusion" and key in shown:
                    continue
                shown.add(key)
                clients = " / ".join(f"{100 * x:.2f}" for x in per[key])
                lines.append(
                    f"| {data} | {label} | {100 * m['mrr']:.2f} | {100 * m['hits@1']:.2f} "
                    f"| {100 * m['hits@3']:.2f} | {100 * m['hits@10']:.2f} | {clients} "
                    f"| [`{name}`]({link}{name}) |"
                )
    return "\n".join(lines)


UMLS_METHODS = (
    ("independent", "Independent"),
    ("centralized", "Centralized"),
    ("fede", "FedE"),
    ("fedprox", "FedProx (μ = 0.1, sum over the table)"),
    ("fedec", "FedEC"),
)


def umls_table(results: Path, link: str = LINK) -> str:
    r"""Markdown: the small UMLS federation (3 clients split by relation)."""
    lines = [
        "| method | MRR | Hits@1 | Hits@10 | MRR per client | best / run length "
        "| MiB up + down | results file |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for method, label in UMLS_METHODS:
        name = f"umls-r3-{method}-transe.json"
        doc = _load(results / name)
        if doc is None:
            continue
        w = doc["weighted"]
        clients = " / ".join(f"{100 * c['mrr']:.2f}" for c in doc["clients"])
        comm = doc.get("comm") or {}
        mib = (comm.get("bytes_up", 0) + comm.get("bytes_down", 0)) / 2**20
        lines.append(
            f"| {label} | {100 * w['mrr']:.2f} | {100 * w['hits@1']:.2f} | "
            f"{100 * w['hits@10']:.2f} | {clients} | {_length(doc)} | "
            f"{mib:.1f} | [`{name}`]({link}{name}) |"
        )
    return "\n".join(lines)


# ------------------------------------------------------ server optimisers

#: the server-side optimisers compared with FedE on FedLU's R3 partition.
SERVER_OPTIMISERS = (
    ("fede", "FedE (plain average)"),
    ("fedavgm", "FedAvgM"),
    ("fedadam", "FedAdam"),
    ("fedyogi", "FedYogi"),
)
_COMMON_PARAMS = {"num_entities", "entity_dim", "init_range", "seed", "evaluate_with"}


def _server_params(doc: dict[str, Any]) -> str:
    params = (doc.get("settings") or {}).get("strategy_params") or {}
    shown = [f"{k} = {v}" for k, v in params.items() if k not in _COMMON_PARAMS]
    return ", ".join(shown) or "–"


def _first_reaching(doc: dict[str, Any], target: float) -> str:
    for h in doc.get("history", []):
        if "valid" in h and h["valid"]["mrr"] >= target:
            return str(h["round"])
    return f"not within {doc['rounds']}"


def server_optimiser_table(results: Path, link: str = LINK) -> str:
    r"""Markdown: FedAvgM, FedAdam and FedYogi against FedE on FB15k-237 R3
    (TransE): best validation MRR and its round, the first validated round
    reaching FedE's best validation MRR, and the test MRR at the best round."""
    fede = _load(results / "fedlu-r3-fede-transe.json")
    if fede is None:
        return "FedE has not been run on R3."
    target = fede["best_valid"]["mrr"]
    lines = [
        "| method | server settings | best valid MRR (round) | first round ≥ FedE's "
        f"best ({100 * target:.2f}) | test MRR | Hits@1 | Hits@10 | rounds run "
        "| results file |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for method, label in SERVER_OPTIMISERS:
        name = f"fedlu-r3-{method}-transe.json"
        doc = _load(results / name)
        if doc is None:
            continue
        w, best = doc["weighted"], doc["best_valid"]["mrr"]
        lines.append(
            f"| {label} | {_server_params(doc)} | {100 * best:.2f} "
            f"({doc['best_round']}) | {_first_reaching(doc, target)} "
            f"| {100 * w['mrr']:.2f} | {100 * w['hits@1']:.2f} "
            f"| {100 * w['hits@10']:.2f} | {doc['rounds']} "
            f"| [`{name}`]({link}{name}) |"
        )
    return "\n".join(lines)


def _figure_optimisers(results: Path, img: Path) -> list[Path]:
    from fedgraph.report.plots import line_plot

    return [
        line_plot(
            _fedlu_curves(results, "r3", SERVER_OPTIMISERS),
            img / "optimisers-r3-curves.svg",
            xlabel="round",
            ylabel="validation MRR (%)",
            title="FB15k-237 R3, TransE: server optimisers, weighted validation MRR",
        )
    ]


# ------------------------------------------------------------- FedAlign

#: FedAlign Table 4, test accuracy (%): (AIFB, MUTAG).
PUBLISHED_FEDALIGN = {
    "sp": (55.00, 55.44),
    "fedavg": (56.94, 54.12),
    "fedprox": (57.50, 53.38),
    "fedalign": (60.56, 55.17),
    "fedavg-l": (57.94, 54.71),
    "fedprox-l": (57.22, 57.06),
    "fedalign-l": (59.17, 57.65),
}

#: R-GCN paper (Schlichtkrull et al., 2018) Table 3: mean ± std accuracy (%).
PUBLISHED_RGCN = {"aifb": (95.83, 0.62), "mutag": (73.23, 0.48)}


def _rgcn_runs(results: Path, dataset: str, method: str) -> list[dict[str, Any]]:
    pattern = str(results / f"{dataset}-{method}-rgcn-*.json")
    return [json.loads(Path(f).read_text()) for f in sorted(glob.glob(pattern))]


def _ms(vals: list[float]) -> str:
    if not vals:
        return "not run"
    std = statistics.stdev(vals) if len(vals) > 1 else float("nan")
    return f"{statistics.fmean(vals):.2f} ± {std:.2f} (n={len(vals)})"


def centralised_rgcn_table(results: Path) -> str:
    r"""Markdown: the centralised R-GCN against the R-GCN paper."""
    lines = [
        "| dataset | ours, test accuracy (%) | R-GCN paper | s per seed |",
        "|---|---|---|---|",
    ]
    for d in ("aifb", "mutag"):
        rs = _rgcn_runs(results, d, "centralised")
        if not rs:
            continue
        acc = [100 * r["test_accuracy"] for r in rs]
        secs = statistics.fmean(r["wall_seconds"] for r in rs)
        pub = PUBLISHED_RGCN[d]
        lines.append(
            f"| {d.upper()} | {_ms(acc)} | {pub[0]:.2f} ± {pub[1]:.2f} | {secs:.0f} |"
        )
    return "\n".join(lines)


def fedalign_table(results: Path) -> str:
    r"""Markdown: FedAlign's Table 4 (10 type-sampled clients), ours beside
    it: final (round 20) and best-round test accuracy, mean ± std over seeds."""
    lines = [
        "| method | AIFB final, ours | AIFB best round, ours | AIFB, FedAlign | Δ final "
        "| MUTAG final, ours | MUTAG best round, ours | MUTAG, FedAlign | Δ final "
        "| s / run (AIFB / MUTAG) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m, paper in PUBLISHED_FEDALIGN.items():
        cells, secs = [], []
        for d, pub in zip(("aifb", "mutag"), paper, strict=True):
            rs = _rgcn_runs(results, d, m)
            fin = [100 * r["final_test_accuracy"] for r in rs]
            best = [100 * r["best_test_accuracy"] for r in rs]
            delta = f"{statistics.fmean(fin) - pub:+.2f}" if fin else "–"
            cells += [_ms(fin), _ms(best), f"{pub:.2f}", delta]
            secs.append(
                f"{statistics.fmean(r['wall_seconds'] for r in rs):.0f}" if rs else "-"
            )
        lines.append(f"| {m} | " + " | ".join(cells) + f" | {' / '.join(secs)} |")
    return "\n".join(lines)


def rgcn_round_curves(results: Path, dataset: str) -> dict[str, tuple[list, list]]:
    r"""Mean test accuracy (%) over seeds per round, per method."""
    out = {}
    for m in PUBLISHED_FEDALIGN:
        rs = _rgcn_runs(results, dataset, m)
        if not rs:
            continue
        n = min(len(r["curve"]) for r in rs)
        rounds = [rs[0]["curve"][i]["round"] for i in range(n)]
        acc = [
            statistics.fmean(100 * r["curve"][i]["test_accuracy"] for r in rs)
            for i in range(n)
        ]
        out[m] = (rounds, acc)
    return out


# -------------------------------------------------------------- FedMKGC


def fedmkgc_table(results: Path, link: str = LINK) -> str:
    r"""Markdown: the DBP-5L slice (Greek + English) before training, after
    FedMKGC's sequential rounds, and Independent."""
    lines = [
        "| model | MRR | Hits@1 | Hits@10 | MRR per language | results file |",
        "|---|---|---|---|---|---|",
    ]
    for alg, label in (
        ("fedmkgc", "FedMKGC, sequential"),
        ("independent", "Independent"),
    ):
        name = f"fedmkgc-dbp5l-slice-el-en-{alg}.json"
        doc = _load(results / name)
        if doc is None:
            continue
        rows = []
        if isinstance(doc.get("zero_shot"), dict) and "weighted" in doc["zero_shot"]:
            z = doc["zero_shot"]
            rows.append(("before training", z["weighted"], z.get("clients", {})))
        rows.append((label, doc["weighted"], doc.get("clients", {})))
        for lab, w, clients in rows:
            langs = doc.get("languages", [])
            per = " / ".join(
                f"{lang} {100 * clients[str(i)]['mrr']:.2f}"
                for i, lang in enumerate(langs)
                if str(i) in clients
            )
            lines.append(
                f"| {lab} | {100 * w['mrr']:.2f} | {100 * w['hits@1']:.2f} | "
                f"{100 * w['hits@10']:.2f} | {per} | [`{name}`]({link}{name}) |"
            )
    return "\n".join(lines)


#: FedMKGC's Tables 2 and 3, Greek (Hits@1 / Hits@10 / MRR, %): mBERT, five
#: DBP-5L languages, 50 sequential rounds, batch 384, titles translated to
#: English; FedMKGC_OL, the same with the titles in their own language (as
#: fedgraph reads them); SimKGC on Greek alone (Table 2's single-KG baseline).
PUBLISHED_MKGC_GREEK = {
    "FedMKGC (paper: mBERT, 5 languages, 50 rounds, English titles)": (
        40.1,
        73.7,
        52.2,
    ),
    "FedMKGC_OL (paper: the same, titles in their own language)": (18.3, 47.1, 27.4),
    "SimKGC, Greek alone (paper)": (22.8, 46.5, 26.3),
}
#: results files of ``benchmarks/fedmkgc_reduced.sh`` (Greek alone, then the
#: federations ``fedmkgc-<partners>-el``).
MKGC_REDUCED = "fedmkgc-reduced-"


def _mkgc_reduced_runs(results: Path) -> list[tuple[str, str, dict[str, Any]]]:
    r"""``(row label, file name, results)`` of the reduced protocol's runs:
    Independent Greek first, then each FedMKGC federation ending in Greek."""
    names = [f"{MKGC_REDUCED}independent-el.json"] + sorted(
        Path(f).name
        for f in glob.glob(str(results / f"{MKGC_REDUCED}fedmkgc-*-el.json"))
    )
    out = []
    for name in names:
        doc = _load(results / name)
        if doc is None:
            continue
        langs = (doc.get("settings") or {}).get("client_languages") or []
        if doc["settings"].get("algorithm") == "independent":
            label = "Independent, Greek alone"
        else:
            label = "FedMKGC, sequential " + " → ".join(langs)
        out.append((label, name, doc))
    return out


def _client_of(doc: dict[str, Any], language: str) -> int | None:
    langs = (doc.get("settings") or {}).get("client_languages") or []
    return langs.index(language) if language in langs else None


def mkgc_client_steps(doc: dict[str, Any], client: int, up_to: int) -> int | None:
    r"""Optimiser steps ``client`` took in rounds ``1 … up_to`` of a text
    run, from its history (the rounds it trained alone; :obj:`None` when a
    round trained it with others, whose step count is one merged sum)."""
    steps = 0
    for h in doc.get("history", []):
        if h.get("round", 0) > up_to or client not in h.get("clients", []):
            continue
        if len(h["clients"]) != 1:
            return None
        steps += int((h.get("train") or {}).get("count", 0))
    return steps


def _steps(doc: dict[str, Any], client: int, up_to: int) -> str:
    n = mkgc_client_steps(doc, client, up_to)
    return "—" if n is None else f"{n:,}"


def fedmkgc_reduced_table(results: Path, link: str = LINK) -> str:
    r"""Markdown: Greek test metrics of the reduced protocol's runs (each at
    its best validation round) beside the published ones, with the Greek
    steps trained by that round, the test triples ranked (head and tail
    of each) and the other
    languages' test MRR."""
    lines = [
        "| model | Greek Hits@1 | Hits@10 | MRR | Greek test triples | "
        "Greek steps (all clients) | tested round | other languages, MRR | results file |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, (h1, h10, mrr) in PUBLISHED_MKGC_GREEK.items():
        lines.append(f"| {label} | {h1:.1f} | {h10:.1f} | {mrr:.1f} | | | | | |")
    for label, name, doc in _mkgc_reduced_runs(results):
        greek = _client_of(doc, "el")
        clients = {c["client"]: c for c in doc.get("clients", [])}
        if greek is None or greek not in clients:
            continue
        el = clients[greek]
        best = int(doc.get("best_round", doc.get("rounds", 0)))
        total = sum(
            int((h.get("train") or {}).get("count", 0))
            for h in doc.get("history", [])
            if h.get("round", 0) <= best
        )
        langs = doc["settings"]["client_languages"]
        others = " / ".join(
            f"{lang} {100 * clients[i]['mrr']:.2f}"
            for i, lang in enumerate(langs)
            if lang != "el" and i in clients
        )
        lines.append(
            f"| {label} | {100 * el['hits@1']:.2f} | {100 * el['hits@10']:.2f} | "
            f"{100 * el['mrr']:.2f} | {int(el.get('n_test', 0)):,} | "
            f"{_steps(doc, greek, best)} ({total:,}) | {best} of {doc.get('rounds')} | "
            f"{others or '—'} | [`{name}`]({link}{name}) |"
        )
    return "\n".join(lines)


def fedmkgc_reduced_curves(results: Path) -> str:
    r"""Markdown: Greek validation MRR of each reduced-protocol run against
    the Greek steps trained so far (one row per step count validated)."""
    runs = _mkgc_reduced_runs(results)
    by_steps: dict[int, dict[str, float]] = {}
    for label, _, doc in runs:
        greek = _client_of(doc, "el")
        for h in doc.get("history", []):
            valid = (h.get("valid_clients") or {}).get(str(greek))
            if valid is None:
                continue
            n = mkgc_client_steps(doc, int(greek), h["round"])
            if n is not None:
                by_steps.setdefault(n, {})[label] = 100 * valid["mrr"]
    labels = [label for label, _, _ in runs]
    lines = [
        "| Greek steps | " + " | ".join(labels) + " |",
        "|---|" + "---|" * len(labels),
    ]
    for n in sorted(by_steps):
        row = by_steps[n]
        cells = [f"{row[lab]:.2f}" if lab in row else "" for lab in labels]
        lines.append(f"| {n:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def fedmkgc_reduced_losses(results: Path) -> str:
    r"""Markdown: each reduced-protocol run's mean training loss in the
    rounds that trained Greek alone, in order (a FedMKGC run's label lists
    those rounds)."""
    rows = []
    for label, _, doc in _mkgc_reduced_runs(results):
        greek = _client_of(doc, "el")
        greek_rounds = [
            h
            for h in doc.get("history", [])
            if h.get("clients") == [greek] and "loss" in (h.get("train") or {})
        ]
        if doc["settings"].get("algorithm") != "independent":
            label += (
                " (rounds " + ", ".join(str(h["round"]) for h in greek_rounds) + ")"
            )
        rows.append((label, [h["train"]["loss"] for h in greek_rounds]))
    if not rows:
        return "Not run yet: benchmarks/fedmkgc_reduced.sh."
    width = max(len(losses) for _, losses in rows)
    lines = [
        "| Greek round | " + " | ".join(str(i + 1) for i in range(width)) + " |",
        "|---|" + "---|" * width,
    ]
    for label, losses in rows:
        cells = [f"{x:.3f}" for x in losses] + [""] * (width - len(losses))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ----------------------------------------------------------- partitions


def _n(x: float) -> str:
    return f"{x:,.1f}"


def relation_split_table(results: Path) -> str:
    r"""Markdown: mean entities per client of the random relation split
    against FedE's Table 2 (``fb15k-237-partition.json``, seeds 0–9)."""
    doc = _load(results / "fb15k-237-partition.json") or {}
    lines = [
        "| data, clients | mean entities per client, mean ± std over seeds [min, max] "
        "| FedE Table 2 | mean vs FedE | worst seed vs FedE |",
        "|---|---|---|---|---|",
    ]
    rows = [(f"FB15k-237, {k}", v) for k, v in doc.get("relation", {}).items()]
    if "nell_995_fed3" in doc:
        rows.append(("NELL-995, 3", doc["nell_995_fed3"]))
    for label, v in rows:
        m = v["mean_entities"]
        worst = (
            f"{100 * v['max_abs_rel_error']:.2f} %" if "max_abs_rel_error" in v else "–"
        )
        lines.append(
            f"| {label} | {_n(m['mean'])} ± {_n(m['std'])} [{_n(m['min'])}, "
            f"{_n(m['max'])}] | {_n(v['fede_table2'])} | "
            f"{100 * v['rel_error_of_mean']:+.2f} % | {worst} |"
        )
    return "\n".join(lines)


def spectral_split_table(results: Path) -> str:
    r"""Markdown: the spectral relation split against FedLU's published
    C3/C5/C10 (client triples of seed 0 and the adjusted Rand index of the
    relation clusters over seeds 0–9)."""
    doc = _load(results / "fb15k-237-partition.json") or {}
    lines = [
        "| clients | ours (seed 0), triples per client | FedLU's published | "
        "ARI mean [min] | seconds (seed 0) |",
        "|---|---|---|---|---|",
    ]
    for k, v in doc.get("spectral", {}).items():
        ours = " / ".join(f"{x:,}" for x in v["triples_seed0"])
        pub = " / ".join(f"{x:,}" for x in v["published_triples"])
        same = "identical" if v["triples_seed0"] == v["published_triples"] else pub
        lines.append(
            f"| {k} | {ours} | {same} | {v['ari']['mean']:.4f} [{v['ari']['min']:.4f}] "
            f"| {v['seconds_seed0']:.1f} |"
        )
    return "\n".join(lines)


def _get(doc: dict[str, Any], dotted: str) -> Any:
    for key in dotted.split("."):
        doc = doc[key]
    return doc


def published_partition_table(results: Path) -> str:
    r"""Markdown: statistics of FedLU's published C3 and R3 clients."""
    doc = _load(results / "fb15k-237-partition.json") or {}
    lines = [
        "| partition | entities | shared entities | training triples | mean degree "
        "| clustering |",
        "|---|---|---|---|---|---|",
    ]
    for name in ("C3", "R3"):
        cl = (doc.get(f"published_{name}") or {}).get("clients", [])
        if not cl:
            continue

        def col(key: str, fmt: str, cl=cl) -> str:
            return " / ".join(format(_get(c, key), fmt) for c in cl)

        lines.append(
            f"| {name}, clients 0 / 1 / 2 | {col('entities', ',')} | "
            f"{col('shared_entities', ',')} | {col('triples.train', ',')} | "
            f"{col('mean_degree', '.2f')} | {col('clustering', '.4f')} |"
        )
    return "\n".join(lines)


def rdf_partition_table(results: Path) -> str:
    r"""Markdown: FedAlign's Table 3 (10 type-sampled clients) and ours, mean
    over 10 partition seeds of the per-client mean ± std."""
    doc = _load(results / "rdf-fed10-partition.json") or {}
    lines = [
        "| dataset | nodes per client, ours (spread of the mean over seeds) "
        "| edges per client, ours (statements) | FedAlign Table 3 entities "
        "| FedAlign edges |",
        "|---|---|---|---|---|",
    ]
    for d, v in doc.items():
        m, sp, pub = v["mean_over_seeds"], v["spread_of_mean"], v["fedalign_table3"]
        lines.append(
            f"| {d.upper()} | {m['nodes']['mean']:,.0f} ± {m['nodes']['std']:,.0f} "
            f"(±{sp['nodes']:,.0f}) | {m['edges']['mean']:,.0f} ± "
            f"{m['edges']['std']:,.0f} | {pub['nodes'][0]:,.0f} ± {pub['nodes'][1]:,.0f} "
            f"| {pub['edges'][0]:,.0f} ± {pub['edges'][1]:,.0f} |"
        )
    return "\n".join(lines)


# ----------------------------------------------------------------- pages

FEDLU_CURVE_METHODS = (
    ("fede", "FedE"),
    ("fedprox-mean", "FedProx (mean)"),
    ("fedec", "FedEC"),
    ("fedlu", "FedLU local, from round 1"),
    ("fedlu-gated", "FedLU local, gated"),
)


def _fedlu_curves(
    results: Path, data: str, methods: Sequence[tuple[str, str]] = ()
) -> dict[str, tuple[list, list]]:
    r"""Label → validation curve of ``fedlu-DATA-METHOD-transe.json`` for each
    ``(method, label)`` of ``methods`` (default: :data:`FEDLU_CURVE_METHODS`)."""
    out = {}
    for method, label in methods or FEDLU_CURVE_METHODS:
        doc = _load(results / f"fedlu-{data}-{method}-transe.json")
        if doc is not None and "history" in doc:
            out[label] = valid_curve(doc)
    return out


def _fedlu_client_bars(results: Path, data: str) -> tuple[list[str], dict]:
    methods = (("independent", "Independent"),) + FEDLU_CURVE_METHODS
    bars, groups = {}, []
    for method, label in methods:
        doc = _load(results / f"fedlu-{data}-{method}-transe.json")
        if doc is None:
            continue
        bars[label] = [100 * c["mrr"] for c in doc["clients"]]
        groups = [
            f"client {c['client']}\n({c['n_test']:,} test)" for c in doc["clients"]
        ]
    return groups, bars


def _figure_fedlu(results: Path, img: Path) -> list[Path]:
    from fedgraph.report.plots import grouped_bars, line_plot

    out = []
    for data in ("r3", "c3"):
        out.append(
            line_plot(
                _fedlu_curves(results, data),
                img / f"fedlu-{data}-curves.svg",
                xlabel="round",
                ylabel="validation MRR (%)",
                title=f"FB15k-237 {data.upper()}, TransE: weighted validation MRR",
            )
        )
        groups, bars = _fedlu_client_bars(results, data)
        out.append(
            grouped_bars(
                groups,
                bars,
                img / f"fedlu-{data}-clients.svg",
                ylabel="test MRR (%)",
                title=f"FB15k-237 {data.upper()}, TransE: test MRR per client",
            )
        )
    return out


def _figure_feds(results: Path, img: Path) -> list[Path]:
    from fedgraph.report.plots import line_plot

    runs = {}
    for method, label in (("fedep", "FedEP"), ("feds", "FedS")):
        doc = _load(results / f"fedlu-r10-{method}-transe.json")
        if doc is not None:
            runs[label] = doc
    comm = {}
    for label, doc in runs.items():
        xs, ys = comm_curve(doc)
        comm[label] = ([x / 1e9 for x in xs], ys)
    return [
        line_plot(
            comm,
            img / "feds-communication.svg",
            xlabel="parameters sent, up + down, cumulative (billions)",
            ylabel="validation MRR (%)",
            title="FB15k-237 R10, TransE: validation MRR against communication",
        ),
        line_plot(
            {label: valid_curve(doc) for label, doc in runs.items()},
            img / "feds-curves.svg",
            xlabel="round",
            ylabel="validation MRR (%)",
            title="FB15k-237 R10, TransE: validation MRR per round",
        ),
    ]


def _figure_fede(results: Path, img: Path) -> list[Path]:
    from fedgraph.report.plots import grouped_bars, line_plot

    curves = {}
    for method, label in UMLS_METHODS:
        doc = _load(results / f"umls-r3-{method}-transe.json")
        if doc is not None and method not in ("independent", "centralized"):
            curves[label] = valid_curve(doc)
    doc = _load(results / "fedlu-r3-fede-fusionsum-transe.json")
    fitted = _load(results / "fedlu-r3-fede-fusion-transe.json")
    out = [
        line_plot(
            curves,
            img / "fede-umls-curves.svg",
            xlabel="round",
            ylabel="validation MRR (%)",
            title="UMLS, 3 clients by relation, TransE: weighted validation MRR",
        )
    ]
    if doc is not None:
        bars = {
            "Independent": [100 * c["single"]["mrr"] for c in doc["clients"]],
            "FedE": [100 * c["federated"]["mrr"] for c in doc["clients"]],
            "fused, plain sum": [100 * c["mrr"] for c in doc["clients"]],
        }
        if fitted is not None:
            bars["fused, fitted"] = [100 * c["mrr"] for c in fitted["clients"]]
        out.append(
            grouped_bars(
                [f"client {c['client']}" for c in doc["clients"]],
                bars,
                img / "fede-fusion-clients.svg",
                ylabel="test MRR (%)",
                title="FB15k-237 R3, TransE: model fusion per client",
            )
        )
    return out


def _figure_fedalign(results: Path, img: Path) -> list[Path]:
    from fedgraph.report.plots import line_plot

    return [
        line_plot(
            rgcn_round_curves(results, d),
            img / f"fedalign-{d}-rounds.svg",
            xlabel="round",
            ylabel="test accuracy (%), mean over seeds",
            title=f"{d.upper()}, 10 type-sampled clients: test accuracy per round",
        )
        for d in ("aifb", "mutag")
    ]


def _fedlu_commands(results: Path) -> str:
    names = [f"fedlu-{d}-{m}-transe.json" for d, m, *_ in _fedlu_files(results)]
    return commands_list(results, names)


def _privacy_commands(results: Path, prefix: str) -> str:
    names = privacy_files(results, prefix)
    return commands_list(results, names) if names else not_run(prefix)


def _figs(*names: str) -> str:
    return "\n\n".join(f"![{n}](img/{n}.svg)" for n in names)


#: generated block name → its Markdown, from the results folder.
BLOCKS: dict[str, Callable[[Path], str]] = {
    "fedlu-table": lambda r: link_prediction_table(r, LINK),
    "fedlu-commands": _fedlu_commands,
    "fedlu-figures": lambda r: _figs(
        "fedlu-r3-curves", "fedlu-c3-curves", "fedlu-r3-clients", "fedlu-c3-clients"
    ),
    "fedlu-unlearning": unlearning_table,
    "fedlu-unlearning-command": lambda r: commands_list(
        r, ["fedlu-c3-fedlu-unlearn-transe.json"]
    ),
    "feds-table": lambda r: feds_table(r, LINK) or "FedEP has not been run.",
    "feds-commands": lambda r: commands_list(
        r, ["fedlu-r10-fedep-transe.json", "fedlu-r10-feds-transe.json"]
    ),
    "feds-figures": lambda r: _figs("feds-communication", "feds-curves"),
    "fede-fusion": fusion_table,
    "fede-fusion-commands": lambda r: commands_list(
        r,
        [
            f"{p}-fede-{k}-transe.json"
            for p in ("fedlu-r3", "umls-r3")
            for k in ("fusionsum", "fusion")
        ],
    ),
    "fede-umls": umls_table,
    "fede-umls-commands": lambda r: commands_list(
        r, [f"umls-r3-{m}-transe.json" for m, _ in UMLS_METHODS]
    ),
    "fede-figures": lambda r: _figs("fede-umls-curves", "fede-fusion-clients"),
    "fedalign-centralised": centralised_rgcn_table,
    "fedalign-table": fedalign_table,
    "fedalign-figures": lambda r: _figs(
        "fedalign-aifb-rounds", "fedalign-mutag-rounds"
    ),
    "fedmkgc-slice": fedmkgc_table,
    "fedmkgc-reduced": fedmkgc_reduced_table,
    "fedmkgc-reduced-curves": fedmkgc_reduced_curves,
    "fedmkgc-reduced-losses": fedmkgc_reduced_losses,
    "fedmkgc-reduced-commands": lambda r: commands_list(
        r, [name for _, name, _ in _mkgc_reduced_runs(r)]
    ),
    "partition-relation": relation_split_table,
    "partition-spectral": spectral_split_table,
    "partition-published": published_partition_table,
    "fedalign-partition": rdf_partition_table,
    "optimisers-table": server_optimiser_table,
    "optimisers-commands": lambda r: commands_list(
        r, [f"fedlu-r3-{m}-transe.json" for m, _ in SERVER_OPTIMISERS]
    ),
    "optimisers-figures": lambda r: _figs("optimisers-r3-curves"),
    "privacy-umls": lambda r: privacy_table(r, "umls-r3-privacy"),
    "privacy-umls-commands": lambda r: _privacy_commands(r, "umls-r3-privacy"),
    "privacy-r3": lambda r: privacy_table(r, "fedlu-r3-privacy"),
    "privacy-r3-commands": lambda r: _privacy_commands(r, "fedlu-r3-privacy"),
}

#: page → the functions drawing its figures into ``img/``.
FIGURES: dict[str, Callable[[Path, Path], list[Path]]] = {
    "fedlu": _figure_fedlu,
    "feds": _figure_feds,
    "fede": _figure_fede,
    "fedalign": _figure_fedalign,
    "server-optimisers": _figure_optimisers,
}

_BLOCK = re.compile(
    r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>(?:(?!<!-- generated: ).)*?)"
    r"(<!-- end generated -->)",
    re.S,
)


def render_page(text: str, results: Path = RESULTS, page: str = "") -> str:
    r"""``text`` with every generated block rewritten from ``results``.

    Raises:
        ValueError: if a block names no entry of :data:`BLOCKS`.
    """

    def sub(m: re.Match[str]) -> str:
        name = m.group("name")
        if name not in BLOCKS:
            raise ValueError(f"{page}: unknown generated block {name!r}")
        return m.group(1) + BLOCKS[name](results).rstrip("\n") + "\n" + m.group(4)

    return _BLOCK.sub(sub, text)


def generate(
    pages: Path = PAGES, results: Path = RESULTS, out: Path | None = None
) -> list[Path]:
    r"""Rewrites the pages' generated blocks and draws their figures.

    Args:
        pages: the folder of the results pages (``docs/papers``).
        results: the folder of the results files (``docs/results``).
        out: where to write the pages and ``img/`` (default: ``pages``
            itself; a test writes elsewhere and compares).

    Returns:
        the pages and figures written.
    """
    out = pages if out is None else out
    written = []
    for page in sorted(pages.glob("*.md")):
        text = page.read_text()
        new = render_page(text, results, page=str(page))
        target = out / page.name
        if not target.exists() or target.read_text() != new:
            atomic_write_text(target, new)
        written.append(target)
    for name, draw in FIGURES.items():
        if (pages / f"{name}.md").exists():
            written += draw(results, out / "img")
    return written


def stale(
    pages: Path = PAGES, results: Path = RESULTS, scratch: Path | None = None
) -> list[str]:
    r"""Pages and figures that differ from what :func:`generate` would write
    (figures only compared when they were drawn by this matplotlib version)."""
    import tempfile

    import matplotlib

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(scratch or tmp)
        bad = []
        for path in generate(pages, results, out):
            rel = path.relative_to(out)
            old = pages / rel
            if not old.exists():
                bad.append(f"{rel}: missing")
                continue
            a, b = old.read_bytes(), path.read_bytes()
            if (
                path.suffix == ".svg"
                and f"Matplotlib v{matplotlib.__version__}".encode() not in a
            ):
                continue  # drawn by another matplotlib: text may differ
            if a != b:
                bad.append(f"{rel}: out of date")
        return bad


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m fedgraph.report.papers",
        description="Regenerates the results pages (docs/papers) from docs/results/*.json.",
    )
    p.add_argument("--results", type=Path, default=RESULTS)
    p.add_argument("--pages", type=Path, default=PAGES)
    p.add_argument("--check", action="store_true", help="only report stale pages")
    a = p.parse_args(argv)
    for folder, what in ((a.pages, "--pages"), (a.results, "--results")):
        if not folder.is_dir():
            print(f"error: `{what}` {folder} is not a folder (run from a clone of "
                  "fedgraph, or pass --pages and --results)", file=sys.stderr)  # fmt: skip
            return 2
    if a.check:
        bad = stale(a.pages, a.results)
        for line in bad:
            print(line)
        return 1 if bad else 0
    for path in generate(a.pages, a.results):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
