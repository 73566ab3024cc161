r"""The FedMKGC page (``docs/papers/fedmkgc.md``): the DBP-5L slice and the
reduced protocol of ``benchmarks/fedmkgc_reduced.sh`` (Greek alone against
FedMKGC, per encoder), against ``published/fedmkgc.json``."""

from __future__ import annotations

import glob
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fedgraph.report.files import load_json
from generator.commands import commands_list
from generator.files import published_table, results_link
from generator.verdict import Row, verdict_word

#: results files of ``benchmarks/fedmkgc_reduced.sh``: ``PREFIX TAG NAME``,
#: Greek alone (``independent-el``), then the federations
#: ``fedmkgc-<partners>-el``.
MKGC_REDUCED = "fedmkgc-reduced-"

#: the script's ``TAG`` of each encoder's runs, and the encoder's label.
ENCODERS = (
    ("", "MiniLM"),
    ("translit-", "MiniLM + romanised titles"),
    ("e5-", "multilingual-e5-small"),
)

#: the five DBP-5L languages in the paper's table order, with their names.
LANGUAGES = (
    ("el", "Greek"),
    ("ja", "Japanese"),
    ("fr", "French"),
    ("es", "Spanish"),
    ("en", "English"),
)

#: the script's ``TAG`` of each encoder's five-language runs (``PARTNERS="en
#: fr es ja" EVERY_LANGUAGE=1 STEPS=20 GREEK_ROUNDS=3``: 3 rounds of at most
#: 20 steps per language), and the encoder's label.
FIVE_ENCODERS = (
    ("s20r3-", "MiniLM"),
    ("translit-s20r3-", "MiniLM + romanised titles"),
    ("e5-s20r3-", "multilingual-e5-small"),
)
#: the language order of the five-language runs (FedMKGC's cycle).
FIVE = "en-fr-es-ja-el"

RULE = (
    "Test MRR (%) of FedMKGC above Independent's (the language alone): Greek "
    "with Greek + English, Greek and Japanese with all five languages."
)


def greek() -> dict[str, list[float]]:
    r"""FedMKGC's Tables 2–3, Greek: row label → (Hits@1, Hits@10, MRR) %."""
    return published_table("fedmkgc", "greek")


def fedmkgc_table(results: Path) -> str:
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
        doc = load_json(results / name)
        if doc is None:
            continue
        rows = []
        if isinstance(doc.get("zero_shot"), dict) and "weighted" in doc["zero_shot"]:
            z = doc["zero_shot"]
            rows.append(("before training", z["weighted"], z.get("clients", {})))
        rows.append((label, doc["weighted"], doc.get("clients", {})))
        langs = doc.get("languages", [])
        for lab, w, clients in rows:
            per = " / ".join(
                f"{lang} {100 * clients[str(i)]['mrr']:.2f}"
                for i, lang in enumerate(langs)
                if str(i) in clients
            )
            lines.append(
                f"| {lab} | {100 * w['mrr']:.2f} | {100 * w['hits@1']:.2f} | "
                f"{100 * w['hits@10']:.2f} | {per} | {results_link(name)} |"
            )
    return "\n".join(lines)


def _label(doc: dict[str, Any], encoder: str) -> str:
    langs = (doc.get("settings") or {}).get("client_languages") or []
    if doc["settings"].get("algorithm") == "independent":
        return f"{encoder}: Independent, Greek alone"
    return f"{encoder}: FedMKGC, sequential " + " → ".join(langs)


def reduced_runs(
    results: Path, encoders: Sequence[tuple[str, str]] = ENCODERS
) -> list[tuple[str, str, dict[str, Any]]]:
    r"""``(row label, file name, results)`` of the reduced protocol's runs
    per encoder of ``encoders`` (those with results files): Independent Greek
    first, then each FedMKGC federation ending in Greek."""
    out = []
    for tag, encoder in encoders:
        prefix = f"{MKGC_REDUCED}{tag}"
        names = [f"{prefix}independent-el.json"] + sorted(
            Path(f).name for f in glob.glob(str(results / f"{prefix}fedmkgc-*-el.json"))
        )
        for name in names:
            doc = load_json(results / name)
            if doc is not None:
                out.append((_label(doc, encoder), name, doc))
    return out


def _client_of(doc: dict[str, Any], language: str) -> int | None:
    langs = (doc.get("settings") or {}).get("client_languages") or []
    return langs.index(language) if language in langs else None


def _language_metrics(doc: dict[str, Any], language: str) -> dict[str, Any] | None:
    r"""The test metrics of ``language``'s client in a text run's results
    (:obj:`None` without them)."""
    k = _client_of(doc, language)
    clients = {c["client"]: c for c in doc.get("clients", [])}
    return clients.get(k) if k is not None else None


def _tested_round(doc: dict[str, Any]) -> int:
    return int(doc.get("best_round", doc.get("rounds", 0)))


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


def _reduced_row(label: str, name: str, doc: dict[str, Any]) -> str | None:
    greek_client = _client_of(doc, "el")
    clients = {c["client"]: c for c in doc.get("clients", [])}
    if greek_client is None or greek_client not in clients:
        return None
    el = clients[greek_client]
    best = _tested_round(doc)
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
    return (
        f"| {label} | {100 * el['hits@1']:.2f} | {100 * el['hits@10']:.2f} | "
        f"{100 * el['mrr']:.2f} | {int(el.get('n_test', 0)):,} | "
        f"{_steps(doc, greek_client, best)} ({total:,}) | {best} of {doc.get('rounds')} | "
        f"{others or '—'} | {results_link(name)} |"
    )


def fedmkgc_reduced_table(results: Path) -> str:
    r"""Markdown: Greek test metrics of the reduced protocol's runs (each at
    its best validation round) beside the published ones, with the Greek
    steps trained by that round, the test triples ranked (head and tail of
    each) and the other languages' test MRR; one row per run and encoder."""
    lines = [
        "| model | Greek Hits@1 | Hits@10 | MRR | Greek test triples | "
        "Greek steps (all clients) | tested round | other languages, MRR | results file |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, (h1, h10, mrr) in greek().items():
        lines.append(f"| {label} | {h1:.1f} | {h10:.1f} | {mrr:.1f} | | | | | |")
    rows = (_reduced_row(*run) for run in reduced_runs(results))
    return "\n".join(lines + [row for row in rows if row is not None])


def fedmkgc_reduced_curves(results: Path) -> str:
    r"""Markdown: Greek validation MRR of each reduced-protocol run against
    the Greek steps trained so far (one row per step count validated)."""
    runs = reduced_runs(results)
    by_steps: dict[int, dict[str, float]] = {}
    for label, _, doc in runs:
        greek_client = _client_of(doc, "el")
        for h in doc.get("history", []):
            valid = (h.get("valid_clients") or {}).get(str(greek_client))
            if valid is None:
                continue
            n = mkgc_client_steps(doc, int(greek_client), h["round"])
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


def _greek_losses(label: str, doc: dict[str, Any]) -> tuple[str, list[float]]:
    greek_client = _client_of(doc, "el")
    greek_rounds = [
        h
        for h in doc.get("history", [])
        if h.get("clients") == [greek_client] and "loss" in (h.get("train") or {})
    ]
    if doc["settings"].get("algorithm") != "independent":
        label += " (rounds " + ", ".join(str(h["round"]) for h in greek_rounds) + ")"
    return label, [h["train"]["loss"] for h in greek_rounds]


def fedmkgc_reduced_losses(results: Path) -> str:
    r"""Markdown: each reduced-protocol run's mean training loss in the
    rounds that trained Greek alone, in order (a FedMKGC run's label lists
    those rounds)."""
    rows = [_greek_losses(label, doc) for label, _, doc in reduced_runs(results)]
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


def verdicts(results: Path) -> list[Row]:
    r"""FedMKGC's claim that Greek gains from the other languages: Greek test
    MRR (%) of FedMKGC over Greek alone, one row per encoder whose two runs
    have results (the default encoder, MiniLM, always: "not run" without
    them), beside the paper's FedMKGC_OL against SimKGC on Greek alone (a
    gain: reproduced)."""
    pub = [v[2] for v in greek().values()]
    published = f"{pub[1] - pub[2]:+.1f} ({pub[1]:.1f} against {pub[2]:.1f})"
    rows = []
    for i, (tag, encoder) in enumerate(ENCODERS):
        key = "greek" + (f"-{tag.rstrip('-')}" if tag else "")
        claim = f"Greek gains from the other languages (Tables 2–3), {encoder}"
        mrr = _greek_mrr(results, (tag, encoder))
        if set(mrr) == {"independent", "fedmkgc"}:
            cells = _gain_cells(mrr["fedmkgc"], mrr["independent"])
            rows.append((key, claim, published, *cells))
        elif i == 0:
            rows.append((key, claim, published, "not run", "not run"))
    return rows + five_language_verdicts(results)


def _gain_cells(fed: float, alone: float) -> tuple[str, str]:
    r"""The fedgraph and verdict cells of FedMKGC's test MRR ``fed`` against
    Independent's ``alone`` (%): a gain is reproduced."""
    gain = fed - alone
    return (
        f"{gain:+.2f} ({fed:.2f} against {alone:.2f})",
        f"{verdict_word([gain > 0])} (Δ {gain:+.2f})",
    )


#: the five-language runs' claims: the paper's low-resource languages gain
#: from the other four (Table 2, titles translated into English; Table 3's
#: FedMKGC_OL keeps them in their own language, the setting of the runs).
FIVE_CLAIMS = (("el", "Greek"), ("ja", "Japanese"))


def five_language_verdicts(results: Path) -> list[Row]:
    r"""Per encoder of :data:`FIVE_ENCODERS` with both five-language runs and
    per language of :data:`FIVE_CLAIMS`: that language's test MRR (%) of
    FedMKGC over Independent's, beside the paper's FedMKGC against SimKGC
    alone (Table 2) and FedMKGC_OL's (Table 3); a gain: reproduced."""
    published = published_table("fedmkgc", "languages")
    rows = []
    for tag, encoder in FIVE_ENCODERS:
        docs = [load_json(results / five_language_file(tag, alg))
                for alg in ("fedmkgc", "independent")]  # fmt: skip
        if None in docs:
            continue
        for lang, language in FIVE_CLAIMS:
            fed, alone = (100 * _language_metrics(d, lang)["mrr"] for d in docs)
            main, ol, simkgc = (v[2] for v in published[lang].values())
            rows.append((
                f"five-{lang}-{tag.rstrip('-')}",
                f"{language} gains from the other four languages (Tables 2–3), {encoder}",
                f"{main - simkgc:+.1f} ({main:.1f} against {simkgc:.1f}); "
                f"own-language titles {ol - simkgc:+.1f} ({ol:.1f})",
                *_gain_cells(fed, alone),
            ))  # fmt: skip
    return rows


def _greek_mrr(results: Path, encoder: tuple[str, str]) -> dict[str, float]:
    r"""Greek test MRR (%) of one encoder's runs: ``independent`` and
    ``fedmkgc``, those with results."""
    mrr = {}
    for _, _, doc in reduced_runs(results, (encoder,)):
        el = _language_metrics(doc, "el")
        if el is not None:
            alone = doc["settings"].get("algorithm") == "independent"
            mrr["independent" if alone else "fedmkgc"] = 100 * el["mrr"]
    return mrr


def five_language_file(tag: str, algorithm: str) -> str:
    r"""The results file of the five-language run of ``algorithm`` with the
    encoder of ``tag`` (:data:`FIVE_ENCODERS`)."""
    return f"{MKGC_REDUCED}{tag}{algorithm}-{FIVE}.json"


def five_language_runs(results: Path) -> list[tuple[str, str, dict[str, Any]]]:
    r"""``(row label, file name, results)`` of the five-language runs with
    results files, per encoder of :data:`FIVE_ENCODERS`: Independent (each
    language alone), then FedMKGC (sequential over the five)."""
    out = []
    for tag, encoder in FIVE_ENCODERS:
        for algorithm, label in (
            ("independent", "Independent, alone"),
            ("fedmkgc", "FedMKGC, sequential " + FIVE.replace("-", " → ")),
        ):
            name = five_language_file(tag, algorithm)
            doc = load_json(results / name)
            if doc is not None:
                out.append((f"{encoder}: {label}", name, doc))
    return out


def _language_row(label: str, name: str, doc: dict[str, Any], lang: str) -> str | None:
    m = _language_metrics(doc, lang)
    if m is None:
        return None
    ranked, of = int(m.get("n_test", 0)), int(m.get("n_split_triples", 0))
    triples = f"{ranked:,}" + (f" of {of:,}" if of and of != ranked else "")
    return (
        f"| | {label} | {100 * m['hits@1']:.2f} | {100 * m['hits@10']:.2f} | "
        f"{100 * m['mrr']:.2f} | {triples} | {_tested_round(doc)} of {doc.get('rounds')} | "
        f"{results_link(name)} |"
    )


def fedmkgc_languages_table(results: Path) -> str:
    r"""Markdown: per DBP-5L language, the paper's FedMKGC (translated
    titles), FedMKGC_OL (titles in their own language) and SimKGC alone
    beside each encoder's five-language runs: test Hits@1, Hits@10 and MRR
    (%), the test triples ranked (of the split's) and the round tested."""
    published = published_table("fedmkgc", "languages")
    runs = five_language_runs(results)
    lines = [
        "| language | model | Hits@1 | Hits@10 | MRR | test triples | "
        "tested round | results file |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for lang, language in LANGUAGES:
        for i, (label, (h1, h10, mrr)) in enumerate(published[lang].items()):
            first = f" {language} ({lang}) " if i == 0 else " "
            lines.append(
                f"|{first}| {label} | {h1:.1f} | {h10:.1f} | {mrr:.1f} | | | |"
            )
        rows = (_language_row(*run, lang) for run in runs)
        lines += [row for row in rows if row is not None]
    return "\n".join(lines)


def paired_file(tag: str) -> str:
    r"""The results file of ``benchmarks/fedmkgc_paired.py`` on the
    five-language runs of the encoder of ``tag`` (:data:`FIVE_ENCODERS`)."""
    return f"fedmkgc-paired-{tag.rstrip('-')}.json"


def fedmkgc_paired_table(results: Path) -> str:
    r"""Markdown: per encoder with a paired comparison of its five-language
    runs and per language compared, FedMKGC's and Independent's test MRR
    (%), their difference with its 95 % paired bootstrap interval over the
    test triples, and the shares of queries each ranks higher."""
    lines = [
        "| encoder | language | FedMKGC | alone | difference | 95 % interval | "
        "queries ranked higher: FedMKGC / alone | queries | results file |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    names = dict(LANGUAGES)
    for tag, encoder in FIVE_ENCODERS:
        doc = load_json(results / paired_file(tag))
        if doc is None:
            continue
        for lang, d in doc["languages"].items():
            low, high = (100 * x for x in d["ci95"])
            lines.append(
                f"| {encoder} | {names.get(lang, lang)} | {100 * d['a']['mrr']:.2f} | "
                f"{100 * d['b']['mrr']:.2f} | {100 * d['mrr_difference']:+.2f} | "
                f"{low:+.2f} to {high:+.2f} | {100 * d['a_ranks_higher']:.1f} % / "
                f"{100 * d['b_ranks_higher']:.1f} % | {d['queries']:,} | "
                f"{results_link(paired_file(tag))} |"
            )
    if len(lines) == 2:
        return "Not run yet: benchmarks/fedmkgc_paired.py."
    return "\n".join(lines)


def fedmkgc_paired_commands(results: Path) -> str:
    r"""Markdown list: the command recorded in each paired comparison."""
    names = [paired_file(tag) for tag, _ in FIVE_ENCODERS]
    return commands_list(results, names) or "Not run yet: benchmarks/fedmkgc_paired.py."


BLOCKS: dict[str, Callable[[Path], str]] = {
    "fedmkgc-slice": fedmkgc_table,
    "fedmkgc-reduced": fedmkgc_reduced_table,
    "fedmkgc-reduced-curves": fedmkgc_reduced_curves,
    "fedmkgc-reduced-losses": fedmkgc_reduced_losses,
    "fedmkgc-languages": fedmkgc_languages_table,
    "fedmkgc-languages-commands": lambda r: (
        commands_list(r, [name for _, name, _ in five_language_runs(r)])
        or "Not run yet: the five-language command of benchmarks/fedmkgc_reduced.sh."
    ),
    "fedmkgc-paired": fedmkgc_paired_table,
    "fedmkgc-paired-commands": fedmkgc_paired_commands,
    "fedmkgc-reduced-commands": lambda r: commands_list(
        r, [name for _, name, _ in reduced_runs(r)]
    ),
}
