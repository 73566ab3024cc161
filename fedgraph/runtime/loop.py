r"""The federated round loop, written once against a
:class:`~fedgraph.runtime.Transport`.

:func:`run_federation` makes every decision of a run: the clients of round
``t`` (:func:`sample_clients`), ``configure_train`` → ``fit`` →
``aggregate_train`` with every payload counted in a
:class:`~fedgraph.federated.CommLedger`, training metrics merged by
:func:`~fedgraph.federated.merge_metric_sums`, validation every
``eval_every`` rounds and at the last one, early stopping on the weighted
``monitor``, and a test pass on the best round's states (one best round for
all clients, or each client's own: ``selection``). Two runtimes share it:

* the Flower ``ServerApp``, over
  :class:`~fedgraph.runtime.flower.GridTransport`;
* :func:`~fedgraph.runtime.run_simulation`, over
  :class:`~fedgraph.runtime.InProcessTransport`,
  which adds checkpointing and resume through the loop's hooks (``start``,
  ``checkpoint``, ``load_best``). The loop itself reads and writes no files.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from fedgraph.federated.aggregate import merge_metric_sums
from fedgraph.federated.base import Strategy
from fedgraph.federated.comm import CommLedger
from fedgraph.federated.payload import Payload
from fedgraph.progress import progress_bar
from fedgraph.runtime.divergence import check_replies
from fedgraph.runtime.result import SimulationResult
from fedgraph.runtime.transport import Transport


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


#: how :func:`run_federation` picks the states the test pass evaluates.
SELECTIONS = ("weighted", "per-client")


def clients_to_keep(
    selection: str,
    client_ids: Sequence[int],
    valid_clients: Mapping[int, Mapping[str, float]],
    client_best: dict[int, float],
    *,
    improved: bool,
    progressed: bool,
    monitor: str,
) -> list[int]:
    r"""The clients whose states of this evaluated round become their
    best-round states.

    ``"weighted"``: every client, when the weighted ``monitor`` improved.
    ``"per-client"`` (FedLU's code, ``fedlu.py``'s ``splitsave``): at an
    evaluation where the weighted ``monitor`` improved or the strategy
    reported progress (FedLU: the global model improved), each client whose
    own ``monitor`` is at least its best so far; ``client_best`` is updated
    in place.
    """
    if selection == "weighted":
        return list(client_ids) if improved else []
    if selection != "per-client":
        raise ValueError(f"`selection` must be one of {SELECTIONS} (got {selection!r})")
    if not (improved or progressed):
        return []
    keep = []
    for c in client_ids:
        value = float(valid_clients[c].get(monitor, float("nan")))
        if value >= client_best.get(c, -math.inf):
            client_best[c] = value
            keep.append(c)
    return keep


@dataclass
class LoopState:
    r"""Where :func:`run_federation` stands after a round: what a checkpoint
    must hold, besides the strategy, client and RNG states, to resume.

    Attributes:
        round (int): the last completed round (``0``: none yet).
        finished (bool): the run has ended (last round or early stopping).
        best_value (float): the best weighted validation ``monitor`` so far.
        bad (int): evaluations since ``best_value`` last improved.
        client_best (dict[int, float]): each client's best validation
            ``monitor`` so far at the rounds it kept (``selection="per-client"``).
        result (SimulationResult): history and best round so far.
        ledger (CommLedger): every payload handed over so far.
    """

    round: int = 0
    finished: bool = False
    best_value: float = -math.inf
    bad: int = 0
    client_best: dict[int, float] = field(default_factory=dict)
    result: SimulationResult = field(default_factory=SimulationResult)
    ledger: CommLedger = field(default_factory=CommLedger)


def _exchange(
    ledger: CommLedger,
    server_round: int,
    payloads: Mapping[int, Payload],
    send: Callable[[Mapping[int, Payload]], dict[int, Payload]],
    transport: Transport | None = None,
    events: list[dict[str, Any]] | None = None,
) -> dict[int, Payload]:
    r"""Sends ``payloads`` and counts them: every payload handed to a client
    goes down, every reply up. A client the transport ``"skipped"`` (lost,
    see :meth:`Transport.pop_events`) was sent nothing; one that failed was
    sent its payload and replied nothing. The transport's events are added
    to ``events``."""
    replies = send(payloads)
    happened = transport.pop_events() if transport is not None else []
    unsent = {e["client"] for e in happened if e.get("event") == "skipped"}
    for c, p in payloads.items():
        if c not in unsent:
            ledger.record(server_round, c, "down", p)
    for c, r in replies.items():
        ledger.record(server_round, c, "up", r)
    if events is not None:
        events.extend(happened)
    return {c: r.detach() for c, r in replies.items()}


def evaluate_clients(
    strategy: Strategy,
    transport: Transport,
    server_round: int,
    split: str,
    ledger: CommLedger,
    events: list[dict[str, Any]] | None = None,
) -> tuple[dict[str, float], dict[int, dict[str, float]]]:
    r"""One evaluation pass on ``split`` over every client: the weighted
    metrics and the per-client ones (of the clients that replied; the
    transport's failure events go to ``events``)."""
    payloads = strategy.configure_evaluate(server_round, transport.client_ids(), split)
    replies = _exchange(
        ledger,
        server_round,
        payloads,
        lambda p: transport.evaluate(server_round, p, split),
        transport,
        events,
    )
    weighted = strategy.aggregate_evaluate(server_round, replies)
    per_client = {}
    for c, r in replies.items():
        m = strategy.client_metrics(r)
        m.update({k: v for k, v in r.metrics.items() if k.startswith("n_")})
        per_client[c] = m
    return weighted, per_client


@dataclass
class LoopSettings:
    r"""The settings of :func:`run_federation`.

    Args:
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
        eval_split (str, optional): the split of the periodic evaluation;
            each evaluated round's entry holds its weighted and per-client
            metrics under ``eval_split`` and ``f"{eval_split}_clients"``.
            FedAlign's protocol evaluates ``"test"`` after every round for a
            fixed number of rounds (``patience=0``, ``test=False``).
            (default: :obj:`"valid"`)
        stop_after (int, optional): return after this many rounds *of this
            call*, as if killed (to test resuming). (default: :obj:`None`)
        selection (str, optional): ``"weighted"``: the test pass uses every
            client's state at the best weighted round; ``"per-client"``:
            each client's state at its own best validation round among the
            rounds where the weighted ``monitor`` improved or the strategy
            reported progress (FedLU's code; see :func:`clients_to_keep`).
            Only for strategies whose clients evaluate their own tables: the
            strategy state of the test pass is the weighted best round's.
            (default: :obj:`"weighted"`)
    """

    num_rounds: int
    fraction: float = 1.0
    eval_every: int = 5
    patience: int = 3
    monitor: str = "mrr"
    seed: int = 0
    progress: bool = False
    test: bool = True
    eval_split: str = "valid"
    stop_after: int | None = None
    selection: str = "weighted"

    def validate(self, strategy: Strategy) -> None:
        r"""Raises a :class:`ValueError` naming the first wrong setting."""
        if self.selection not in SELECTIONS:
            raise ValueError(
                f"`selection` must be one of {SELECTIONS} (got {self.selection!r})"
            )
        evaluate_with = getattr(strategy, "evaluate_with", "local")
        if self.selection == "per-client" and evaluate_with != "local":
            raise ValueError(
                "`selection='per-client'` needs clients that evaluate their own "
                f"tables; {type(strategy).__name__} evaluates with the server's "
                f"(evaluate_with={evaluate_with!r})"
            )
        if self.num_rounds < 1:
            raise ValueError(f"`num_rounds` must be positive (got {self.num_rounds})")
        if self.eval_every < 1:
            raise ValueError(f"`eval_every` must be positive (got {self.eval_every})")


@dataclass
class LoopHooks:
    r"""The hooks with which :func:`~fedgraph.runtime.run_simulation`
    checkpoints and resumes (the Flower server sets them too when it
    checkpoints).

    Args:
        on_round (callable, optional): called with each round's history entry.
        start (LoopState, optional): resume after ``start.round``, as a
            ``checkpoint`` call left it (the loop goes on updating it in
            place); the caller has already restored the strategy, client and
            RNG states, so registration is skipped. Needs ``load_best`` (the
            best round may lie before ``start``) and a transport that knows
            its clients without registering. (default: :obj:`None`: a fresh run)
        checkpoint (callable, optional): ``checkpoint(state, improved,
            kept)`` after every round (before ``on_round``), with the
            :class:`LoopState`, whether this round is the new weighted best
            (the strategy's best state) and the clients whose states of this
            round are now their best; where ``run_simulation`` writes
            ``last.pt`` and ``best.pt``.
        load_best (callable, optional): restores the best round's strategy
            and client states before the test pass (``run_simulation`` reads
            ``best.pt``). When set, the loop keeps no best-round copies of
            its own; otherwise it deep-copies the strategy state and calls
            :meth:`Transport.keep_best` / :meth:`Transport.restore_best`.
    """

    on_round: Callable[[dict[str, Any]], None] | None = None
    start: LoopState | None = None
    checkpoint: Callable[[LoopState, bool, list[int]], None] | None = None
    load_best: Callable[[], None] | None = None


_SETTINGS = frozenset(LoopSettings.__dataclass_fields__)
_HOOKS = frozenset(LoopHooks.__dataclass_fields__)


def run_federation(
    strategy: Strategy,
    transport: Transport,
    settings: LoopSettings | None = None,
    hooks: LoopHooks | None = None,
    **kwargs: Any,
) -> SimulationResult:
    r"""Runs a federation over ``transport``.

    Each round ``t = 1 … num_rounds``: sample ``F·K`` clients
    (:func:`sample_clients`), ``configure_train`` → ``fit`` →
    ``aggregate_train`` (only the sampled clients that ``configure_train``
    returns a payload for are trained, so a strategy may narrow the round to
    a subset, e.g. FedMKGC's sequential order); every ``eval_every`` rounds
    (and at the last round) evaluate every client on ``eval_split``
    (``"valid"``) and keep the round with the best weighted ``monitor``
    value; stop when it has not improved for ``patience`` evaluations
    (an evaluation after which :meth:`Strategy.on_validation` returns
    :obj:`True` does not count). The best round's strategy and client states
    are then evaluated on ``"test"`` (``selection="per-client"``: each
    client's own best round's state, see :func:`clients_to_keep`).

    Args:
        strategy (Strategy): the server side.
        transport (Transport): where the clients are.
        settings (LoopSettings): the loop's settings.
        hooks (LoopHooks, optional): round callback, checkpoint and resume.
        **kwargs: instead of ``settings``/``hooks``, their fields as keyword
            arguments (``num_rounds=5, eval_every=1, on_round=…``).
    """
    settings, hooks = _loop_arguments(settings, hooks, kwargs)
    settings.validate(strategy)
    if hooks.start is not None and settings.test and hooks.load_best is None:
        raise ValueError(
            "`start` needs `load_best`: the best round may have been kept "
            "before the resumed run, so the test pass could not restore it"
        )
    state = hooks.start if hooks.start is not None else _register(strategy, transport)
    run = _Run(strategy, transport, settings, hooks, state)
    bar = tqdm(
        total=settings.num_rounds,
        initial=state.round,
        disable=not settings.progress,
        desc="rounds",
        dynamic_ncols=True,
    )
    first = state.round + 1
    for done, rnd in enumerate(range(first, settings.num_rounds + 1), start=1):
        if state.finished:
            break
        run.round(rnd, bar)
        if settings.stop_after is not None and done >= settings.stop_after:
            if not state.finished:
                bar.close()
                state.result.comm = state.ledger.totals()
                return state.result
    bar.close()
    return run.finish()


def _loop_arguments(
    settings: LoopSettings | None, hooks: LoopHooks | None, kwargs: dict[str, Any]
) -> tuple[LoopSettings, LoopHooks]:
    unknown = set(kwargs) - _SETTINGS - _HOOKS
    if unknown:
        raise TypeError(f"run_federation() got unexpected arguments {sorted(unknown)}")
    loop = {k: v for k, v in kwargs.items() if k in _SETTINGS}
    if settings is None:
        settings = LoopSettings(**loop)
    elif loop:
        settings = dataclasses.replace(settings, **loop)
    hook = {k: v for k, v in kwargs.items() if k in _HOOKS}
    hooks = dataclasses.replace(hooks or LoopHooks(), **hook)
    return settings, hooks


def _register(strategy: Strategy, transport: Transport) -> LoopState:
    state = LoopState()
    regs = transport.register()
    for c, p in regs.items():
        state.ledger.record(0, c, "up", p)
    strategy.register({c: p.detach() for c, p in regs.items()})
    return state


class _Run:
    r"""One call of :func:`run_federation`: its rounds and its test pass."""

    def __init__(
        self,
        strategy: Strategy,
        transport: Transport,
        settings: LoopSettings,
        hooks: LoopHooks,
        state: LoopState,
    ) -> None:
        self.strategy, self.transport = strategy, transport
        self.s, self.hooks, self.state = settings, hooks, state
        self.ids = transport.client_ids()
        self.best_strategy: dict[str, Any] | None = None
        #: the transport's failure events of the round in progress
        self.events: list[dict[str, Any]] = []

    def round(self, rnd: int, bar: Any) -> None:
        state, s = self.state, self.s
        entry = self.train(rnd)
        improved, kept = False, []
        if rnd % s.eval_every == 0 or rnd == s.num_rounds:
            improved, kept = self.validate(rnd, entry, bar)
        if rnd == s.num_rounds:
            state.finished = True
        if self.events:  # lost and rejoined clients (a fault-tolerant transport)
            entry["events"] = self.events
        state.result.history.append(entry)
        state.result.rounds = state.round = rnd
        if self.hooks.load_best is None:
            if improved:  # a deep copy: a state_dict may alias live tensors
                self.best_strategy = copy.deepcopy(self.strategy.state_dict())
            if kept:
                self.transport.keep_best(rnd, kept)
        if self.hooks.checkpoint is not None:
            self.hooks.checkpoint(state, improved, kept)
        bar.update(1)
        if self.hooks.on_round is not None:
            self.hooks.on_round(entry)

    def train(self, rnd: int) -> dict[str, Any]:
        t0 = time.perf_counter()
        sampled = sample_clients(self.ids, self.s.fraction, rnd, self.s.seed)
        payloads = self.strategy.configure_train(rnd, sampled)
        # A strategy may train a subset of the sampled clients (e.g. one client
        # per round in an agreed order): only clients with a payload are sent one.
        sampled = [c for c in sampled if c in payloads]
        self.events = []
        bar = progress_bar(
            f"round {rnd}: training", unit="batch", enabled=self.s.progress
        )
        with bar:
            replies = _exchange(
                self.state.ledger,
                rnd,
                {c: payloads[c] for c in sampled},
                lambda p, r=rnd: self.transport.fit(r, p),
                self.transport,
                self.events,
            )
        check_replies(rnd, replies)  # a diverged client stops the run
        self.strategy.aggregate_train(rnd, replies)
        merged = merge_metric_sums({c: p.metrics for c, p in replies.items()})
        return {
            "round": rnd,
            "clients": sampled,
            "train_seconds": time.perf_counter() - t0,
            "train": {k: v for k, v in merged.items() if not math.isnan(v)},
        }

    def validate(
        self, rnd: int, entry: dict[str, Any], bar: Any
    ) -> tuple[bool, list[int]]:
        state, s, res = self.state, self.s, self.state.result
        t1 = time.perf_counter()
        with progress_bar(
            f"round {rnd}: {s.eval_split}", unit="query", enabled=s.progress
        ):
            valid, valid_clients = evaluate_clients(
                self.strategy,
                self.transport,
                rnd,
                s.eval_split,
                state.ledger,
                self.events,
            )
        entry["eval_seconds"] = time.perf_counter() - t1
        entry[s.eval_split] = valid
        entry[f"{s.eval_split}_clients"] = valid_clients
        progressed = self.strategy.on_validation(rnd, valid)
        value = float(valid.get(s.monitor, float("nan")))
        improved = False
        if value > state.best_value:
            state.best_value, state.bad, improved = value, 0, True
            res.best_round, res.best_valid = rnd, dict(valid)
        elif not progressed:  # the strategy may say it progressed otherwise
            state.bad += 1
        kept = clients_to_keep(
            s.selection,
            sorted(valid_clients),
            valid_clients,
            state.client_best,
            improved=improved,
            progressed=progressed,
            monitor=s.monitor,
        )
        if s.selection == "per-client":
            res.client_best_rounds.update({c: rnd for c in kept})
        if s.patience > 0 and state.bad >= s.patience:
            state.finished, res.stopped_early = True, True
        bar.set_postfix(
            {f"{s.eval_split}_{s.monitor}": f"{value:.4f}", "best": res.best_round}
        )
        return improved, kept

    def finish(self) -> SimulationResult:
        res, ledger = self.state.result, self.state.ledger
        trains = [h["train_seconds"] for h in res.history]
        evals = [h["eval_seconds"] for h in res.history if "eval_seconds" in h]
        res.seconds_per_round = float(np.mean(trains)) if trains else 0.0
        res.seconds_per_eval = float(np.mean(evals)) if evals else 0.0
        if self.s.test and res.best_round > 0:
            if self.hooks.load_best is not None:
                self.hooks.load_best()
            else:
                assert self.best_strategy is not None  # kept with best_round
                self.strategy.load_state_dict(self.best_strategy)
                self.transport.restore_best()
            test_events: list[dict[str, Any]] = []
            with progress_bar("test", unit="query", enabled=self.s.progress):
                res.test, res.test_clients = evaluate_clients(
                    self.strategy,
                    self.transport,
                    res.best_round,
                    "test",
                    ledger,
                    test_events,
                )
            if test_events:
                res.test_events = test_events
        res.comm = ledger.totals()
        res.comm_per_round = ledger.per_round()
        return res


__all__ = [
    "SELECTIONS",
    "clients_to_keep",
    "LoopState",
    "LoopSettings",
    "LoopHooks",
    "run_federation",
    "evaluate_clients",
    "sample_clients",
]
