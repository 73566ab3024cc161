r"""The federated round loop over a :class:`Transport`: the Flower server's
loop, written against an interface so that the very same code also runs the
clients in-process (:class:`InProcessTransport`).

It makes every decision :func:`fedgraph.runtime.run_simulation` makes, with
its helpers: the clients of round ``t`` come from
:func:`~fedgraph.runtime.sample_clients` (generator seeded by ``(seed, t)``),
payloads are counted in a :class:`~fedgraph.federated.CommLedger` as they
are handed over, training metrics are merged with
:func:`~fedgraph.federated.merge_metric_sums`, validation runs every
``eval_every`` rounds and at the last one, early stopping counts evaluations
without improvement of the weighted ``monitor``, and the best round's models
are evaluated on ``"test"``. It returns the same
:class:`~fedgraph.runtime.SimulationResult`.

``run_simulation`` itself is left as it is: its checkpoint/resume format is
in use by running experiments, and checkpointing clients from the server is
an in-process feature (a Flower server cannot save its clients' states).
"""

from __future__ import annotations

import copy
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from fedgraph.federated.aggregate import merge_metric_sums
from fedgraph.federated.base import Client, Strategy
from fedgraph.federated.comm import CommLedger
from fedgraph.federated.payload import Payload
from fedgraph.runtime.simulation import SimulationResult, sample_clients


class Transport(ABC):
    r"""Carries payloads between the server loop and the clients.

    Replies come back keyed by client id, in the order of the payloads
    sent (aggregation sums in that order, so the order is part of the
    result).
    """

    @abstractmethod
    def client_ids(self) -> list[int]:
        r"""The ids of all clients (after :meth:`register`)."""

    @abstractmethod
    def register(self) -> dict[int, Payload]:
        r"""Every client's one-off registration payload, by client id."""

    @abstractmethod
    def fit(
        self, server_round: int, payloads: Mapping[int, Payload]
    ) -> dict[int, Payload]:
        r"""Sends training payloads; returns the ``fit`` replies."""

    @abstractmethod
    def evaluate(
        self, server_round: int, payloads: Mapping[int, Payload], split: str
    ) -> dict[int, Payload]:
        r"""Sends evaluation payloads; returns the ``evaluate`` replies. On
        ``"valid"`` the clients' evaluated states are best-round candidates;
        after :meth:`restore_best`, clients evaluate their best-round state."""

    @abstractmethod
    def keep_best(self, server_round: int) -> None:
        r"""The states the clients evaluated at ``server_round`` are the best
        so far."""

    @abstractmethod
    def restore_best(self) -> None:
        r"""From now on clients use their best-round states."""


class InProcessTransport(Transport):
    r"""Clients as Python objects (what ``run_simulation`` does): payloads
    are handed over as detached copies, best-round states are client
    ``state_dict`` snapshots."""

    def __init__(self, clients: Mapping[int, Client]) -> None:
        self.clients = dict(clients)
        self._best: dict[int, Any] | None = None

    def client_ids(self) -> list[int]:
        return sorted(int(c) for c in self.clients)

    def register(self) -> dict[int, Payload]:
        return {c: self.clients[c].register() for c in self.client_ids()}

    def fit(
        self, server_round: int, payloads: Mapping[int, Payload]
    ) -> dict[int, Payload]:
        return {c: self.clients[c].fit(p.detach()) for c, p in payloads.items()}

    def evaluate(
        self, server_round: int, payloads: Mapping[int, Payload], split: str
    ) -> dict[int, Payload]:
        return {c: self.clients[c].evaluate(p.detach()) for c, p in payloads.items()}

    def keep_best(self, server_round: int) -> None:
        # deep copies: a state_dict may alias live tensors (optimiser moments)
        self._best = {
            c: copy.deepcopy(cl.state_dict()) for c, cl in self.clients.items()
        }

    def restore_best(self) -> None:
        if self._best is None:  # pragma: no cover - guarded by best_round > 0
            raise RuntimeError("No best-round client states were kept")
        for c, cl in self.clients.items():
            cl.load_state_dict(self._best[c])


def _exchange(
    ledger: CommLedger,
    server_round: int,
    payloads: Mapping[int, Payload],
    send: Callable[[Mapping[int, Payload]], dict[int, Payload]],
) -> dict[int, Payload]:
    for c, p in payloads.items():
        ledger.record(server_round, c, "down", p)
    replies = send(payloads)
    for c, r in replies.items():
        ledger.record(server_round, c, "up", r)
    return {c: r.detach() for c, r in replies.items()}


def evaluate_clients(
    strategy: Strategy,
    transport: Transport,
    server_round: int,
    split: str,
    ledger: CommLedger,
) -> tuple[dict[str, float], dict[int, dict[str, float]]]:
    r"""One evaluation pass on ``split`` over every client (the transport
    twin of :func:`~fedgraph.runtime.evaluate_round`): the weighted metrics
    and the per-client ones."""
    payloads = strategy.configure_evaluate(server_round, transport.client_ids(), split)
    replies = _exchange(
        ledger,
        server_round,
        payloads,
        lambda p: transport.evaluate(server_round, p, split),
    )
    weighted = strategy.aggregate_evaluate(server_round, replies)
    per_client = {}
    for c, r in replies.items():
        m = strategy.client_metrics(r)
        m.update({k: v for k, v in r.metrics.items() if k.startswith("n_")})
        per_client[c] = m
    return weighted, per_client


def run_federation(
    strategy: Strategy,
    transport: Transport,
    *,
    num_rounds: int,
    fraction: float = 1.0,
    eval_every: int = 5,
    patience: int = 3,
    monitor: str = "mrr",
    seed: int = 0,
    progress: bool = False,
    test: bool = True,
    on_round: Callable[[dict[str, Any]], None] | None = None,
) -> SimulationResult:
    r"""Runs a federation over ``transport``; the arguments mean what they
    mean in :func:`~fedgraph.runtime.run_simulation` (which has no transport
    but adds checkpointing and resume).

    Args:
        strategy (Strategy): the server side.
        transport (Transport): where the clients are.
        num_rounds (int): maximum number of rounds.
        fraction (float, optional): client fraction :math:`F`. (default: :obj:`1.0`)
        eval_every (int, optional): evaluate every ``k`` rounds. (default: :obj:`5`)
        patience (int, optional): evaluations without improvement before
            stopping; ``0`` disables early stopping. (default: :obj:`3`)
        monitor (str, optional): weighted validation metric to maximise.
            (default: :obj:`"mrr"`)
        seed (int, optional): seed of client sampling. (default: :obj:`0`)
        progress (bool, optional): show a tqdm bar. (default: :obj:`False`)
        test (bool, optional): evaluate the best round on ``"test"``.
        on_round (callable, optional): called with each round's history entry.
    """
    if num_rounds < 1:
        raise ValueError(f"`num_rounds` must be positive (got {num_rounds})")
    if eval_every < 1:
        raise ValueError(f"`eval_every` must be positive (got {eval_every})")
    ledger = CommLedger()
    res = SimulationResult()
    best_value, bad = -math.inf, 0
    best_strategy: dict[str, Any] | None = None

    regs = transport.register()
    for c, p in regs.items():
        ledger.record(0, c, "up", p)
    strategy.register({c: p.detach() for c, p in regs.items()})
    ids = transport.client_ids()

    bar = tqdm(
        total=num_rounds, disable=not progress, desc="rounds", dynamic_ncols=True
    )
    for rnd in range(1, num_rounds + 1):
        t0 = time.perf_counter()
        sampled = sample_clients(ids, fraction, rnd, seed)
        payloads = strategy.configure_train(rnd, sampled)
        replies = _exchange(
            ledger,
            rnd,
            {c: payloads[c] for c in sampled},
            lambda p, r=rnd: transport.fit(r, p),
        )
        strategy.aggregate_train(rnd, replies)
        merged = merge_metric_sums({c: p.metrics for c, p in replies.items()})
        entry: dict[str, Any] = {
            "round": rnd,
            "clients": sampled,
            "train_seconds": time.perf_counter() - t0,
            "train": {k: v for k, v in merged.items() if not math.isnan(v)},
        }
        finished = rnd == num_rounds
        if rnd % eval_every == 0 or rnd == num_rounds:
            t1 = time.perf_counter()
            valid, valid_clients = evaluate_clients(
                strategy, transport, rnd, "valid", ledger
            )
            entry.update(
                eval_seconds=time.perf_counter() - t1,
                valid=valid,
                valid_clients=valid_clients,
            )
            value = float(valid.get(monitor, float("nan")))
            if value > best_value:
                best_value, bad = value, 0
                res.best_round, res.best_valid = rnd, dict(valid)
                best_strategy = copy.deepcopy(strategy.state_dict())
                transport.keep_best(rnd)
            else:
                bad += 1
            if patience > 0 and bad >= patience:
                finished, res.stopped_early = True, True
            bar.set_postfix(
                {f"valid_{monitor}": f"{value:.4f}", "best": res.best_round}
            )
        res.history.append(entry)
        res.rounds = rnd
        bar.update(1)
        if on_round is not None:
            on_round(entry)
        if finished:
            break
    bar.close()

    trains = [h["train_seconds"] for h in res.history]
    evals = [h["eval_seconds"] for h in res.history if "eval_seconds" in h]
    res.seconds_per_round = float(np.mean(trains)) if trains else 0.0
    res.seconds_per_eval = float(np.mean(evals)) if evals else 0.0
    if test and res.best_round > 0 and best_strategy is not None:
        strategy.load_state_dict(best_strategy)
        transport.restore_best()
        res.test, res.test_clients = evaluate_clients(
            strategy, transport, res.best_round, "test", ledger
        )
    res.comm = ledger.totals()
    res.comm_per_round = ledger.per_round()
    return res


__all__ = ["Transport", "InProcessTransport", "run_federation", "evaluate_clients"]
