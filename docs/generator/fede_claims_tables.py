r"""The tables of FedE's own claims (``docs/papers/fede-claims.md``): every
client's test metrics beside FedE's Tables 3–4, the gain over Single, FedE
against Entire, model fusion against Table 5, repeated runs and the claims
at a glance, from the runs of :mod:`generator.fede_claims_runs`."""

from __future__ import annotations

from typing import Any

from generator.fede_claims_runs import (
    DATASETS,
    METRICS,
    MODELS,
    SETTINGS,
    Rows,
    client_mean,
    delta,
    entire_means,
    mean_gains,
    pairs,
    pct,
    published_clients,
    published_fusion,
    published_gain,
    relative_gains,
    results_name,
)


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


def _client_rows(doc: dict[str, Any], published: Rows) -> list[tuple[str, list]]:
    r"""``(client cell, metric cells)`` per client, weighted and as the mean
    of clients (FedE publishes per-client numbers only: the unweighted mean
    over clients is the figure both tables give)."""
    rows = []
    for c in doc["clients"]:
        k = int(c["client"])
        cells = []
        for j, m in enumerate(METRICS):
            cells += [pct(c[m]), pct(published[k][j]),
                      delta(c[m], published[k][j])]  # fmt: skip
        rows.append((str(k + 1), cells))
    rows.append(("weighted", [x for m in METRICS
                              for x in (pct(doc["weighted"][m]), "–", "–")]))  # fmt: skip
    cells = []
    for j, m in enumerate(METRICS):
        ours = client_mean(doc, m)
        pub = sum(p[j] for p in published) / len(published)
        cells += [pct(ours), pct(pub), delta(ours, pub)]
    return [*rows, ("mean of clients", cells)]


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
            file = results_name(data, model, setting)
            end = f" | {_length(doc, setting)} | [`{file}`](../results/{file}) |"
            published = published_clients()[data][model][setting]
            for client, cells in _client_rows(doc, published):
                lines.append(
                    f"| {MODELS[model]} | {SETTINGS[setting]} | {client} | "
                    + " | ".join(cells)
                    + end
                )
    return "\n".join(lines)


def gain_table(runs: dict) -> str:
    r"""FedE's relative test-MRR gain over Single per client (%), and its
    mean over clients, beside the paper's."""
    lines = [
        "| data | KGE | client | Single MRR | FedE MRR | gain ours (%) "
        "| gain FedE's tables (%) | FedE beats Single |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for data, model, single, fede, pub_s, pub_f in pairs(runs, "single"):
        label = f"| {DATASETS[data]} | {MODELS[model]}"
        gains = relative_gains(single, fede, pub_s, pub_f)
        for (k, g, p), cs, cf in zip(
            gains, single["clients"], fede["clients"], strict=True
        ):
            lines.append(
                f"{label} | {k + 1} | {pct(cs['mrr'])} | {pct(cf['mrr'])} | "
                f"{g:+.1f} | {p:+.1f} | {'yes' if cf['mrr'] > cs['mrr'] else 'no'} |"
            )
        text = f" (text: +{published_gain()[data]})" if model == "rotate" else ""
        mean_ours, mean_theirs = mean_gains(gains)
        lines.append(
            f"{label} | mean | – | – | {mean_ours:+.1f} | {mean_theirs:+.1f}{text} | "
            f"{'every client' if all(g > 0 for _, g, _ in gains) else 'not every client'} |"
        )
    return "\n".join(lines)


def entire_table(runs: dict) -> str:
    r"""FedE against Entire (all clients' triples pooled): test MRR per client
    and as the mean over clients, ours and FedE's tables' difference in
    points (the paper's claim 2: FedE often beats Entire)."""
    lines = [
        "| data | KGE | client | Entire MRR | FedE MRR | FedE − Entire ours "
        "| FedE − Entire FedE's tables | FedE beats Entire (ours / FedE's tables) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for data, model, entire, fede, pub_e, pub_f in pairs(runs, "entire"):
        label = f"| {DATASETS[data]} | {MODELS[model]}"
        for ce, cf in zip(entire["clients"], fede["clients"], strict=True):
            k = int(ce["client"])
            ours, theirs = cf["mrr"] > ce["mrr"], pub_f[k][0] > pub_e[k][0]
            lines.append(
                f"{label} | {k + 1} | {pct(ce['mrr'])} | {pct(cf['mrr'])} | "
                f"{delta(cf['mrr'], ce['mrr'])} | {delta(pub_f[k][0], pub_e[k][0])} | "
                f"{'yes' if ours else 'no'} / {'yes' if theirs else 'no'} |"
            )
        me, mf, pe, pf, wins, pub_wins = entire_means(entire, fede, pub_e, pub_f)
        lines.append(
            f"{label} | mean | {pct(me)} | {pct(mf)} | {delta(mf, me)} | "
            f"{delta(pf, pe)} | {wins} / {pub_wins} of {len(pub_e)} clients |"
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
            without, with_ = published_fusion()[data]
            file = results_name(data, model, "fusion")
            lines.append(
                f"| {label} | {name} | {pct(single)} | {pct(fed)} | {pct(fused)} | "
                f"{delta(fused, fed)} | {pct(without)} | {pct(with_)} | "
                f"{delta(with_, without)} | [`{file}`](../results/{file}) |"
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
                f"{label} | {int(a['client']) + 1} | {pct(a['mrr'])} | {pct(b['mrr'])} "
                f"| {delta(b['mrr'], a['mrr'])} | {_best(first, a)} | {_best(again, b)} |"
            )
        w1, w2 = first["weighted"]["mrr"], again["weighted"]["mrr"]
        lines.append(
            f"{label} | weighted | {pct(w1)} | {pct(w2)} | {delta(w2, w1)} | – | – |"
        )
        m1, m2 = client_mean(first, "mrr"), client_mean(again, "mrr")
        lines.append(
            f"{label} | mean of clients | {pct(m1)} | {pct(m2)} | {delta(m2, m1)} "
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
    for data, model, single, fede, pub_s, pub_f in pairs(runs, "single"):
        gains = relative_gains(single, fede, pub_s, pub_f)
        wins = sum(g > 0 for _, g, _ in gains), sum(p > 0 for _, _, p in gains)
        ours, theirs = mean_gains(gains)
        claim1[data, model] = (
            f"{wins[0]} / {wins[1]} of {len(gains)}",
            f"{ours:+.1f} / {theirs:+.1f}",
        )
    claim2 = {}
    for data, model, entire, fede, pub_e, pub_f in pairs(runs, "entire"):
        me, mf, pe, pf, wins, pub_wins = entire_means(entire, fede, pub_e, pub_f)
        claim2[data, model] = (
            f"{wins} / {pub_wins} of {len(pub_e)}",
            f"{delta(mf, me)} / {delta(pf, pe)}",
        )
    for data, label in DATASETS.items():
        for model, name in MODELS.items():
            if (data, model, "fede") not in runs:
                continue
            fusion = runs.get((data, model, "fusion"))
            fused = "–"
            if fusion is not None:
                without, with_ = published_fusion()[data]
                fed = fusion["weighted_federated"]["mrr"]
                fused = (
                    f"{delta(fusion['weighted']['mrr'], fed)} / {delta(with_, without)}"
                )
            cells = [
                *claim1.get((data, model), ("–", "–")),
                *claim2.get((data, model), ("–", "–")),
                fused,
            ]
            lines.append(f"| {label} | {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


#: block ``fede-claims-NAME`` → its table, from the loaded runs.
TABLES = {
    "fb15k237-fed3": lambda runs: client_table(runs, "fb15k237-fed3"),
    "nell995-fed3": lambda runs: client_table(runs, "nell995-fed3"),
    "gain": gain_table,
    "entire": entire_table,
    "fusion": fusion_table,
    "repeat": repeat_table,
    "glance": claims_table,
}
