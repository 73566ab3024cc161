r"""Communication-efficiency metrics of `FedS <https://arxiv.org/abs/2406.13225>`_
§IV-B, computed from two runs' ``results.json`` (a method and the FedEP
baseline): MRR@CG, P@CG, P@99 / P@98 and R@CG.

Definitions used here (FedS gives them in words):

* a run *converges* at its best validation round (the one early stopping
  keeps); MRR@CG is its test MRR (``weighted.mrr``) and R@CG that round;
* P@CG is the number of parameters transmitted (up + down, from the ledger's
  ``comm_per_round``) through the convergence round;
* P@q (q = 0.99, 0.98) is the number of parameters transmitted through the
  first evaluated round whose weighted *validation* MRR reaches ``q`` times
  FedEP's best validation MRR (``None`` if never reached);
* every P is reported relative to FedEP's own value (FedEP = 1.00x).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def cumulative_params(
    comm_per_round: Mapping[str | int, Mapping[str, int]],
) -> dict[int, int]:
    r"""Round → parameters transmitted (up + down) through that round."""
    total, out = 0, {}
    for r in sorted(int(k) for k in comm_per_round):
        row = comm_per_round[str(r)] if str(r) in comm_per_round else comm_per_round[r]
        total += int(row.get("params_up", 0)) + int(row.get("params_down", 0))
        out[r] = total
    return out


def _curve(res: Mapping[str, Any]) -> list[tuple[int, float]]:
    return [
        (int(h["round"]), float(h["valid"]["mrr"]))
        for h in res["history"]
        if "valid" in h
    ]


def params_to_reach(res: Mapping[str, Any], threshold: float) -> tuple[int, int] | None:
    r"""``(round, params)`` at the first validation MRR ``>= threshold``."""
    cum = cumulative_params(res["comm_per_round"])
    for r, mrr in _curve(res):
        if mrr >= threshold:
            return r, cum[max(k for k in cum if k <= r)]
    return None


def feds_metrics(
    res: Mapping[str, Any],
    baseline: Mapping[str, Any],
    qs: tuple[float, ...] = (0.99, 0.98),
) -> dict[str, Any]:
    r"""MRR@CG, R@CG, P@CG and P@q of ``res`` relative to ``baseline`` (FedEP).

    Args:
        res (Mapping): the method's ``results.json``.
        baseline (Mapping): FedEP's ``results.json``.
        qs (tuple[float, ...]): the accuracy fractions. (default: 0.99, 0.98)
    """
    base_best = max(m for _, m in _curve(baseline))
    out: dict[str, Any] = {
        "mrr@cg": res["weighted"]["mrr"],
        "mrr@cg_vs_baseline": res["weighted"]["mrr"] / baseline["weighted"]["mrr"],
        "r@cg": int(res["best_round"]),
    }
    pcg = {}
    for name, run in (("method", res), ("baseline", baseline)):
        cum = cumulative_params(run["comm_per_round"])
        pcg[name] = cum[max(k for k in cum if k <= int(run["best_round"]))]
    out["p@cg"] = pcg["method"] / pcg["baseline"]
    out["params@cg"] = pcg
    for q in qs:
        key = f"p@{round(q * 100)}"
        a = params_to_reach(res, q * base_best)
        b = params_to_reach(baseline, q * base_best)
        out[key] = None if a is None or b is None else a[1] / b[1]
        out[f"{key}_rounds"] = {"method": a and a[0], "baseline": b and b[0]}
    return out


__all__ = ["cumulative_params", "params_to_reach", "feds_metrics"]
