r"""The page of FedE's own claims (``docs/papers/fede-claims.md``): its
tables (:mod:`generator.fede_claims_tables`, from the runs of
:mod:`generator.fede_claims_runs`) and the verdicts of FedE's three
claims per data set over the KGEs run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from generator.fede import wins
from generator.fede_claims_runs import (
    DATASETS,
    MODELS,
    load,
    published_clients,
    published_fusion,
)
from generator.fede_claims_tables import TABLES
from generator.verdict import Row, verdict_word

RULE = (
    "Per KGE: claim 1 when FedE beats Single on every client (mean relative MRR "
    "gain, clients won); claim 2 when it beats Entire on most clients (mean MRR "
    "difference, points); claim 3 when fusion gains (weighted MRR points); the "
    "levels within one point of the tables' mean of clients."
)

#: ``(data, KGE, base MRRs, FedE MRRs, published base, published FedE)``.
Pair = tuple[str, str, list, list, list, list]


def _mrrs(doc: dict) -> list[float]:
    return [100 * c["mrr"] for c in doc["clients"]]


def _pairs(runs: dict, base: str) -> list[Pair]:
    r"""``(data, KGE, base MRRs, FedE MRRs, published base, published FedE)``
    (per client, %) for every data set and KGE with both of ``runs``."""
    out = []
    for data in DATASETS:
        for model in MODELS:
            first, fede = runs.get((data, model, base)), runs.get((data, model, "fede"))
            if first is None or fede is None:
                continue
            pub = published_clients()[data][model]
            out.append((data, MODELS[model], _mrrs(first), _mrrs(fede),
                        [100 * c[0] for c in pub[base]], [100 * c[0] for c in pub["fede"]]))  # fmt: skip
    return out


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs)


def _gain(first: Sequence[float], then: Sequence[float]) -> float:
    r"""The mean over clients of the relative gain (%) of ``then`` over ``first``."""
    return _mean([100 * (b / a - 1) for a, b in zip(first, then, strict=True)])


def _claim_row(
    key: str, claim: str, cells: list[tuple[str, str, str, bool]], unit: str = "KGEs"
) -> Row:
    r"""A row over KGEs: ``cells`` = (KGE, published, ours, holds)."""
    if not cells:
        return (key, claim, "", "not run", "not run")
    pub = "; ".join(f"{m} {p}" for m, p, _, _ in cells)
    ours = "; ".join(f"{m} {o}" for m, _, o, _ in cells)
    held = [m for m, _, _, ok in cells if ok]
    word = verdict_word([ok for *_, ok in cells])
    return (key, claim, pub, ours, f"{word} ({len(held)} of {len(cells)} {unit})")


def _claim1(runs: dict, data: str) -> Row:
    cells = [
        (m, f"{_gain(ps, pf):+.1f} % ({wins(ps, pf)}/{len(ps)})",
         f"{_gain(s, f):+.1f} % ({wins(s, f)}/{len(s)})", wins(s, f) == len(s))
        for d, m, s, f, ps, pf in _pairs(runs, "single") if d == data
    ]  # fmt: skip
    claim = f"Claim 1, {DATASETS[data]}: FedE beats Single on every client"
    return _claim_row(f"claim1-{data}", claim, cells)


def _claim2(runs: dict, data: str) -> Row:
    cells = [
        (m, f"{_mean(pf) - _mean(pe):+.2f} ({wins(pe, pf)}/{len(pe)})",
         f"{_mean(f) - _mean(e):+.2f} ({wins(e, f)}/{len(e)})", 2 * wins(e, f) > len(e))
        for d, m, e, f, pe, pf in _pairs(runs, "entire") if d == data
    ]  # fmt: skip
    claim = f"Claim 2, {DATASETS[data]}: FedE beats Entire on most clients"
    return _claim_row(f"claim2-{data}", claim, cells)


def _levels(runs: dict, data: str) -> Row:
    cells = [
        (m, f"{_mean(pf):.2f}", f"{_mean(f):.2f}", abs(_mean(f) - _mean(pf)) <= 1)
        for d, m, s, f, ps, pf in _pairs(runs, "single")
        if d == data
    ]
    table = "Table 3" if data.startswith("fb") else "Table 4"
    claim = f"{table}, {DATASETS[data]}: FedE's MRR, mean of clients"
    return _claim_row(f"levels-{data}", claim, cells)


def _claim3(runs: dict) -> Row:
    cells = []
    for data, name in DATASETS.items():
        without, with_ = published_fusion()[data]
        for model, label in MODELS.items():
            doc = runs.get((data, model, "fusion"))
            if doc is not None:
                gain = 100 * (doc["weighted"]["mrr"] - doc["weighted_federated"]["mrr"])
                cells.append((f"{name} {label}", f"{100 * (with_ - without):+.2f}",
                              f"{gain:+.2f}", gain > 0))  # fmt: skip
    claim = "Claim 3: model fusion adds about one point"
    return _claim_row("claim3", claim, cells, "runs")


def verdicts(results: Path) -> list[Row]:
    r"""FedE's three claims per data set over the KGEs run: claim 1 holds for
    a KGE when FedE beats Single on every client (mean relative MRR gain,
    clients won); claim 2 when FedE beats Entire on most clients (mean MRR
    difference, points); claim 3 when fusion gains (weighted MRR points);
    Tables 3–4's FedE levels within one point of the mean of clients."""
    runs = load(results)
    return [
        *(_claim1(runs, d) for d in DATASETS),
        *(_claim2(runs, d) for d in DATASETS),
        _claim3(runs),
        *(_levels(runs, d) for d in DATASETS),
    ]


def _block(table: Callable[[dict], str]) -> Callable[[Path], str]:
    return lambda results: table(load(results))


BLOCKS: dict[str, Callable[[Path], str]] = {
    f"fede-claims-{name}": _block(table) for name, table in TABLES.items()
}
