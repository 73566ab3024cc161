r"""The in-process federation: the shared round loop
(:func:`~fedgraph.runtime.run_federation`) over Python client objects, with
checkpointing and resume."""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from fedgraph.data.checkpoint import (
    CheckpointError,
    load_checkpoint,
    save_checkpoint,
)
from fedgraph.federated.base import Client, Strategy
from fedgraph.federated.comm import CommLedger
from fedgraph.runtime.loop import (
    LoopHooks,
    LoopSettings,
    LoopState,
    evaluate_clients,
    run_federation,
    sample_clients,
)
from fedgraph.runtime.result import SimulationResult
from fedgraph.runtime.transport import InProcessTransport

LAST, BEST = "last.pt", "best.pt"
LAST_KEYS = ("round", "finished", "best_value", "bad", "models", "ledger", "rng")
RESUME_HINT = (
    "restore it from a copy, or delete {} and resume to train again from round 1"
)


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
    state: Mapping[str, Any],
    strategy: Strategy,
    clients: Mapping[int, Client],
    path: Path | None = None,
) -> None:
    saved = sorted(state["clients"])
    if clients and saved != sorted(clients):
        raise CheckpointError(
            f"checkpoint {path} holds clients {saved} but this federation has "
            f"{sorted(clients)}; resume on the dataset the run trained on"
        )
    try:
        strategy.load_state_dict(state["strategy"])
        for c, cl in clients.items():
            cl.load_state_dict(state["clients"][c])
    except (RuntimeError, KeyError, TypeError) as exc:
        # another dimension, dataset or algorithm than the run that wrote it
        first = str(exc).strip().splitlines()[0]
        raise CheckpointError(
            f"checkpoint {path} does not fit this run's models ({first}); "
            "resume with the settings that wrote it"
        ) from None


def checkpoint_hooks(
    ckpt: Path,
    strategy: Strategy,
    clients: Mapping[int, Client],
    record: Mapping[str, Any] | None = None,
) -> tuple[Callable[[LoopState, bool, list[int]], None], Callable[[], None]]:
    r"""The ``checkpoint`` hook (after every round: ``best.pt`` when the
    round is the new best or some clients keep their state of this round,
    then ``last.pt``) and the ``load_best`` hook (reloads ``best.pt``) of
    :func:`~fedgraph.runtime.run_federation`. ``best.pt`` holds the strategy
    at the best weighted round and each client's best-round state (the same
    round for all, unless the run selects per client). ``clients`` may be
    empty: the Flower server checkpoints the strategy and the loop while its
    clients save their own states on their nodes. ``record``: the run's
    settings, kept in ``last.pt`` and ``best.pt`` as ``"settings"`` (a
    resumed run is compared with them:
    :func:`~fedgraph.runtime.run_record.check_resume`, and the Flower
    server's check)."""

    def save(state: LoopState, improved: bool, kept: list[int]) -> None:
        here = [c for c in kept if c in clients]
        recorded = {} if record is None else {"settings": dict(record)}
        # one copy of the models' states for both files: a text client's is
        # gigabytes
        models = _models_state(strategy, clients)
        if improved and len(here) == len(clients):
            save_checkpoint({**models, **recorded}, ckpt / BEST)
        elif improved or here:
            # some clients keep this round's state, the others an earlier one
            best = load_checkpoint(ckpt / BEST, keys=("strategy", "clients"))
            best.update(recorded)
            if improved:
                best["strategy"] = models["strategy"]
            for c in here:
                best["clients"][c] = models["clients"][c]
            save_checkpoint(best, ckpt / BEST)
        last = {
            "round": state.round,
            "finished": state.finished,
            "best_value": state.best_value,
            "bad": state.bad,
            "models": models,
            "ledger": state.ledger.state_dict(),
            "rng": _rng_state(),
            "result": state.result.to_dict(),
        }
        if state.client_best:  # per-client selection (older files lack the key)
            last["client_best"] = dict(state.client_best)
        if record is not None:
            last["settings"] = dict(record)
        save_checkpoint(last, ckpt / LAST)

    def load_best() -> None:
        # memory-mapped: the clients copy what they keep, so the test pass
        # does not hold a second full copy of every model beside the live ones
        best = load_checkpoint(ckpt / BEST, keys=("strategy", "clients"), mmap=True)
        _load_models_state(best, strategy, clients, ckpt / BEST)

    return save, load_best


def resume_loop_state(
    path: Path, strategy: Strategy, clients: Mapping[int, Client]
) -> LoopState:
    r"""Restores the strategy, the clients (may be empty) and the global RNGs
    from ``last.pt``; returns the ``start`` state of the loop."""
    last = load_checkpoint(path, keys=LAST_KEYS, hint=RESUME_HINT.format(path.parent))
    _load_models_state(last["models"], strategy, clients, path)
    ledger = CommLedger()
    ledger.load_state_dict(last["ledger"])
    _set_rng_state(last["rng"])
    return LoopState(
        round=last["round"],
        finished=last["finished"],
        best_value=last["best_value"],
        bad=last["bad"],
        # absent from checkpoints of runs with one best round for all clients
        client_best=dict(last.get("client_best", {})),
        result=SimulationResult(**last["result"]),
        ledger=ledger,
    )


def evaluate_round(
    strategy: Strategy,
    clients: Mapping[int, Client],
    server_round: int,
    split: str,
    ledger: CommLedger | None = None,
) -> tuple[dict[str, float], dict[int, dict[str, float]]]:
    r"""One evaluation pass on ``split`` over every client: returns the
    weighted metrics and the per-client ones
    (:func:`~fedgraph.runtime.evaluate_clients` in-process)."""
    return evaluate_clients(
        strategy,
        InProcessTransport(clients),
        server_round,
        split,
        CommLedger() if ledger is None else ledger,
    )


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
    eval_split: str = "valid",
    selection: str = "weighted",
    local_training: str = "sequential",
    record: Mapping[str, Any] | None = None,
) -> SimulationResult:
    r"""Runs a federation in-process with the given strategy and clients.

    The round loop is :func:`~fedgraph.runtime.run_federation` over an
    :class:`~fedgraph.runtime.InProcessTransport` (each payload detached, as
    a transfer would be): sampling, training, validation every
    ``eval_every`` rounds, early stopping and the test pass on the best
    round are exactly those of the Flower server.

    With ``checkpoint_dir``, the complete state (strategy, clients incl.
    optimisers and RNGs, global RNGs, ledger, history, early-stopping
    counters) is written atomically after every round to ``last.pt`` and the
    best round's to ``best.pt`` (the loop's ``checkpoint`` hook), and the
    test pass reloads ``best.pt`` (its ``load_best`` hook); ``resume=True``
    continues from ``last.pt`` (its ``start`` state) and ends with the same
    numbers as an uninterrupted run.

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
        eval_split (str, optional): the split of the periodic evaluation
            (see :func:`~fedgraph.runtime.run_federation`). (default: :obj:`"valid"`)
        selection (str, optional): ``"weighted"`` or ``"per-client"`` best
            rounds (see :func:`~fedgraph.runtime.run_federation`).
            (default: :obj:`"weighted"`)
        local_training (str, optional): ``"sequential"``: each client's
            ``fit`` in turn; ``"batched"``: the round's KGE clients train as
            one vectorised computation
            (:class:`~fedgraph.runtime.batched.BatchedKGETransport`; the same
            steps, equal up to float rounding; KGE clients without loss
            terms only). (default: :obj:`"sequential"`)
        record (Mapping[str, Any], optional): the run's settings, stored in
            every checkpoint as ``"settings"`` (what ``--resume`` compares
            a command with). (default: :obj:`None`)
    """
    if num_rounds < 1:
        raise ValueError(f"`num_rounds` must be positive (got {num_rounds})")
    if eval_every < 1:
        raise ValueError(f"`eval_every` must be positive (got {eval_every})")
    if resume and checkpoint_dir is None:
        raise ValueError("`resume=True` needs a `checkpoint_dir`")
    transport = _transport(strategy, clients, local_training)
    save: Callable[[LoopState, bool, list[int]], None] | None = None
    load_best: Callable[[], None] | None = None
    start: LoopState | None = None
    if checkpoint_dir is not None:
        ckpt = Path(checkpoint_dir)
        save, load_best = checkpoint_hooks(ckpt, strategy, clients, record)
        if resume and (ckpt / LAST).exists():
            start = resume_loop_state(ckpt / LAST, strategy, clients)
    settings = LoopSettings(
        num_rounds=num_rounds,
        fraction=fraction,
        eval_every=eval_every,
        patience=patience,
        monitor=monitor,
        seed=seed,
        progress=progress,
        test=test,
        eval_split=eval_split,
        stop_after=stop_after,
        selection=selection,
    )
    hooks = LoopHooks(on_round, start, save, load_best)
    return run_federation(strategy, transport, settings, hooks)


def _transport(
    strategy: Strategy, clients: Mapping[int, Client], local_training: str
) -> Any:
    from fedgraph.runtime.batched import (
        LOCAL_TRAINING,
        BatchedKGETransport,
        check_batched_run,
    )

    if local_training not in LOCAL_TRAINING:
        raise ValueError(
            f"`local_training` must be one of {LOCAL_TRAINING} (got {local_training!r})"
        )
    if local_training == "batched":
        check_batched_run(strategy, clients)
        return BatchedKGETransport(clients)
    return InProcessTransport(clients)


__all__ = ["run_simulation", "SimulationResult", "sample_clients", "evaluate_round"]
