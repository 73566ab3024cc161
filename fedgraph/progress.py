r"""Progress inside long steps: a bar that moves with every training batch
and every chunk of ranked queries.

A caller that wants to show progress opens :func:`progress_bar` around a
step (the round loop around each round's training and evaluation, the
command line around ``fuse``, ``unlearn``, ``stats``); the work inside calls
:func:`advance` (:func:`~fedgraph.training.kge_trainer.train_epochs` per batch,
:func:`~fedgraph.eval.rank_triples` per chunk of queries). Without an open
bar :func:`advance` does nothing, so library code pays one function call.

Every training command speaks with one voice: :func:`step_line` formats the
one line each round (federated) or each validation (a baseline's epochs)
prints, and :func:`say` prints it above the open bars.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_BAR: Any = None


@contextmanager
def progress_bar(
    desc: str, *, unit: str = "it", enabled: bool = True, total: int | None = None
) -> Iterator[Any]:
    r"""A transient tqdm bar that :func:`advance` moves while it is open
    (none when ``enabled`` is false, or another bar is already open: the
    outer one keeps moving)."""
    global _BAR
    if not enabled or _BAR is not None:
        yield _BAR
        return
    from tqdm.auto import tqdm

    bar = tqdm(desc=desc, unit=unit, total=total, leave=False, dynamic_ncols=True)
    _BAR = bar
    try:
        yield bar
    finally:
        _BAR = None
        bar.close()


def advance(n: int = 1) -> None:
    r"""Moves the open bar by ``n`` (nothing if none is open)."""
    if _BAR is not None:
        _BAR.update(n)


def describe(desc: str) -> None:
    r"""Renames the open bar (e.g. to the phase now running)."""
    if _BAR is not None:
        _BAR.set_description_str(desc, refresh=False)


def say(line: str) -> None:
    r"""Prints ``line`` on standard output above any open tqdm bar (the
    bars are redrawn below it, none is broken)."""
    from tqdm.auto import tqdm

    tqdm.write(line, file=sys.stdout)
    sys.stdout.flush()


def step_line(
    entry: dict[str, Any], *, step: str, of: int, who: str | None = None
) -> str:
    r"""The one line of a round or validated epoch ``entry`` (a history
    entry: ``round`` or ``epoch``, ``train_seconds``, ``loss`` or
    ``train["loss"]``, ``valid`` / ``test`` metrics, ``eval_seconds``)::

        round 3/200: loss 0.4321, valid mrr 0.1234 hits@10 0.2345; 2.0s train, 0.5s eval
        client 1 epoch 10/200: loss 0.4321, valid mrr 0.1234 hits@10 0.2345; 2.0s train, 0.5s eval

    ``step`` is ``"round"`` or ``"epoch"``, ``of`` the most there may be,
    ``who`` what trained (e.g. ``"client 1"``; :obj:`None`: the federation).
    """
    head = f"{who} " if who else ""
    parts = []
    loss = entry.get("loss", entry.get("train", {}).get("loss"))
    if loss is not None:
        parts.append(f"loss {float(loss):.4f}")
    if "accuracy" in entry.get("test", {}):  # R-GCN: FedAlign's protocol
        parts.append(f"test accuracy {entry['test']['accuracy']:.4f}")
    elif "valid" in entry:
        v = entry["valid"]
        parts.append(
            f"valid mrr {v.get('mrr', math.nan):.4f} "
            f"hits@10 {v.get('hits@10', math.nan):.4f}"
        )
    times = f"{entry['train_seconds']:.1f}s train"
    if "eval_seconds" in entry:
        times += f", {entry['eval_seconds']:.1f}s eval"
    said = "; ".join(x for x in (", ".join(parts), times) if x)
    return f"{head}{step} {entry[step]}/{of}: {said}"


__all__ = ["progress_bar", "advance", "describe", "say", "step_line"]
