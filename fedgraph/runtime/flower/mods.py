r"""Flower mods named in the run config, applied by the fedgraph
``ClientApp`` around each of its handlers.

A ``ClientApp``'s mods are fixed when it is built, before any run config is
known, so the fedgraph apps are built with one mod, :func:`run_config_mods`,
which reads the run config's ``client-mods`` (a comma-separated list) and
calls those mods in order, the first outermost. A name is either a short
name of :data:`CLIENT_MODS` or an import path ``"package.module:attribute"``
of any Flower mod (a callable ``mod(message, context, call_next)``), so a
deployment adds its own (e.g. a differential-privacy mod that noises the
uploaded rows) without changing fedgraph.

Flower's built-in clipping mods (``fixedclipping_mod``,
``adaptiveclipping_mod``) and ``secaggplus_mod`` expect the message layout of
Flower's own strategies (one ``ArrayRecord`` with the model, one
``ConfigRecord``); a fedgraph message holds a payload of several records
(``"arrays"``, ``"row-ids"``, …) and a control record, so they answer it
with an error reply: a mod for fedgraph payloads works on the ``"arrays"``
record (:mod:`fedgraph.runtime.flower.records`; with the run-config key
``compact-messages`` a message holds the packed records
``"fedgraph-packed"`` and ``"fedgraph-tensors"`` instead, read with
:func:`~fedgraph.runtime.flower.records.unpack_content`). Secure aggregation and
private alignment come with the apps of ``fedgraph.privacy.flower``.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any

#: the run-config key listing the mods.
MODS_KEY = "client-mods"


def _flower_mod(name: str) -> Callable[[], Any]:
    def load() -> Any:
        from flwr.clientapp import mod

        return getattr(mod, name)

    return load


#: short name → loader of a Flower mod usable with any message.
CLIENT_MODS: dict[str, Callable[[], Any]] = {
    "message-size": _flower_mod("message_size_mod"),
    "arrays-size": _flower_mod("arrays_size_mod"),
}


@functools.lru_cache(maxsize=32)
def resolve_mod(name: str) -> Any:
    r"""The mod called ``name``: a key of :data:`CLIENT_MODS` or
    ``"module:attribute"``. Raises :class:`ValueError` naming the run-config
    key otherwise."""
    name = name.strip()
    if name in CLIENT_MODS:
        return CLIENT_MODS[name]()
    if ":" in name:
        module, _, attr = name.partition(":")
        try:
            obj = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise ValueError(
                f"Run-config key `{MODS_KEY}`: cannot import {name!r} ({exc})"
            ) from None
        if not callable(obj):
            raise ValueError(f"Run-config key `{MODS_KEY}`: {name!r} is not callable")
        return obj
    raise ValueError(
        f"Run-config key `{MODS_KEY}`: unknown mod {name!r} (choices: "
        f"{sorted(CLIENT_MODS)}, or 'package.module:attribute')"
    )


def parse_mods(value: Any) -> list[str]:
    r"""The mod names of a ``client-mods`` value (``""``: none), each checked."""
    if not isinstance(value, str):
        raise ValueError(
            f"Run-config key `{MODS_KEY}` must be a comma-separated string "
            f"(got {value!r})"
        )
    names = [n.strip() for n in value.split(",") if n.strip()]
    for n in names:
        resolve_mod(n)
    return names


def run_config_mods(message: Any, context: Any, call_next: Any) -> Any:
    r"""A Flower mod that applies the run config's ``client-mods`` in order
    (the first outermost) around ``call_next``."""
    names = parse_mods(context.run_config.get(MODS_KEY, ""))
    handler = call_next
    for name in reversed(names):
        handler = functools.partial(resolve_mod(name), call_next=handler)
    return handler(message, context)


__all__ = ["MODS_KEY", "CLIENT_MODS", "resolve_mod", "parse_mods", "run_config_mods"]
