r"""A federated run written to its folder, as ``fedgraph train --out`` writes
it: a checkpoint after every round in ``checkpoints/`` (``resume`` continues
a killed run with identical numbers), ``progress.json`` (the recorded
settings and the learning curve so far, rewritten atomically after every
round, each round's line printed) and ``results.json`` at the end.

The caller builds the strategy and clients (:mod:`fedgraph.runtime.pipeline_kge`,
a family's registry entry) and the record of the run's settings
(:mod:`fedgraph.runtime.run_record` checks a resumed run against it).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fedgraph import guard
from fedgraph.runtime.loop import LoopSettings
from fedgraph.runtime.result import SimulationResult

#: the files of a run's folder
PROGRESS, RESULTS, CHECKPOINTS = "progress.json", "results.json", "checkpoints"


@dataclass
class RunFolder:
    r"""Where a run is written and whether it continues the one there.

    Args:
        path (Path): the run's folder (created when the run starts; locked
            by :mod:`fedgraph.guard` until the command ends).
        resume (bool, optional): continue from ``path/checkpoints/last.pt``
            with the history of ``path/progress.json``. (default: :obj:`False`)
        option (str, optional): how errors name the folder: the command's
            option or the function's argument. (default: ``"--out"``)
    """

    path: Path
    resume: bool = False
    option: str = "--out"

    def __post_init__(self) -> None:
        self.path = Path(self.path)


def progress_writer(
    folder: RunFolder, meta: Mapping[str, Any], rounds: int
) -> Callable[[dict[str, Any]], None]:
    r"""The ``on_round`` callback: ``progress.json`` rewritten atomically
    after every round (``meta`` as its ``settings``), and the round's line
    printed (:func:`fedgraph.progress.step_line`, out of ``rounds``)."""
    from fedgraph.data.io import atomic_write_json
    from fedgraph.progress import say, step_line

    guard.claim(folder.path, fresh=not folder.resume, option=folder.option)
    progress_path = folder.path / PROGRESS
    history: list[dict[str, Any]] = []
    if folder.resume and progress_path.exists():
        history = json.loads(progress_path.read_text()).get("history", [])
    if not progress_path.exists():  # the record ``resume`` compares with
        atomic_write_json(progress_path, {"settings": meta, "history": []})

    def on_round(entry: dict[str, Any]) -> None:
        # a resumed run may repeat rounds after the last checkpoint: keep one each
        history[:] = [h for h in history if h["round"] < entry["round"]] + [entry]
        atomic_write_json(
            progress_path, {"settings": meta, "history": history}, default=float
        )
        say(step_line(entry, step="round", of=rounds))

    return on_round


def run_loop(
    strategy: Any,
    clients: Mapping[int, Any],
    loop: LoopSettings,
    folder: RunFolder | None = None,
    record: Mapping[str, Any] | None = None,
    *,
    local_training: str = "sequential",
) -> SimulationResult:
    r"""Runs ``strategy`` and ``clients`` under ``loop``
    (:func:`~fedgraph.runtime.run_simulation`); with a ``folder``, a
    checkpoint after every round (each recording ``record``, what a resumed
    run is compared with) and ``progress.json`` after every round.
    ``results.json`` is the caller's to write once the run has reached its
    end (``loop.stop_after`` returns earlier, ``res.test`` empty)."""
    from fedgraph.runtime.simulation import run_simulation

    if folder is None:
        return run_simulation(
            strategy, clients, **dataclasses.asdict(loop), local_training=local_training
        )
    folder.path.mkdir(parents=True, exist_ok=True)  # only once the run can start
    return run_simulation(
        strategy,
        clients,
        **dataclasses.asdict(loop),
        checkpoint_dir=folder.path / CHECKPOINTS,
        resume=folder.resume,
        on_round=progress_writer(folder, record or {}, loop.num_rounds),
        local_training=local_training,
        record=record,
    )


def run_pipeline_loop(
    strategy: Any,
    clients: Mapping[int, Any],
    loop: LoopSettings,
    record: Mapping[str, Any],
    folder: RunFolder | None = None,
    *,
    local_training: str = "sequential",
) -> SimulationResult:
    r""":func:`run_loop` for :func:`~fedgraph.pipeline`: with a ``folder``,
    locked while the run lasts (:mod:`fedgraph.guard`), refused when it is
    not empty and not resumed, and on ``resume`` refused unless it holds the
    run of ``record`` (:func:`~fedgraph.runtime.run_record.check_resume`)."""
    if folder is None:
        return run_loop(strategy, clients, loop, local_training=local_training)
    from fedgraph.runtime.run_record import check_resume

    with guard.command():
        if folder.path.exists():
            guard.check(folder.path, option=folder.option)
        if not folder.resume and folder.path.exists() and guard.contents(folder.path):
            raise ValueError(
                f"`{folder.option}` {folder.path} is not empty: resume it "
                "(`resume=True`) or pick another folder"
            )
        if folder.resume:
            check_resume(folder.path, record)
        return run_loop(
            strategy, clients, loop, folder, record, local_training=local_training
        )


def resumable_loop(loop: LoopSettings) -> dict[str, Any]:
    r"""``loop`` as a run records it: its fields less those that do not
    change the result (``progress``, ``stop_after``)."""
    fields = dataclasses.asdict(loop)
    return {k: v for k, v in fields.items() if k not in ("progress", "stop_after")}


__all__ = [
    "RunFolder",
    "progress_writer",
    "run_loop",
    "run_pipeline_loop",
    "resumable_loop",
]
