r"""The privacy page (``docs/papers/privacy.md``): the attacks of
:mod:`fedgraph.privacy.attacks` on FedE's uploads, SecAgg and FedR, from the
results files of ``benchmarks/privacy_table.py``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from fedgraph.report.files import load_json
from fedgraph.report.privacy import not_run, privacy_files, privacy_table
from generator.commands import commands_list
from generator.verdict import Row, slash, verdict_word, within

PREFIXES = ("umls-r3-privacy", "fedlu-r3-privacy")

RULE = (
    "UMLS / FedLU R3: the uploads raise the triple attack's AUC by 0.1 or more "
    "over the attacker's knowledge alone; SecAgg's test MRR within 0.005 of "
    "FedE's; FedR's attack within 0.05 of chance."
)


def _attack(doc: dict[str, Any], part: str, attack: str = "triple-inference") -> float:
    return float(doc["audits"][attack][part]["auc"])


def _privacy_docs(results: Path, setting: str) -> list[dict[str, Any]]:
    r"""The UMLS and FedLU-R3 privacy results of ``setting`` (those present)."""
    docs = [load_json(results / f"{p}-{setting}.json") for p in PREFIXES]
    return [d for d in docs if d is not None]


def _leak_row(results: Path) -> Row:
    docs = _privacy_docs(results, "fede")
    with_rows = [_attack(d, "mean") for d in docs]
    alone = [_attack(d, "knowledge_only") for d in docs]
    gains = [w - a for w, a in zip(with_rows, alone, strict=True)]
    ok = [g >= 0.1 for g in gains]
    return ("leak", "Hu et al.: undefended FedE's uploads reveal triples",
            "83.1 % attack success (their attacks and data)",
            f"AUC {slash(with_rows, '.3f')}; {slash(alone, '.3f')} without the rows",
            f"{verdict_word(ok)} (AUC {slash(gains, '+.3f')})")  # fmt: skip


def _secagg_row(results: Path) -> Row:
    fede = [d["results"]["weighted"]["mrr"] for d in _privacy_docs(results, "fede")]
    sec = [d["results"]["weighted"]["mrr"] for d in _privacy_docs(results, "secagg")]
    deltas = [s - f for f, s in zip(fede, sec, strict=True)]
    return ("secagg", "Secure aggregation leaves the model unchanged",
            "the exact sum", f"test MRR {slash(sec, '.4f')} (FedE {slash(fede, '.4f')})",
            within(deltas, [0.005] * len(deltas), "+.4f"))  # fmt: skip


def _fedr_row(results: Path) -> Row:
    docs = _privacy_docs(results, "fedr")
    auc = [_attack(d, "mean") for d in docs]
    deltas = [a - 0.5 for a in auc]
    return ("fedr", "FedR: relation uploads reveal no triples", "chance (AUC 0.500)",
            f"AUC {slash(auc, '.3f')}", within(deltas, [0.05] * len(auc), "+.3f"))  # fmt: skip


def verdicts(results: Path) -> list[Row]:
    r"""UMLS R3 / FedLU R3 (each ``/``-separated pair): the triple attack's
    mean AUC with the uploaded rows against the attacker's knowledge alone
    (a gain of 0.1 or more: the uploads reveal triples), SecAgg's test MRR
    against FedE's (within 0.005), FedR's attack at chance (within 0.05)."""
    if not _privacy_docs(results, "fede"):
        return [("leak", "Hu et al.", "", "not run", "not run")]
    return [_leak_row(results), _secagg_row(results), _fedr_row(results)]


def _commands(results: Path, prefix: str) -> str:
    names = privacy_files(results, prefix)
    return commands_list(results, names) if names else not_run(prefix)


BLOCKS: dict[str, Callable[[Path], str]] = {
    "privacy-umls": lambda r: privacy_table(r, "umls-r3-privacy"),
    "privacy-umls-commands": lambda r: _commands(r, "umls-r3-privacy"),
    "privacy-r3": lambda r: privacy_table(r, "fedlu-r3-privacy"),
    "privacy-r3-commands": lambda r: _commands(r, "fedlu-r3-privacy"),
}
