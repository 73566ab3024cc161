r"""Progress inside long steps: a bar that moves with every training batch
and every chunk of ranked queries.

A caller that wants to show progress opens :func:`progress_bar` around a
step (the round loop around each round's training and evaluation, the
command line around ``fuse``, ``unlearn``, ``stats``); the work inside calls
:func:`advance` (:func:`~fedgraph.training.kge_trainer.train_epochs` per batch,
:func:`~fedgraph.eval.rank_triples` per chunk of queries). Without an open
bar :func:`advance` does nothing, so library code pays one function call.
"""

from __future__ import annotations

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


__all__ = ["progress_bar", "advance", "describe"]
