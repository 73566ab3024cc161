r"""A client's ``state_dict`` ↔ Flower records, kept in ``context.state``.

A SuperNode runs every message in a fresh ``flwr-clientapp`` process (the
default ``subprocess`` isolation), so nothing a ``ClientApp`` keeps in Python
objects survives from one round to the next: only ``context.state``, which
the SuperNode stores and hands back with the next message of the same run.
The client's parameters, optimiser moments and generator state therefore
live there, written after every message that changes them.

Encoding: every tensor of the (nested) state dict becomes one ``Array`` of an
``ArrayRecord`` (keys ``"{index}:{path}"``, e.g. ``"3:optimizer/state/0/exp_avg"``);
the structure around them (dicts with int keys, tuples, floats, ``None``)
is a ``torch.save`` blob in a ``ConfigRecord``, read back with
``weights_only=True`` (no code runs on load). Lossless: every dtype, shape
and value comes back bit for bit.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

#: the placeholder a tensor leaves in the structure blob: ``(MARK, key)``.
MARK = "fedgraph-tensor"
ARRAYS, META = "arrays", "meta"


def flatten_state(state: Any) -> tuple[dict[str, Tensor], Any]:
    r"""Splits a nested state into ``{key: tensor}`` and the structure with
    ``(MARK, key)`` placeholders (depth-first order, so keys are stable)."""
    tensors: dict[str, Tensor] = {}

    def walk(obj: Any, path: str) -> Any:
        if isinstance(obj, Tensor):
            key = f"{len(tensors)}:{path}"
            tensors[key] = obj.detach().cpu()
            return (MARK, key)
        if isinstance(obj, Mapping):
            return {k: walk(v, f"{path}/{k}") for k, v in obj.items()}
        if isinstance(obj, list):
            return [walk(v, f"{path}/{i}") for i, v in enumerate(obj)]
        if isinstance(obj, tuple):
            return tuple(walk(v, f"{path}/{i}") for i, v in enumerate(obj))
        return obj

    return tensors, walk(state, "")


def unflatten_state(tensors: Mapping[str, Tensor], skeleton: Any) -> Any:
    r"""Inverse of :func:`flatten_state`."""

    def walk(obj: Any) -> Any:
        if isinstance(obj, tuple) and len(obj) == 2 and obj[0] == MARK:
            return tensors[obj[1]]
        if isinstance(obj, dict):
            return {k: walk(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [walk(v) for v in obj]
        if isinstance(obj, tuple):
            return tuple(walk(v) for v in obj)
        return obj

    return walk(skeleton)


def state_to_records(state: Any, **meta: int | str | bool) -> tuple[Any, Any]:
    r"""``(ArrayRecord, ConfigRecord)`` holding ``state``; ``meta`` scalars
    (e.g. ``round=5``) are stored beside the structure blob."""
    from flwr.app import ArrayRecord, ConfigRecord

    tensors, skeleton = flatten_state(state)
    buf = io.BytesIO()
    torch.save(skeleton, buf)
    arrays = ArrayRecord({k: v.contiguous() for k, v in tensors.items()})
    return arrays, ConfigRecord({"structure": buf.getvalue(), **meta})


def records_to_state(arrays: Any, config: Any) -> Any:
    r"""Inverse of :func:`state_to_records`."""
    skeleton = torch.load(io.BytesIO(bytes(config["structure"])), weights_only=True)
    tensors = {k: torch.from_numpy(a.numpy().copy()) for k, a in arrays.items()}
    return unflatten_state(tensors, skeleton)


def save_state(records: Any, name: str, state: Any, **meta: int | str | bool) -> None:
    r"""Stores ``state`` in the ``RecordDict`` ``records`` (a
    ``context.state``) under ``"{name}.arrays"`` / ``"{name}.meta"``."""
    arrays, config = state_to_records(state, **meta)
    records[f"{name}.{ARRAYS}"] = arrays
    records[f"{name}.{META}"] = config


def has_state(records: Any, name: str) -> bool:
    r"""Whether ``records`` holds a state called ``name``."""
    return f"{name}.{META}" in records


def state_meta(records: Any, name: str) -> dict[str, Any]:
    r"""The ``meta`` scalars stored with state ``name`` (without the blob)."""
    return {k: v for k, v in records[f"{name}.{META}"].items() if k != "structure"}


def load_state(records: Any, name: str) -> Any:
    r"""The state stored under ``name`` (``None`` when there is none)."""
    if not has_state(records, name):
        return None
    return records_to_state(records[f"{name}.{ARRAYS}"], records[f"{name}.{META}"])


def move_state(records: Any, source: str, target: str) -> None:
    r"""Renames state ``source`` to ``target`` (replacing it)."""
    for part in (ARRAYS, META):
        records[f"{target}.{part}"] = records.pop(f"{source}.{part}")


SNAPSHOT_FILE = re.compile(r"round(\d{6})\.pt")


def save_snapshot(
    folder: str | os.PathLike[str],
    server_round: int,
    records: Any,
    names: Sequence[str],
    keep: int = 2,
) -> Path:
    r"""Writes the states ``names`` of ``records`` (a ``context.state``) to
    ``folder/roundNNNNNN.pt`` (atomically) and deletes all but the ``keep``
    newest snapshots.

    A node of a checkpointed run calls this after every message, so that a
    resumed run (a new Flower run: ``context.state`` starts empty) can
    restore the state of the round the server's checkpoint holds. Two
    snapshots suffice: a server checkpoints round ``R`` after every client
    has answered in it, so a client can be at most one round ahead."""
    from fedgraph.data.io import atomic_torch_save

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    states = {
        name: (load_state(records, name), state_meta(records, name))
        for name in names
        if has_state(records, name)
    }
    path = folder / f"round{int(server_round):06d}.pt"
    atomic_torch_save({"round": int(server_round), "states": states}, path)
    for old in _snapshots(folder)[:-keep]:
        old[1].unlink(missing_ok=True)
    return path


def _snapshots(folder: Path) -> list[tuple[int, Path]]:
    found = []
    for p in folder.glob("round*.pt"):
        m = SNAPSHOT_FILE.fullmatch(p.name)
        if m:
            found.append((int(m.group(1)), p))
    return sorted(found)


def restore_snapshot(
    folder: str | os.PathLike[str], up_to_round: int, records: Any
) -> int:
    r"""Loads into ``records`` the newest snapshot of ``folder`` taken at or
    before ``up_to_round`` (the round a resumed server continues after) and
    returns its round. Raises :class:`FileNotFoundError` naming the folder
    when there is none."""
    folder = Path(folder)
    usable = [(r, p) for r, p in _snapshots(folder) if r <= up_to_round]
    if not usable:
        have = [r for r, _ in _snapshots(folder)]
        raise FileNotFoundError(
            f"No saved client state at or before round {up_to_round} in {folder} "
            f"(rounds there: {have or 'none'}); the node's `state-dir` and the "
            "run config's `run-name` must be those of the interrupted run."
        )
    from fedgraph.data.checkpoint import load_checkpoint

    snap = load_checkpoint(usable[-1][1], keys=("round", "states"))
    for name, (state, meta) in snap["states"].items():
        save_state(records, name, state, **meta)
    return int(snap["round"])


__all__ = [
    "save_snapshot",
    "restore_snapshot",
    "flatten_state",
    "unflatten_state",
    "state_to_records",
    "records_to_state",
    "save_state",
    "load_state",
    "has_state",
    "state_meta",
    "move_state",
]
