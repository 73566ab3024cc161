r"""The settings objects of :func:`~fedgraph.pipeline`: a family's
training settings and the loop's, given as objects or as mappings of their
fields, and the one seed of a run."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from fedgraph.runtime.loop import LoopSettings

#: rounds per family when ``loop`` does not say (``fedgraph train``'s)
DEFAULT_ROUNDS = {"kge": 200, "rgcn": 20, "text": 50}


def run_seed(seed: int | None, training: Any) -> int:
    r"""``seed``, else the seed of the ``training`` settings (object or
    mapping), else 0."""
    if seed is None:
        if isinstance(training, Mapping):
            seed = training.get("seed", 0)
        else:
            seed = getattr(training, "seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"`seed` must be a non-negative integer (got {seed!r})")
    return seed


def model_family(model: str) -> str:
    r"""``"rgcn"``, ``"text"`` or ``"kge"`` (any other model name)."""
    if not isinstance(model, str):
        raise TypeError(f"`model` must be a string (got {type(model).__name__})")
    name = model.lower()
    return name if name in ("rgcn", "text") else "kge"


def loop_settings(
    loop: LoopSettings | Mapping[str, Any] | None, family: str, seed: int
) -> LoopSettings:
    r"""``loop`` as :class:`~fedgraph.runtime.LoopSettings` with ``seed``
    (the family's default rounds when it names none)."""
    if isinstance(loop, LoopSettings):
        return dataclasses.replace(loop, seed=seed)
    given = dict(loop or {})
    given.setdefault("num_rounds", DEFAULT_ROUNDS[family])
    return settings_object(LoopSettings, {**given, "seed": seed}, "loop")


def settings_object(cls: type, fields: Mapping[str, Any], what: str) -> Any:
    r"""``cls(**fields)``, or a :class:`ValueError` naming ``what`` and the
    unknown keys."""
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(fields) - known)
    if unknown:
        raise ValueError(
            f"`{what}` has no field {unknown[0]!r} ({cls.__name__} has {sorted(known)})"
        )
    return cls(**fields)


def training_settings(cls: type, training: Any, seed: int, **defaults: Any) -> Any:
    r"""``training`` (a ``cls`` or a mapping of its fields; :obj:`None`: the
    defaults) with ``seed``; ``defaults`` fill fields a mapping leaves out
    and must agree with an object's."""
    if isinstance(training, cls):
        for key, value in defaults.items():
            if key == "model" and str(getattr(training, key)).lower() != value.lower():
                raise ValueError(
                    f"`model` {value!r} and the `training` settings' model "
                    f"{getattr(training, key)!r} differ: give the same one"
                )
        return dataclasses.replace(training, seed=seed)
    if training is not None and not isinstance(training, Mapping):
        raise TypeError(
            f"`training` must be a {cls.__name__} or a mapping of its fields (got "
            f"{type(training).__name__})"
        )
    fields = {**defaults, **dict(training or {}), "seed": seed}
    return settings_object(cls, fields, "training")


__all__ = [
    "DEFAULT_ROUNDS",
    "run_seed",
    "model_family",
    "loop_settings",
    "settings_object",
    "training_settings",
]
