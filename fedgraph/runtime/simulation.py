r"""The in-process federated round loop."""

from __future__ import annotations

import copy
import math
import os
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from fedgraph.data.io import atomic_torch_save
from fedgraph.federated.aggregate import merge_metric_sums
from fedgraph.federated.base import Client, Strategy
from fedgraph.federated.comm import CommLedger
from fedgraph.federated.payload import Payload

LAST, BEST = "last.pt", "best.pt"


@dataclass
class SimulationResult:
    r"""What :func:`run_simulation` returns (and ``results.json`` holds).

    Attributes:
        history (list[dict]): one entry per round: ``round``, ``clients``
            (sampled), ``train_seconds``, ``train`` (merged training
            metrics) and, on evaluated rounds, ``eval_seconds``, ``valid``
            (weighted) and ``valid_clients`` (per client).
        rounds (int): rounds completed.
        best_round (int): the round whose weighted validation metric was best.
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
    """

    history: list[dict[str, Any]] = field(default_factory=list)
    rounds: int = 0
    best_round: int = 0
    best_valid: dict[str, float] = field(default_factory=dict)
    test: dict[str, float] = field(default_factory=dict)
    test_clients: dict[int, dict[str, float]] = field(default_factory=dict)
    comm: dict[str, int] = field(default_factory=dict)
    comm_per_round: dict[int, dict[str, int]] = field(default_factory=dict)
    seconds_per_round: float = 0.0
    seconds_per_eval: float = 0.0
    stopped_early: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

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
        )


def sample_clients(
    client_ids: list[int], fraction: float, server_round: int, seed: int
) -> list[int]:
    r"""The clients taking part in ``server_round``: ``max(1, round(F·K))``
    of them, drawn without replacement by a generator seeded with
    ``(seed, server_round)`` only (so a resumed run draws the same ones)."""
    if not 0 < fraction <= 1:
        raise ValueError(f"`fraction` must lie in (0, 1] (got {fraction})")
    k = len(client_ids)
    m = max(1, min(k, int(round(fraction * k))))
    if m == k:
        return sorted(client_ids)
    gen = torch.Generator().manual_seed(int(seed) * 1_000_003 + int(server_round))
    perm = torch.randperm(k, generator=gen)[:m].tolist()
    return sorted(client_ids[i] for i in perm)


def _rng_state() -> dict[str, Any]:
    return {
        "torch": torch.get_rng_state(),
        "python": random.getstate(),
        "numpy": np.random.get_state(),
    }


def _set_rng_state(state: Mapping[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])


def _models_state(strategy: Strategy, clients: Mapping[int, Client]) -> dict[str, Any]:
    return {
        "strategy": strategy.state_dict(),
        "clients": {c: cl.state_dict() for c, cl in clients.items()},
    }


def _load_models_state(
    state: Mapping[str, Any], strategy: Strategy, clients: Mapping[int, Client]
) -> None:
    strategy.load_state_dict(state["strategy"])
    for c, cl in clients.items():
        cl.load_state_dict(state["clients"][c])


def evaluate_round(
    strategy: Strategy,
    clients: Mapping[int, Client],
    server_round: int,
    split: str,
    ledger: CommLedger | None = None,
) -> tuple[dict[str, float], dict[int, dict[str, float]]]:
    r"""One evaluation pass on ``split`` over every client: returns the
    weighted metrics and the per-client ones."""
    ids = sorted(clients)
    payloads = strategy.configure_evaluate(server_round, ids, split)
    replies: dict[int, Payload] = {}
    for c, p in payloads.items():
        if ledger is not None:
            ledger.record(server_round, c, "down", p)
        replies[c] = clients[c].evaluate(p.detach())
        if ledger is not None:
            ledger.record(server_round, c, "up", replies[c])
    weighted = strategy.aggregate_evaluate(server_round, replies)
    per_client = {}
    for c, r in replies.items():
        m = strategy.client_metrics(r)
        m.update({k: v for k, v in r.metrics.items() if k.startswith("n_")})
        per_client[c] = m
    return weighted, per_client


def run_simulation(
    strategy: Strategy,
    clients: Mapping[int, Client],
    *,
    num_rounds: int,
    fraction: float = 1.0,
    eval_every: int = 5,
    patience: int = 3,
    monitor: str = "mrr",
    seed: int = 0,
    checkpoint_dir: str | os.PathLike[str] | None = None,
    resume: bool = False,
    progress: bool = True,
    test: bool = True,
    stop_after: int | None = None,
    on_round: Callable[[dict[str, Any]], None] | None = None,
) -> SimulationResult:
    r"""Runs a federation in-process with the given strategy and clients.

    Each round ``t = 1 … num_rounds``: sample ``F·K`` clients
    (:func:`sample_clients`), ``configure_train`` → ``fit`` (each payload
    detached, as a transfer would) → ``aggregate_train``; every
    ``eval_every`` rounds (and at the last round) evaluate every client on
    ``"valid"`` and keep the round with the best weighted ``monitor`` value;
    stop when it has not improved for ``patience`` evaluations. The best
    round's strategy and client states are then evaluated on ``"test"``.

    With ``checkpoint_dir``, the complete state (strategy, clients incl.
    optimisers and RNGs, global RNGs, ledger, history, early-stopping
    counters) is written atomically after every round to ``last.pt`` and the
    best round's to ``best.pt``; ``resume=True`` continues from ``last.pt``
    and ends with the same numbers as an uninterrupted run.

    Args:
        strategy (Strategy): the server side.
        clients (Mapping[int, Client]): client id → client.
        num_rounds (int): maximum number of rounds.
        fraction (float, optional): client fraction :math:`F`. (default: :obj:`1.0`)
        eval_every (int, optional): evaluate every ``k`` rounds. (default: :obj:`5`)
        patience (int, optional): evaluations without improvement before
            stopping; ``0`` disables early stopping. (default: :obj:`3`)
        monitor (str, optional): weighted validation metric to maximise.
            (default: :obj:`"mrr"`)
        seed (int, optional): seed of client sampling. (default: :obj:`0`)
        checkpoint_dir (path, optional): where ``last.pt``/``best.pt`` go.
        resume (bool, optional): continue from ``checkpoint_dir/last.pt``.
        progress (bool, optional): show a tqdm bar. (default: :obj:`True`)
        test (bool, optional): evaluate the best round on ``"test"``.
        stop_after (int, optional): return after this many rounds *of this
            call* (as if killed; used to test resuming). (default: :obj:`None`)
        on_round (callable, optional): called with each round's history entry.
    """
    if num_rounds < 1:
        raise ValueError(f"`num_rounds` must be positive (got {num_rounds})")
    if eval_every < 1:
        raise ValueError(f"`eval_every` must be positive (got {eval_every})")
    if resume and checkpoint_dir is None:
        raise ValueError("`resume=True` needs a `checkpoint_dir`")
    ckpt = Path(checkpoint_dir) if checkpoint_dir is not None else None
    ids = sorted(int(c) for c in clients)
    ledger = CommLedger()
    res = SimulationResult()
    best_value, bad, start, finished = -math.inf, 0, 1, False
    best_state: dict[str, Any] | None = None

    if resume and ckpt is not None and (ckpt / LAST).exists():
        state = torch.load(ckpt / LAST, weights_only=False)
        _load_models_state(state["models"], strategy, clients)
        ledger.load_state_dict(state["ledger"])
        _set_rng_state(state["rng"])
        res = SimulationResult(**state["result"])
        best_value, bad = state["best_value"], state["bad"]
        start, finished = state["round"] + 1, state["finished"]
    else:
        regs = {c: clients[c].register() for c in ids}
        for c, p in regs.items():
            ledger.record(0, c, "up", p)
        strategy.register({c: p.detach() for c, p in regs.items()})

    bar = tqdm(
        total=num_rounds,
        initial=start - 1,
        disable=not progress,
        desc="rounds",
        dynamic_ncols=True,
    )
    done_this_call = 0
    for rnd in range(start, num_rounds + 1):
        if finished:
            break
        t0 = time.perf_counter()
        sampled = sample_clients(ids, fraction, rnd, seed)
        payloads = strategy.configure_train(rnd, sampled)
        replies: dict[int, Payload] = {}
        for c in sampled:
            ledger.record(rnd, c, "down", payloads[c])
            reply = clients[c].fit(payloads[c].detach())
            ledger.record(rnd, c, "up", reply)
            replies[c] = reply.detach()
        strategy.aggregate_train(rnd, replies)
        entry: dict[str, Any] = {
            "round": rnd,
            "clients": sampled,
            "train_seconds": time.perf_counter() - t0,
            "train": {
                k: v
                for k, v in merge_metric_sums(
                    {c: p.metrics for c, p in replies.items()}
                ).items()
                if not math.isnan(v)
            },
        }
        improved = False
        if rnd % eval_every == 0 or rnd == num_rounds:
            t1 = time.perf_counter()
            valid, valid_clients = evaluate_round(
                strategy, clients, rnd, "valid", ledger
            )
            entry.update(
                eval_seconds=time.perf_counter() - t1,
                valid=valid,
                valid_clients=valid_clients,
            )
            value = float(valid.get(monitor, float("nan")))
            if value > best_value:
                best_value, bad, improved = value, 0, True
                res.best_round, res.best_valid = rnd, dict(valid)
            else:
                bad += 1
            if patience > 0 and bad >= patience:
                finished, res.stopped_early = True, True
            bar.set_postfix(
                {f"valid_{monitor}": f"{value:.4f}", "best": res.best_round}
            )
        if rnd == num_rounds:
            finished = True
        res.history.append(entry)
        res.rounds = rnd
        if ckpt is not None:
            if improved:
                atomic_torch_save(_models_state(strategy, clients), ckpt / BEST)
            atomic_torch_save(
                {
                    "round": rnd,
                    "finished": finished,
                    "best_value": best_value,
                    "bad": bad,
                    "models": _models_state(strategy, clients),
                    "ledger": ledger.state_dict(),
                    "rng": _rng_state(),
                    "result": res.to_dict(),
                },
                ckpt / LAST,
            )
        elif improved:
            # A deep copy: state_dicts may share live tensors (optimiser state).
            best_state = copy.deepcopy(_models_state(strategy, clients))
        bar.update(1)
        if on_round is not None:
            on_round(entry)
        done_this_call += 1
        if stop_after is not None and done_this_call >= stop_after and not finished:
            bar.close()
            res.comm = ledger.totals()
            return res
    bar.close()

    trains = [h["train_seconds"] for h in res.history]
    evals = [h["eval_seconds"] for h in res.history if "eval_seconds" in h]
    res.seconds_per_round = float(np.mean(trains)) if trains else 0.0
    res.seconds_per_eval = float(np.mean(evals)) if evals else 0.0
    if test and res.best_round > 0:
        if ckpt is not None:
            best_state = torch.load(ckpt / BEST, weights_only=False)
        if best_state is None:  # pragma: no cover - guarded by best_round > 0
            raise RuntimeError("No best-round state was kept")
        _load_models_state(best_state, strategy, clients)
        res.test, res.test_clients = evaluate_round(
            strategy, clients, res.best_round, "test", ledger
        )
    res.comm = ledger.totals()
    res.comm_per_round = ledger.per_round()
    return res


__all__ = ["run_simulation", "SimulationResult", "sample_clients", "evaluate_round"]
