r"""Curves and run lengths read from a federated run's results file."""

from __future__ import annotations

from typing import Any


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


def run_length(doc: dict[str, Any]) -> str:
    r"""Rounds (federated) or epochs per client (baselines) of a run."""
    clients = doc.get("clients", [])
    if "best_round" in doc:
        return f"round {doc['best_round']} of {doc['rounds']}"
    if clients and "epochs" in clients[0]:
        epochs = "/".join(str(c["epochs"]) for c in clients)
        best = "/".join(str(c["best_epoch"]) for c in clients)
        return f"epochs {best} of {epochs}"
    return f"{doc.get('rounds', '?')} rounds"
