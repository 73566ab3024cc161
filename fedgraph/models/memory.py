r"""Memory estimates checked before the big tables are allocated.

A KGE run holds, per model, an entity and a relation table and, while it
trains, as many floats again for the gradients and twice as many for Adam's
moments; a training step adds its negatives (their ids, their gathered rows
and their scores). :func:`check_kge_memory` adds these up *before* anything
is allocated and, when the total exceeds the memory the machine has left
(:func:`available_memory`), raises a one-line :class:`ValueError` that names
the arguments to lower, instead of letting the allocation fail (or the
machine swap) half-way through.

The estimate is a lower bound (activations, caches and the allocator's
slack come on top), so a run it refuses could never have fitted.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import torch

#: floats per parameter while training with Adam: the value, its gradient
#: and the two moments
TRAINING_COPIES = 4

#: how the knobs of the estimate are named in its errors (a caller may show
#: them as its own options)
NAMES = {
    "hidden_channels": "`hidden_channels`",
    "num_negatives": "`num_negatives`",
    "batch_size": "`batch_size`",
}


def available_memory(device: torch.device | str = "cpu") -> int | None:
    r"""Bytes that can still be allocated on ``device``: the free memory of
    a CUDA device, else the host's ``MemAvailable`` (``/proc/meminfo``), or
    its free physical pages where that file does not exist; :obj:`None`
    when the platform says neither."""
    device = torch.device(device)
    if device.type == "cuda" and torch.cuda.is_available():
        return int(torch.cuda.mem_get_info(device)[0])
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def gigabytes(n: float) -> str:
    r"""``n`` bytes as ``"12.3 GB"`` (10⁹ bytes)."""
    return f"{n / 1e9:.1f} GB"


def kge_table_bytes(
    tables: Sequence[tuple[int, int]],
    hidden_channels: int,
    *,
    entity_factor: int = 1,
    relation_factor: int = 1,
    copies: int = 1,
) -> int:
    r"""Bytes of the entity and relation tables of models of
    ``(num_entities, num_relations)`` ``tables``, each held ``copies`` times
    (:data:`TRAINING_COPIES` while training with Adam)."""
    size = torch.get_default_dtype().itemsize
    rows = sum(e * entity_factor + r * relation_factor for e, r in tables)
    return rows * hidden_channels * size * copies


def negatives_bytes(
    hidden_channels: int,
    *,
    batch_size: int,
    num_negatives: int,
    shared_negatives: bool = True,
    entity_factor: int = 1,
) -> int:
    r"""Bytes of one training step's negatives: their ids, their gathered
    rows and the rows' gradients (``num_negatives`` rows, or ``batch_size ×
    num_negatives`` per positive), and the ``batch_size × num_negatives``
    scores with their gradients."""
    size = torch.get_default_dtype().itemsize
    rows = num_negatives if shared_negatives else batch_size * num_negatives
    ids = rows * torch.long.itemsize
    gathered = 2 * rows * hidden_channels * entity_factor * size
    return ids + gathered + 2 * batch_size * num_negatives * size


def model_factors(model: Any) -> tuple[int, int]:
    r"""Real numbers per dimension of the entity and relation tables of a
    KGE ``model`` (an instance or a class; ``(1, 1)`` for :obj:`None`)."""
    if model is None:
        return 1, 1
    return int(model.entity_factor), int(model.relation_factor)


def check_kge_memory(
    tables: Sequence[tuple[int, int]],
    hidden_channels: int,
    *,
    model: Any = None,
    copies: int = TRAINING_COPIES,
    batch_size: int = 0,
    num_negatives: int = 0,
    shared_negatives: bool = True,
    device: torch.device | str = "cpu",
    names: Mapping[str, str] | None = None,
) -> None:
    r"""Raises a :class:`ValueError` when the tables of ``model`` (see
    :func:`model_factors`) for ``tables``, held ``copies`` times (see
    :func:`kge_table_bytes`), and one step's negatives (see
    :func:`negatives_bytes`) need more than :func:`available_memory` of
    ``device``. The message gives both parts and names the arguments to
    lower (``names`` maps ``"hidden_channels"``, ``"num_negatives"`` and
    ``"batch_size"`` to how the caller calls them; default :data:`NAMES`)."""
    names = {**NAMES, **(names or {})}
    entity_factor, relation_factor = model_factors(model)
    held = kge_table_bytes(
        tables,
        hidden_channels,
        entity_factor=entity_factor,
        relation_factor=relation_factor,
        copies=copies,
    )
    step = negatives_bytes(
        hidden_channels,
        batch_size=batch_size,
        num_negatives=num_negatives,
        shared_negatives=shared_negatives,
        entity_factor=entity_factor,
    )
    free = available_memory(device)
    if free is None or held + step <= free:
        return
    rows = not shared_negatives or hidden_channels * entity_factor > batch_size
    lower = _to_lower(names, held >= step, rows)
    models = f"{len(tables)} KGE model" + ("s" if len(tables) != 1 else "")
    need = "need" if len(tables) != 1 else "needs"
    parts = (
        f" (tables {gigabytes(held)}, a training step's negatives {gigabytes(step)})"
        if step
        else ""
    )
    raise ValueError(
        f"{models} with {names['hidden_channels']} {hidden_channels} {need} at "
        f"least {gigabytes(held + step)}{parts}, more than the {gigabytes(free)} "
        f"of memory available on {torch.device(device).type}: lower {lower}"
    )


def _to_lower(names: Mapping[str, str], tables: bool, rows: bool) -> str:
    r"""The arguments to lower: the dimension when the ``tables`` outweigh a
    step's negatives; else the number of negatives and the batch size (the
    scores), and first the dimension when the negatives' gathered ``rows``
    outweigh their scores."""
    if tables:
        return names["hidden_channels"]
    knobs = [names["num_negatives"], names["batch_size"]]
    if rows:
        knobs.insert(0, names["hidden_channels"])
    return ", ".join(knobs[:-1]) + " or " + knobs[-1]


__all__ = [
    "TRAINING_COPIES",
    "NAMES",
    "available_memory",
    "gigabytes",
    "model_factors",
    "kge_table_bytes",
    "negatives_bytes",
    "check_kge_memory",
]
