r"""What a federated run returns: :class:`SimulationResult`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class SimulationResult:
    r"""What :func:`~fedgraph.runtime.run_federation` and
    :func:`~fedgraph.runtime.run_simulation` return (and ``results.json``
    holds).

    Attributes:
        history (list[dict]): one entry per round: ``round``, ``clients``
            (sampled), ``train_seconds``, ``train`` (merged training
            metrics) and, on evaluated rounds, ``eval_seconds``, ``valid``
            (weighted) and ``valid_clients`` (per client).
        rounds (int): rounds completed.
        best_round (int): the round whose weighted validation metric was best.
        client_best_rounds (dict[int, int]): with per-client selection, the
            round whose state each client's test used (empty otherwise: every
            client used :attr:`best_round`'s).
        best_valid (dict): weighted validation metrics at :attr:`best_round`.
        test (dict): weighted test metrics of the best-round models.
        test_clients (dict[int, dict]): per-client test metrics (``count`` is
            the number of ranking queries; ``n_test`` the number of triples
            when the client reports it).
        comm (dict): communication totals (:meth:`CommLedger.totals`).
        comm_per_round (dict): round → totals.
        seconds_per_round (float): mean training wall time per round
            (configure + local training + aggregation; evaluation excluded).
        seconds_per_eval (float): mean wall time per validation pass.
        stopped_early (bool): whether early stopping ended the run.
        test_events (list[dict]): clients that failed or were skipped in
            the test pass (a fault-tolerant transport; the rounds' events
            are in their ``history`` entries under ``events``).
    """

    history: list[dict[str, Any]] = field(default_factory=list)
    rounds: int = 0
    best_round: int = 0
    client_best_rounds: dict[int, int] = field(default_factory=dict)
    best_valid: dict[str, float] = field(default_factory=dict)
    test: dict[str, float] = field(default_factory=dict)
    test_clients: dict[int, dict[str, float]] = field(default_factory=dict)
    comm: dict[str, int] = field(default_factory=dict)
    comm_per_round: dict[int, dict[str, int]] = field(default_factory=dict)
    seconds_per_round: float = 0.0
    seconds_per_eval: float = 0.0
    stopped_early: bool = False
    test_events: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if not self.client_best_rounds:  # runs of one best round keep their format
            del out["client_best_rounds"]
        if not self.test_events:
            del out["test_events"]
        return out

    def write_results(
        self, path: str | os.PathLike[str], settings: Mapping[str, Any]
    ) -> Path:
        r"""Writes ``path`` in the :func:`fedgraph.eval.write_results` format:
        the best round's test metrics as ``weighted`` (two-model methods such
        as FedLU: the ``global_*`` ones as ``weighted_global``), one row per
        client with its ``n_test`` triples, the learning curve and the
        communication totals (overall and per round)."""
        from fedgraph.eval import write_results

        client_rows = []
        for c, m in sorted(self.test_clients.items()):
            row = {"client": c, "n_test": int(m.get("n_triples", 0)), **m}
            row.pop("n_triples", None)
            if self.client_best_rounds:
                row["best_round"] = int(self.client_best_rounds[c])
            client_rows.append(row)
        split_global = {
            k[7:]: v for k, v in self.test.items() if k.startswith("global_")
        }
        return write_results(
            path,
            weighted={
                k: v for k, v in self.test.items() if not k.startswith("global_")
            },
            **({"weighted_global": split_global} if split_global else {}),
            clients=client_rows,
            rounds=self.rounds,
            seconds_per_round=self.seconds_per_round,
            comm=self.comm,
            settings=settings,
            history=self.history,
            best_round=self.best_round,
            best_valid=self.best_valid,
            seconds_per_eval=self.seconds_per_eval,
            stopped_early=self.stopped_early,
            comm_per_round={str(k): v for k, v in self.comm_per_round.items()},
            **({"test_events": self.test_events} if self.test_events else {}),
        )


__all__ = ["SimulationResult"]
