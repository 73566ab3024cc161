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
from collections.abc import Mapping
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


__all__ = [
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
