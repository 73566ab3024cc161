r"""The fedgraph ``ServerApp``: a fedgraph
:class:`~fedgraph.federated.Strategy` driven over Flower's ``Grid`` by the
shared round loop (:func:`~fedgraph.runtime.run_federation`)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from logging import INFO, WARNING
from pathlib import Path
from typing import Any

from fedgraph.data.checkpoint import save_checkpoint
from fedgraph.federated.base import Strategy
from fedgraph.runtime.flower.alignment import KGE_ALIGNMENT, AlignedRun, Alignment
from fedgraph.runtime.flower.config import (
    FlowerRunSettings,
    transport_kwargs,
    use_threads,
)
from fedgraph.runtime.flower.run_status import heartbeat, how_to_continue, read_json
from fedgraph.runtime.flower.transport import GridTransport
from fedgraph.runtime.loop import LoopHooks, LoopSettings, run_federation
from fedgraph.runtime.result import SimulationResult

#: ``f(settings, aligned) -> (strategy, number of clients)``; ``aligned`` is
#: the :class:`~fedgraph.runtime.flower.alignment.AlignedRun` of the
#: alignment step.
StrategyBuilder = Callable[[Any, AlignedRun], tuple[Strategy, int]]

#: ``f(run_config) -> settings``: the settings object has ``threads``,
#: ``reply_timeout``, ``connect_timeout``, ``out``, ``loop_kwargs()`` and
#: ``to_dict()`` (:class:`FlowerRunSettings`, ``RGCNRunSettings``).
SettingsParser = Callable[[Mapping[str, Any]], Any]

#: ``f(transport, strategy) -> transport``: the transport the round loop
#: drives (e.g. one that runs a multi-stage protocol in each round,
#: :class:`fedgraph.privacy.secagg_transport.SecAggTransport`).
TransportWrapper = Callable[[Any, Strategy], Any]


def build_kge_strategy(
    cfg: FlowerRunSettings, aligned: AlignedRun | None = None
) -> tuple[Strategy, int]:
    r"""The strategy of ``cfg.algorithm`` (its ``kge_algorithms`` builder,
    given the vocabulary size and no shards) and the number of clients.

    Both sizes come from the alignment step (``aligned``: every node reports
    the global vocabulary size ``num-entities`` of its partition and the
    number of clients), else from the run config's ``num-entities`` and
    ``num-clients``. The server never opens the data: its global entity
    table is drawn from the run seed, as in the simulation."""
    from fedgraph.data.shard import FederatedKG
    from fedgraph.federated.kge.setup import build_kge_federation

    if aligned is not None:
        num_entities = aligned.sizes["num-entities"]
        num_clients = aligned.num_clients
        if cfg.num_entities and cfg.num_entities != num_entities:
            raise ValueError(
                f"Run-config key `num-entities` is {cfg.num_entities} but the nodes "
                f"report a vocabulary of {num_entities} entities"
            )
    else:
        num_entities, num_clients = cfg.num_entities, cfg.num_clients
    if not (num_entities and num_clients):
        raise ValueError(
            "The server learns `num-entities` and `num-clients` from the nodes in "
            "the alignment step; without one, set both in the run config"
        )
    vocabulary = FederatedKG([], num_entities, 0)
    strategy, _ = build_kge_federation(cfg.algorithm, vocabulary, cfg.settings)
    return strategy, num_clients


def write_outputs(
    out: str | os.PathLike[str],
    cfg: Any,
    strategy: Strategy,
    res: SimulationResult,
) -> Path:
    r"""``OUT/results.json`` (the :func:`fedgraph.eval.write_results` format
    of ``fedgraph train``) and ``OUT/server.pt`` (the strategy's state after
    the run: the best round's when it was tested)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = res.write_results(
        out / "results.json",
        settings={
            **cfg.to_dict(),
            "runtime": "flower",
            "strategy": repr(strategy),
            "strategy_params": strategy.get_params(),
        },
    )
    round_ = res.best_round if res.test else res.rounds
    save_checkpoint(
        {"round": round_, "strategy": strategy.state_dict()}, out / "server.pt"
    )
    return path


def _log_round(entry: Mapping[str, Any]) -> None:
    from flwr.common.logger import log

    line = f"[fedgraph] round {entry['round']}: clients {entry['clients']}"
    train = entry.get("train", {})
    for key in ("loss", "task"):  # KGE clients report `loss`, RGCN ones `task`
        if key in train:
            line += f", train {key} {train[key]:.4f}"
    for split in ("valid", "test"):
        if split in entry:
            line += f", {split} " + json.dumps(
                {k: round(v, 4) for k, v in entry[split].items()}
            )
    log(INFO, line)


def run_server(
    grid: Any,
    run_config: Mapping[str, Any],
    *,
    build_strategy: StrategyBuilder = build_kge_strategy,
    parse: SettingsParser = FlowerRunSettings.from_run_config,
    progress: bool = False,
    stop_after: int | None = None,
    alignment: Alignment = KGE_ALIGNMENT,
    wrap_transport: TransportWrapper | None = None,
) -> tuple[Strategy, SimulationResult]:
    r"""Builds the strategy of ``run_config`` and runs the federation over
    ``grid``; writes ``results.json`` when the run config sets ``out``.
    Returns the strategy and the :class:`~fedgraph.runtime.SimulationResult`.

    ``parse`` turns the run config into settings and ``build_strategy``
    makes the strategy from them: federated KGE by default, Fed-RGCN with
    :mod:`fedgraph.runtime.flower.rgcn`'s pair. ``wrap_transport``, given
    the grid's transport and the strategy, returns the transport the round
    loop drives (a protocol of several exchanges per round, e.g. SecAgg+'s
    with dropout recovery, :mod:`fedgraph.privacy.flower`).

    With the run config's ``checkpoint-dir`` the server writes ``last.pt``
    after every round and ``best.pt`` at every new best round (the strategy,
    the loop's counters, history and communication ledger:
    :func:`~fedgraph.runtime.simulation.checkpoint_hooks` without clients),
    and every client saves its own state on its node; ``resume = true``
    continues from ``last.pt`` in a new Flower run and ends with the numbers
    of an uninterrupted run. ``stop_after`` returns after that many rounds,
    as if the server were killed (tests).

    The server reads no client data: before the strategy is built, the
    ``alignment`` step (:mod:`~fedgraph.runtime.flower.alignment`) asks the
    connected nodes for the number of clients and the sizes the strategy
    needs. The run config's failure settings (``accept-failures``,
    ``min-fit-nodes``, ``min-available-nodes``) decide whether a round goes
    on without a failed client; a run that stops writes ``OUT/status.json``
    with the error (a finished one: ``{"status": "completed"}``, one under way:
    ``"running"``; one stopped by a signal, as Flower stops a ``ServerApp``
    whose SuperLink ended: ``"lost"``, naming how to resume) and raises."""
    cfg = parse(run_config)
    use_threads(cfg.threads)
    if getattr(cfg, "pull_backoff", 0.0) > 0:
        from fedgraph.runtime.flower.polling import shorten_pull_backoff

        shorten_pull_backoff(cfg.pull_backoff)
    check_out(cfg)
    if cfg.out:
        # a status left by an earlier run in `out` is no longer true
        write_status(cfg.out, "running")
    try:
        steps = (build_strategy, alignment, wrap_transport)
        # OUT/heartbeat.json moves while the run is alive (`fedgraph flower-run`)
        ckpt = getattr(cfg, "checkpoint_dir", "")  # Fed-RGCN settings have none
        with heartbeat(cfg.out, ckpt, getattr(cfg, "run_name", "")):
            return _run(grid, cfg, steps, progress, stop_after)
    except Exception as exc:
        if cfg.out:
            write_status(cfg.out, "failed", f"{type(exc).__name__}: {exc}")
        raise
    except BaseException as exc:
        # Flower's signal handler (its SuperLink or SuperExec ended, or
        # SIGINT/SIGTERM) exits with SystemExit from wherever the round was
        if cfg.out:
            write_status(cfg.out, "lost", stopped_error(exc, cfg.out))
        raise


def stopped_error(exc: BaseException, out: str | os.PathLike[str]) -> str:
    r"""The ``lost`` status's error of a ``ServerApp`` stopped by ``exc``
    (``SystemExit`` from Flower's signal handler, ``KeyboardInterrupt``):
    what stopped it and how the run continues (from its last beat,
    :func:`~fedgraph.runtime.flower.run_status.how_to_continue`)."""
    beat = read_json(Path(out) / "heartbeat.json")
    return (f"the ServerApp was stopped ({type(exc).__name__}: a signal, or its "
            "SuperLink or SuperExec ended) before the run finished; "
            f"{how_to_continue(beat)}")  # fmt: skip


def check_out(cfg: Any) -> None:
    r"""Refuses to start a run that would replace an earlier run's files;
    raises :class:`ValueError` naming the file. Nothing is written before
    this check.

    - ``checkpoint-dir/last.pt`` without ``resume = true``: a fresh run would
      overwrite the checkpoints an interrupted run resumes from.
    - ``out/results.json`` of a finished run, unless the run resumes from a
      server checkpoint (``resume = true`` with ``checkpoint-dir/last.pt``),
      which ends with the same results.
    - ``resume = true`` with a run config that differs from the one
      ``last.pt`` records in a key that changes the numbers (any key but
      :data:`RESUME_FREE_KEYS`): the rounds already trained used the
      recorded one.
    """
    from fedgraph.runtime.simulation import LAST

    ckpt = getattr(cfg, "checkpoint_dir", "")
    resume = bool(getattr(cfg, "resume", False))
    last = Path(ckpt) / LAST if ckpt else None
    if last is not None and last.exists() and not resume:
        raise ValueError(
            f"Run-config key `checkpoint-dir`: {last} holds an earlier run's "
            "checkpoint; set `resume = true` to continue that run, or pick "
            "another `checkpoint-dir`"
        )
    if last is not None and last.exists():
        check_resumed_settings(cfg, last)
    if not cfg.out:
        return
    results = Path(cfg.out) / "results.json"
    if not results.exists() or (resume and last is not None and last.exists()):
        return
    raise ValueError(
        f"Run-config key `out`: {results} holds an earlier run's results; pick "
        "another `out` or move that file away (a run resumed from its checkpoint "
        "with `resume = true` may write into its own `out`)"
    )


#: run-config settings a resumed run may change: how it runs, waits, reports
#: and how far it goes, not what it computes (with ``run_record.FREE_KEYS``).
RESUME_FREE_KEYS = frozenset(
    {
        "out",
        "checkpoint_dir",
        "resume",
        "num_rounds",
        "test",
        "fusion",
        "reply_timeout",
        "connect_timeout",
        "min_available_nodes",
        "min_fit_nodes",
        "accept_failures",
        "wait_for_failed",
        "pull_backoff",
        "compact_messages",
    }
)


def check_resumed_settings(cfg: Any, last: Path) -> None:
    r"""Refuses ``resume = true`` when the run config differs from the one
    ``last`` records (:func:`~fedgraph.runtime.run_record.differing_settings`
    outside :data:`RESUME_FREE_KEYS`); a ``last.pt`` that records none is
    not checked. Raises :class:`ValueError` naming each differing key with
    its recorded and its given value."""
    from fedgraph.data.checkpoint import load_checkpoint
    from fedgraph.runtime.run_record import FREE_KEYS, differing_settings
    from fedgraph.runtime.simulation import RESUME_HINT

    hint = RESUME_HINT.format(last.parent)
    recorded = load_checkpoint(last, hint=hint).get("settings")
    if not isinstance(recorded, dict):
        return
    given = cfg.to_dict()
    diff = differing_settings(recorded, given, FREE_KEYS | RESUME_FREE_KEYS)
    if diff:
        shown = ", ".join(
            f"`{k.replace('_', '-')}` {recorded[k]!r} -> {given[k]!r}" for k in diff
        )
        raise ValueError(
            f"Run-config key `resume`: {last} was trained with another run "
            f"config ({shown}); resume with the recorded values or start a new "
            "run in another `checkpoint-dir`"
        )


def write_status(out: str | os.PathLike[str], status: str, error: str = "") -> Path:
    r"""``OUT/status.json``: ``{"status": "running" | "completed" | "failed"
    | "lost", "error"}``, written atomically; launchers read it for their exit code
    (``flwr run`` itself exits 0 when the ``ServerApp`` fails)."""
    from fedgraph.data.io import atomic_write_json

    path = Path(out) / "status.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {"status": status, "error": error})
    return path


def _run(
    grid: Any,
    cfg: Any,
    steps: tuple[StrategyBuilder, Alignment, TransportWrapper | None],
    progress: bool,
    stop_after: int | None,
) -> tuple[Strategy, SimulationResult]:
    build_strategy, alignment, wrap_transport = steps
    ckpt_dir = getattr(cfg, "checkpoint_dir", "")  # Fed-RGCN settings have none
    transport = GridTransport(
        grid, cfg.num_clients, checkpoint=bool(ckpt_dir), **transport_kwargs(cfg)
    )
    aligned = transport.align(alignment)
    strategy, _ = build_strategy(cfg, aligned)
    hooks: dict[str, Any] = {}
    if ckpt_dir:
        hooks = _checkpointing(Path(ckpt_dir), strategy, transport, cfg)
    settings = LoopSettings(
        **cfg.loop_kwargs(), progress=progress, stop_after=stop_after
    )
    if wrap_transport is not None:  # the loop's rounds; checkpoints stay on the grid
        loop_transport = wrap_transport(transport, strategy)
    else:
        loop_transport = transport
    res = run_federation(
        strategy, loop_transport, settings, LoopHooks(on_round=_log_round, **hooks)
    )
    if stop_after is not None and _interrupted(res, cfg):
        return strategy, res
    from flwr.common.logger import log

    if cfg.out:
        path = write_outputs(cfg.out, cfg, strategy, res)
        log(INFO, f"[fedgraph] test {json.dumps(res.test)}; results in {path}")
    if getattr(cfg, "fusion", None) is not None:
        if not res.test:
            log(WARNING, "[fedgraph] no model fusion: the run tested no round")
        else:
            fused = fuse_clients(strategy, transport, res.best_round, cfg.fusion)
            line = "[fedgraph] fusion: test mrr single {:.4f}, federated {:.4f}, "
            line = (line + "fused {:.4f}").format(
                *(fused[k]["mrr"] for k in FUSED_KEYS)
            )
            if cfg.out:
                path = write_fusion(cfg.out, cfg, fused)
                line += f"; results in {path}"
            log(INFO, line)
    if cfg.out:
        write_status(cfg.out, "completed")
    return strategy, res


#: :func:`fuse_clients`' merged metrics, in the order the log prints them.
FUSED_KEYS = ("weighted_single", "weighted_federated", "weighted")


def fuse_clients(
    strategy: Strategy, transport: GridTransport, server_round: int, opts: Any
) -> dict[str, Any]:
    r"""FedE's model fusion (FedE §2.2.3) over the grid, after the test pass:
    every client is sent the test pass's payload again and fuses the model
    it was tested with and its node's single-KG model
    (:func:`~fedgraph.runtime.flower.client_app.fuse_on_node`); the replies
    merge into :func:`~fedgraph.training.fusion.fuse_and_evaluate`'s result
    (the numbers ``fedgraph fuse`` computes from a simulation's checkpoint),
    plus ``"comm"``, the exchange's own traffic, and ``"seconds"``."""
    import time

    from fedgraph.federated.comm import CommLedger
    from fedgraph.runtime.flower.fusion import fusion_from_metrics
    from fedgraph.training.fusion import summarize_fusion

    ids = transport.client_ids()
    payloads = strategy.configure_evaluate(server_round, ids, "test")
    ledger = CommLedger()
    for c, p in payloads.items():
        ledger.record(server_round, c, "down", p)
    t0 = time.perf_counter()
    replies = transport.fuse(server_round, payloads)
    seconds = time.perf_counter() - t0
    for c, r in replies.items():
        ledger.record(server_round, c, "up", r)
    parts = [fusion_from_metrics(c, replies[c].metrics) for c in sorted(replies)]
    return {
        **summarize_fusion(parts),
        "comm": ledger.totals(),
        "seconds": seconds,
        "round": server_round,
    }


def write_fusion(out: str | os.PathLike[str], cfg: Any, fused: dict[str, Any]) -> Path:
    r"""``OUT/fusion/results.json`` in ``fedgraph fuse``'s format: the fused
    model as ``weighted`` and per client, the single and federated models as
    ``weighted_single`` / ``weighted_federated`` and per client."""
    from fedgraph.eval import write_results

    opts = cfg.fusion
    settings = {
        **cfg.to_dict(),
        "runtime": "flower",
        "checkpoint": f"round {fused['round']} (the tested round)",
        "single": "each node's `single-dir` (node config)",
        "seconds": fused["seconds"],
    }
    return write_results(
        Path(out) / "fusion" / "results.json",
        weighted=fused["weighted"],
        weighted_single=fused["weighted_single"],
        weighted_federated=fused["weighted_federated"],
        clients=fused["clients"],
        rounds=opts.epochs,  # of the fusion layer's fitting
        seconds_per_round=fused["seconds"] / max(1, opts.epochs),
        comm=fused["comm"],
        settings=settings,
    )


def _checkpointing(
    ckpt: Path, strategy: Strategy, transport: GridTransport, cfg: Any
) -> dict[str, Any]:
    r"""The ``checkpoint``/``load_best``/``start`` arguments of
    :func:`run_federation` for a checkpointed Flower run. The clients keep
    their own states (the server never holds them): a new best round is
    announced to them (``best-round``) as without checkpoints, and the test
    pass asks them for their best-round state. ``last.pt`` records the run
    config (:func:`check_resumed_settings`)."""
    from fedgraph.runtime.simulation import LAST, checkpoint_hooks, resume_loop_state

    resume = bool(cfg.resume)
    save, load_best = checkpoint_hooks(ckpt, strategy, {}, record=cfg.to_dict())

    def checkpoint(state: Any, improved: bool, kept: list[int]) -> None:
        if kept:
            transport.keep_best(state.round, kept)
        save(state, improved, kept)

    def restore_best() -> None:
        load_best()
        transport.restore_best()

    start = None
    if resume and (ckpt / LAST).exists():
        start = resume_loop_state(ckpt / LAST, strategy, {})
        transport.register(resume_round=start.round)
        res = start.result
        if res.client_best_rounds:  # per-client selection
            transport.best_rounds = dict(res.client_best_rounds)
        elif res.best_round > 0:
            transport.keep_best(res.best_round)
    return {"checkpoint": checkpoint, "load_best": restore_best, "start": start}


def _interrupted(res: SimulationResult, cfg: Any) -> bool:
    r"""Whether ``stop_after`` ended the loop before the run's end (neither
    early-stopped, nor tested, nor at its last round)."""
    return (
        not res.stopped_early
        and not res.test
        and res.rounds < cfg.loop_kwargs()["num_rounds"]
    )


def make_server_app(
    build_strategy: StrategyBuilder = build_kge_strategy,
    parse: SettingsParser = FlowerRunSettings.from_run_config,
    alignment: Alignment = KGE_ALIGNMENT,
    wrap_transport: TransportWrapper | None = None,
) -> Any:
    r"""A ``flwr.serverapp.ServerApp`` whose ``main`` is :func:`run_server`
    (with ``alignment`` as its alignment step and ``wrap_transport``)."""
    from flwr.app import Context
    from flwr.serverapp import Grid, ServerApp

    app = ServerApp()

    @app.main()
    def main(grid: Grid, context: Context) -> None:
        run_server(
            grid,
            context.run_config,
            build_strategy=build_strategy,
            parse=parse,
            alignment=alignment,
            wrap_transport=wrap_transport,
        )

    return app


#: The ``ServerApp`` of ``[tool.flwr.app.components] serverapp``.
app = make_server_app()

__all__ = [
    "app",
    "make_server_app",
    "run_server",
    "write_status",
    "build_kge_strategy",
    "write_outputs",
    "fuse_clients",
    "write_fusion",
]
