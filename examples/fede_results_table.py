r"""Prints the tables of ``docs/papers/fede-claims.md`` (FedE's own claims) from the
results files under ``docs/results/``.

    python examples/fede_results_table.py                    # the docs' tables
    python examples/fede_results_table.py --results runs/fede --finished-runs
    python examples/fede_results_table.py --update docs/papers/fede-claims.md

Files: ``fede-{fb15k237,nell995}-fed3-{transe,distmult,complex,rotate}-{single,entire,fede}.json``
(``fedgraph train`` results, ``--protocol fede``) and
``fede-DATA-MODEL-fusion.json`` (``fedgraph fuse``).
A second run of the same command is ``fede-DATA-MODEL-SETTING-repeat.json``.
With ``--finished-runs`` the files are read from the run folders of
``benchmarks/fede_claims.sh`` instead (``NAME/results.json``,
``NAME-MODEL-fede/fusion/results.json``; no repeats).

The first table per dataset puts every client's test MRR and Hits@1/5/10, the
test-triple-weighted average and the unweighted mean over clients beside
FedE's Tables 3 and 4 (FedE publishes per-client numbers only, so the mean is
the one aggregate both give); the second gives, per client, FedE's relative MRR
gain over Single (the paper's claim: +5.7 % on FB15k-237-Fed3 and +14.2 % on
NELL-995-Fed3 with RotatE, averaged over clients); the third sets FedE beside
Entire per client (the paper's claim 2: FedE often beats Entire); the fourth
is model fusion against Table 5; the fifth sets a repeated run beside the
first (the same command, seed and data: what float rounding alone moves); the
last sums up the three claims per dataset and KGE.
``tests/eval/test_fede_results_table.py`` fails when the document and the
files disagree.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

DATASETS = {"fb15k237-fed3": "FB15k-237-Fed3", "nell995-fed3": "NELL-995-Fed3"}
MODELS = {
    "transe": "TransE",
    "distmult": "DistMult",
    "complex": "ComplEx",
    "rotate": "RotatE",
}
SETTINGS = {"single": "Single", "entire": "Entire", "fede": "FedE"}
METRICS = ("mrr", "hits@1", "hits@5", "hits@10")

#: FedE Tables 3 (FB15k-237-Fed3) and 4 (NELL-995-Fed3): per client
#: (MRR, Hits@1, Hits@5, Hits@10), Chen et al., FedE, IJCKG 2021.
PUBLISHED: dict[str, dict[str, dict[str, list[tuple[float, ...]]]]] = {
    "fb15k237-fed3": {
        "transe": {
            "single": [(0.5035, 0.3975, 0.6362, 0.6982),
                       (0.3869, 0.2561, 0.5464, 0.6373),
                       (0.3372, 0.2056, 0.4887, 0.5967)],
            "entire": [(0.5424, 0.4345, 0.6739, 0.7414),
                       (0.4098, 0.2752, 0.5756, 0.6689),
                       (0.3568, 0.2202, 0.5223, 0.6308)],
            "fede": [(0.5478, 0.4378, 0.6831, 0.7481),
                     (0.4183, 0.2789, 0.5910, 0.6844),
                     (0.3626, 0.2226, 0.5289, 0.6337)],
        },
        "distmult": {
            "single": [(0.4893, 0.4014, 0.5925, 0.6519),
                       (0.3655, 0.2642, 0.4850, 0.5618),
                       (0.3465, 0.2364, 0.4729, 0.5703)],
            "entire": [(0.5167, 0.4186, 0.6334, 0.7006),
                       (0.3882, 0.2772, 0.5225, 0.5988),
                       (0.3391, 0.2287, 0.4645, 0.5644)],
            "fede": [(0.5356, 0.4441, 0.6466, 0.7025),
                     (0.4044, 0.2913, 0.5416, 0.6240),
                     (0.3745, 0.2568, 0.5111, 0.6146)],
        },
        "complex": {
            "single": [(0.4843, 0.3948, 0.5903, 0.6532),
                       (0.3723, 0.2691, 0.4914, 0.5780),
                       (0.3262, 0.2156, 0.4496, 0.5566)],
            "entire": [(0.5004, 0.4068, 0.6164, 0.6745),
                       (0.3689, 0.2633, 0.4902, 0.5742),
                       (0.3340, 0.2238, 0.4541, 0.5545)],
            "fede": [(0.5286, 0.4349, 0.6418, 0.7016),
                     (0.4094, 0.2981, 0.5440, 0.6318),
                     (0.3610, 0.2449, 0.4955, 0.5952)],
        },
        "rotate": {
            "single": [(0.5271, 0.4265, 0.6470, 0.7063),
                       (0.4062, 0.2844, 0.5559, 0.6418),
                       (0.3660, 0.2479, 0.4994, 0.6016)],
            "entire": [(0.5570, 0.4494, 0.6866, 0.7510),
                       (0.4212, 0.2886, 0.5824, 0.6733),
                       (0.3714, 0.2399, 0.5236, 0.6349)],
            "fede": [(0.5553, 0.4436, 0.6909, 0.7542),
                     (0.4297, 0.2930, 0.6004, 0.6851),
                     (0.3887, 0.2571, 0.5450, 0.6503)],
        },
    },
    "nell995-fed3": {
        "transe": {
            "single": [(0.4550, 0.3048, 0.6459, 0.7390),
                       (0.2411, 0.1084, 0.3832, 0.4895),
                       (0.2375, 0.1154, 0.3650, 0.4673)],
            "entire": [(0.4804, 0.3327, 0.6627, 0.7636),
                       (0.2724, 0.1349, 0.4262, 0.5296),
                       (0.2800, 0.1560, 0.4173, 0.5181)],
            "fede": [(0.4915, 0.3421, 0.6766, 0.7783),
                     (0.2671, 0.1189, 0.4210, 0.5415),
                     (0.2846, 0.1484, 0.4342, 0.5440)],
        },
        "distmult": {
            "single": [(0.4084, 0.2950, 0.5430, 0.6425),
                       (0.2129, 0.1411, 0.2815, 0.3555),
                       (0.2326, 0.1779, 0.2866, 0.3339)],
            "entire": [(0.4520, 0.3257, 0.6069, 0.7061),
                       (0.2870, 0.2025, 0.3727, 0.4558),
                       (0.2943, 0.2185, 0.3690, 0.4347)],
            "fede": [(0.4843, 0.3582, 0.6425, 0.7307),
                     (0.2824, 0.1946, 0.3732, 0.4620),
                     (0.2737, 0.1976, 0.3515, 0.4129)],
        },
        "complex": {
            "single": [(0.4213, 0.2967, 0.5728, 0.6811),
                       (0.2566, 0.1702, 0.3457, 0.4305),
                       (0.2283, 0.1625, 0.2875, 0.3600)],
            "entire": [(0.4585, 0.3319, 0.6072, 0.7169),
                       (0.3034, 0.2142, 0.3959, 0.4833),
                       (0.3328, 0.2524, 0.4100, 0.4848)],
            "fede": [(0.4938, 0.3641, 0.6554, 0.7475),
                     (0.3336, 0.2378, 0.4367, 0.5339),
                     (0.3367, 0.2528, 0.4215, 0.5011)],
        },
        "rotate": {
            "single": [(0.4961, 0.3723, 0.6469, 0.7363),
                       (0.3187, 0.2221, 0.4202, 0.5057),
                       (0.3034, 0.2101, 0.3989, 0.4857)],
            "entire": [(0.5215, 0.3902, 0.6850, 0.7779),
                       (0.3775, 0.2732, 0.4873, 0.5903),
                       (0.3785, 0.2766, 0.4871, 0.5806)],
            "fede": [(0.5312, 0.3927, 0.7042, 0.7977),
                     (0.3771, 0.2634, 0.5057, 0.5984),
                     (0.3828, 0.2733, 0.4984, 0.5992)],
        },
    },
}  # fmt: skip

#: FedE's text: RotatE FedE's relative MRR gain over Single, averaged over
#: clients (%).
PUBLISHED_GAIN = {"fb15k237-fed3": 5.7, "nell995-fed3": 14.2}

#: FedE Table 5 (average MRR; the table names no model, FedE's fusion script
#: runs TransE): (w/o fusion, w/ fusion).
PUBLISHED_FUSION = {"fb15k237-fed3": (0.4434, 0.4543), "nell995-fed3": (0.4289, 0.4433)}


def _name(data: str, model: str, setting: str) -> str:
    return f"fede-{data}-{model}-{setting}.json"


def _run_folder(data: str, model: str, setting: str) -> str:
    r"""``benchmarks/fede_claims.sh``'s folder of a run."""
    return f"{data}-{model}-{'fede' if setting == 'fusion' else setting}"


def load(
    results: Path, finished_runs: bool = False
) -> dict[tuple[str, str, str], dict[str, Any]]:
    r"""``{(data, model, setting): results doc}`` for every file present
    (setting ``"fusion"``: the fusion results)."""
    out = {}
    for data in DATASETS:
        for model in MODELS:
            for setting in (*SETTINGS, "fusion"):
                if finished_runs:
                    path = results / _run_folder(data, model, setting)
                    path = path / ("fusion" if setting == "fusion" else "")
                    path = path / "results.json"
                else:
                    path = results / _name(data, model, setting)
                if path.is_file():
                    out[(data, model, setting)] = json.loads(path.read_text())
                repeat = results / _name(data, model, f"{setting}-repeat")
                if setting in SETTINGS and not finished_runs and repeat.is_file():
                    out[(data, model, f"{setting}-repeat")] = json.loads(
                        repeat.read_text()
                    )
    return out


def _client_mean(doc: dict[str, Any], metric: str) -> float:
    r"""The unweighted mean of ``metric`` over the run's clients."""
    return sum(c[metric] for c in doc["clients"]) / len(doc["clients"])


def _pct(x: float) -> str:
    return f"{100 * x:.2f}"


def _delta(ours: float, published: float) -> str:
    return f"{100 * (ours - published):+.2f}"


def _length(doc: dict[str, Any], setting: str) -> str:
    clients = doc.get("clients", [])
    if "best_round" in doc:
        return f"round {doc['best_round']} of {doc['rounds']}"
    epochs = [c.get("best_epoch") for c in clients]
    if setting == "entire" and clients and epochs[0] is not None:
        # one pooled model: every client row carries its best epoch
        return f"epoch {epochs[0]} of {clients[0].get('epochs')}"
    if all(e is not None for e in epochs):
        total = "/".join(str(c.get("epochs")) for c in clients)
        return "epochs " + "/".join(str(e) for e in epochs) + f" of {total}"
    return f"{doc.get('rounds', '?')} rounds"


def client_table(runs: dict, data: str) -> str:
    r"""Per client and weighted test metrics (%) beside FedE's table."""
    head = "| KGE | setting | client | " + " | ".join(
        f"{m.upper() if m == 'mrr' else m.replace('hits', 'H')} ours | FedE | Δ"
        for m in METRICS
    )
    lines = [
        head + " | best / run length | results file |",
        "|---|---|---|" + "---|---|---|" * len(METRICS) + "---|---|",
    ]
    for model in MODELS:
        for setting in SETTINGS:
            doc = runs.get((data, model, setting))
            if doc is None:
                continue
            published = PUBLISHED[data][model][setting]
            file = _name(data, model, setting)
            link = f"[`{file}`](../results/{file})"
            for c in doc["clients"]:
                k = int(c["client"])
                cells = []
                for j, m in enumerate(METRICS):
                    cells += [_pct(c[m]), _pct(published[k][j]),
                              _delta(c[m], published[k][j])]  # fmt: skip
                lines.append(
                    f"| {MODELS[model]} | {SETTINGS[setting]} | {k + 1} | "
                    + " | ".join(cells)
                    + f" | {_length(doc, setting)} | {link} |"
                )
            w = doc["weighted"]
            cells = []
            for m in METRICS:
                cells += [_pct(w[m]), "–", "–"]
            lines.append(
                f"| {MODELS[model]} | {SETTINGS[setting]} | weighted | "
                + " | ".join(cells)
                + f" | {_length(doc, setting)} | {link} |"
            )
            # FedE publishes per-client numbers only: the unweighted mean
            # over clients is the figure both tables give
            cells = []
            for j, m in enumerate(METRICS):
                ours = _client_mean(doc, m)
                pub = sum(p[j] for p in published) / len(published)
                cells += [_pct(ours), _pct(pub), _delta(ours, pub)]
            lines.append(
                f"| {MODELS[model]} | {SETTINGS[setting]} | mean of clients | "
                + " | ".join(cells)
                + f" | {_length(doc, setting)} | {link} |"
            )
    return "\n".join(lines)


def _relative_gains(
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


def _mean_gains(gains: list[tuple[int, float, float]]) -> tuple[float, float]:
    r"""The mean over clients of :func:`_relative_gains`: (ours, FedE's tables)."""
    return (
        sum(g for _, g, _ in gains) / len(gains),
        sum(p for _, _, p in gains) / len(gains),
    )


def gain_table(runs: dict) -> str:
    r"""FedE's relative test-MRR gain over Single per client (%), and its
    mean over clients, beside the paper's."""
    lines = [
        "| data | KGE | client | Single MRR | FedE MRR | gain ours (%) "
        "| gain FedE's tables (%) | FedE beats Single |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for data, model, single, fede, pub_s, pub_f in _pairs(runs, "single"):
        label = f"| {DATASETS[data]} | {MODELS[model]}"
        gains = _relative_gains(single, fede, pub_s, pub_f)
        for (k, g, p), cs, cf in zip(
            gains, single["clients"], fede["clients"], strict=True
        ):
            lines.append(
                f"{label} | {k + 1} | {_pct(cs['mrr'])} | {_pct(cf['mrr'])} | "
                f"{g:+.1f} | {p:+.1f} | {'yes' if cf['mrr'] > cs['mrr'] else 'no'} |"
            )
        text = f" (text: +{PUBLISHED_GAIN[data]})" if model == "rotate" else ""
        mean_ours, mean_theirs = _mean_gains(gains)
        lines.append(
            f"{label} | mean | – | – | {mean_ours:+.1f} | {mean_theirs:+.1f}{text} | "
            f"{'every client' if all(g > 0 for _, g, _ in gains) else 'not every client'} |"
        )
    return "\n".join(lines)


def _pairs(runs: dict, base: str) -> Any:
    r"""``(data, model, base run, FedE run, FedE's tables' base rows, FedE's
    tables' FedE rows)`` for every data set and model with both results, in
    the tables' order."""
    for data in DATASETS:
        for model in MODELS:
            first, fede = runs.get((data, model, base)), runs.get((data, model, "fede"))
            if first is not None and fede is not None:
                pub = PUBLISHED[data][model]
                yield data, model, first, fede, pub[base], pub["fede"]


def _entire_means(
    entire: dict[str, Any], fede: dict[str, Any], pub_e: list, pub_f: list
) -> tuple[float, float, float, float, int, int]:
    r"""``(Entire, FedE, FedE's tables' Entire, FedE's tables' FedE)`` test
    MRR as the mean over clients, and the clients where FedE beats Entire
    (ours, FedE's tables)."""
    pairs = zip(entire["clients"], fede["clients"], strict=True)
    wins = sum(cf["mrr"] > ce["mrr"] for ce, cf in pairs)
    pub_wins = sum(f[0] > e[0] for e, f in zip(pub_e, pub_f, strict=True))
    return (
        _client_mean(entire, "mrr"),
        _client_mean(fede, "mrr"),
        sum(c[0] for c in pub_e) / len(pub_e),
        sum(c[0] for c in pub_f) / len(pub_f),
        wins,
        pub_wins,
    )


def entire_table(runs: dict) -> str:
    r"""FedE against Entire (all clients' triples pooled): test MRR per client
    and as the mean over clients, ours and FedE's tables' difference in
    points (the paper's claim 2: FedE often beats Entire)."""
    lines = [
        "| data | KGE | client | Entire MRR | FedE MRR | FedE − Entire ours "
        "| FedE − Entire FedE's tables | FedE beats Entire (ours / FedE's tables) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for data, model, entire, fede, pub_e, pub_f in _pairs(runs, "entire"):
        label = f"| {DATASETS[data]} | {MODELS[model]}"
        for ce, cf in zip(entire["clients"], fede["clients"], strict=True):
            k = int(ce["client"])
            ours, theirs = cf["mrr"] > ce["mrr"], pub_f[k][0] > pub_e[k][0]
            lines.append(
                f"{label} | {k + 1} | {_pct(ce['mrr'])} | {_pct(cf['mrr'])} | "
                f"{_delta(cf['mrr'], ce['mrr'])} | {_delta(pub_f[k][0], pub_e[k][0])} | "
                f"{'yes' if ours else 'no'} / {'yes' if theirs else 'no'} |"
            )
        me, mf, pe, pf, wins, pub_wins = _entire_means(entire, fede, pub_e, pub_f)
        lines.append(
            f"{label} | mean | {_pct(me)} | {_pct(mf)} | {_delta(mf, me)} | "
            f"{_delta(pf, pe)} | {wins} / {pub_wins} of {len(pub_e)} clients |"
        )
    return "\n".join(lines)


def fusion_table(runs: dict) -> str:
    r"""Model fusion per dataset and KGE: weighted test MRR (%) without and
    with fusion, beside Table 5 (which names no model)."""
    lines = [
        "| data | KGE | Single | FedE (w/o fusion) | FedE + fusion | gain "
        "| Table 5 w/o | Table 5 w/ | Table 5 gain | results file |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for data, label in DATASETS.items():
        for model, name in MODELS.items():
            doc = runs.get((data, model, "fusion"))
            if doc is None:
                continue
            single = doc["weighted_single"]["mrr"]
            fed = doc["weighted_federated"]["mrr"]
            fused = doc["weighted"]["mrr"]
            without, with_ = PUBLISHED_FUSION[data]
            file = _name(data, model, "fusion")
            lines.append(
                f"| {label} | {name} | {_pct(single)} | {_pct(fed)} | {_pct(fused)} | "
                f"{_delta(fused, fed)} | {_pct(without)} | {_pct(with_)} | "
                f"{_delta(with_, without)} | [`{file}`](../results/{file}) |"
            )
    return "\n".join(lines)


def _best(doc: dict[str, Any], client: dict[str, Any]) -> str:
    if "best_round" in doc:
        return f"round {doc['best_round']}"
    return f"epoch {client.get('best_epoch', '?')}"


def repeat_table(runs: dict) -> str:
    r"""Test MRR (%) of a run and of its repeat (the same command), per client,
    weighted and as the mean of clients, with the best validation each chose."""
    lines = [
        "| data | KGE | setting | client | MRR first run | MRR repeat | Δ "
        "| best (first) | best (repeat) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (data, model, setting), again in runs.items():
        base = setting.removesuffix("-repeat")
        first = runs.get((data, model, base))
        if base == setting or first is None:
            continue
        label = f"| {DATASETS[data]} | {MODELS[model]} | {SETTINGS[base]}"
        for a, b in zip(first["clients"], again["clients"], strict=True):
            lines.append(
                f"{label} | {int(a['client']) + 1} | {_pct(a['mrr'])} | {_pct(b['mrr'])} "
                f"| {_delta(b['mrr'], a['mrr'])} | {_best(first, a)} | {_best(again, b)} |"
            )
        w1, w2 = first["weighted"]["mrr"], again["weighted"]["mrr"]
        lines.append(
            f"{label} | weighted | {_pct(w1)} | {_pct(w2)} | {_delta(w2, w1)} | – | – |"
        )
        m1, m2 = _client_mean(first, "mrr"), _client_mean(again, "mrr")
        lines.append(
            f"{label} | mean of clients | {_pct(m1)} | {_pct(m2)} | {_delta(m2, m1)} "
            "| – | – |"
        )
    return "\n".join(lines)


def claims_table(runs: dict) -> str:
    r"""FedE's three claims per dataset and KGE, from the finished runs: on how
    many clients FedE beats Single and Entire, the mean relative gain over
    Single and the mean difference to Entire (ours / FedE's tables), and
    the fusion gain in weighted MRR points (ours / Table 5); ``–`` where a
    run is missing."""
    lines = [
        "| data | KGE | FedE beats Single (clients, ours / FedE's tables) | gain over Single, mean of clients "
        "(%, ours / FedE's tables) | FedE beats Entire (clients, ours / FedE's "
        "tables) | FedE − Entire, mean of clients (points, ours / FedE's tables) "
        "| fusion gain (points, ours / Table 5) |",
        "|---|---|---|---|---|---|---|",
    ]
    claim1 = {}
    for data, model, single, fede, pub_s, pub_f in _pairs(runs, "single"):
        gains = _relative_gains(single, fede, pub_s, pub_f)
        wins = sum(g > 0 for _, g, _ in gains), sum(p > 0 for _, _, p in gains)
        ours, theirs = _mean_gains(gains)
        claim1[data, model] = (
            f"{wins[0]} / {wins[1]} of {len(gains)}",
            f"{ours:+.1f} / {theirs:+.1f}",
        )
    claim2 = {}
    for data, model, entire, fede, pub_e, pub_f in _pairs(runs, "entire"):
        me, mf, pe, pf, wins, pub_wins = _entire_means(entire, fede, pub_e, pub_f)
        claim2[data, model] = (
            f"{wins} / {pub_wins} of {len(pub_e)}",
            f"{_delta(mf, me)} / {_delta(pf, pe)}",
        )
    for data, label in DATASETS.items():
        for model, name in MODELS.items():
            if (data, model, "fede") not in runs:
                continue
            fusion = runs.get((data, model, "fusion"))
            fused = "–"
            if fusion is not None:
                without, with_ = PUBLISHED_FUSION[data]
                fed = fusion["weighted_federated"]["mrr"]
                fused = f"{_delta(fusion['weighted']['mrr'], fed)} / {_delta(with_, without)}"
            cells = [
                *claim1.get((data, model), ("–", "–")),
                *claim2.get((data, model), ("–", "–")),
                fused,
            ]
            lines.append(f"| {label} | {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


#: The captions of the document's tables, in the order of :func:`tables`.
TITLES = [
    *(f"{label}, test (%)" for label in DATASETS.values()),
    "FedE over Single",
    "FedE against Entire",
    "Model fusion",
    "The same run repeated",
    "Claims at a glance",
]


def tables(results: Path, finished_runs: bool = False) -> list[str]:
    r"""The document's tables, in order."""
    runs = load(results, finished_runs)
    return [client_table(runs, data) for data in DATASETS] + [
        gain_table(runs),
        entire_table(runs),
        fusion_table(runs),
        repeat_table(runs),
        claims_table(runs),
    ]


def update(doc: Path, results: Path, finished_runs: bool = False) -> list[str]:
    r"""Replaces each table of ``doc`` with the generated one and returns the
    titles replaced. A table sits under a line that starts with its title
    and ends with ``:``, after one blank line (an empty place is filled);
    :class:`ValueError` when a table with rows has no such line. The file
    is replaced whole (temp file, then rename)."""
    import re

    from fedgraph.data.io import atomic_write_text

    text, done = doc.read_text(), []
    for title, table in zip(TITLES, tables(results, finished_runs), strict=True):
        place = r"^" + re.escape(title) + r"[^\n]*:\n\n((?:\|[^\n]*\n)*)"
        m = re.search(place, text, flags=re.MULTILINE)
        if m is None:
            if table.count("\n") > 1:
                raise ValueError(
                    f"{doc}: no line starting with {title!r} and ending with ':' "
                    "(followed by a blank line) to put its table under"
                )
            continue
        text = text[: m.start(1)] + table + "\n" + text[m.end(1) :]
        done.append(title)
    atomic_write_text(doc, text)
    return done


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = Path(__file__).resolve().parents[1]
    p.add_argument("--results", type=Path, default=root / "docs" / "results")
    p.add_argument(
        "--finished-runs",
        action="store_true",
        help="read benchmarks/fede_claims.sh's run folders under --results",
    )
    p.add_argument(
        "--update",
        type=Path,
        default=None,
        metavar="DOC",
        help="replace the tables in DOC (e.g. docs/papers/fede-claims.md) instead "
        "of printing them",
    )
    a = p.parse_args(argv)
    if a.update is not None:
        try:
            done = update(a.update, a.results, a.finished_runs)
        except (OSError, ValueError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        print(f"{a.update}: {len(done)} tables replaced ({', '.join(done)})")
        return 0
    for title, table in zip(TITLES, tables(a.results, a.finished_runs), strict=True):
        print(f"{title}:\n\n{table}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
