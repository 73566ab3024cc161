r"""Shorter waits in Flower's message path (flwr 1.41 / 1.42), for rounds
whose computation takes seconds.

Two kinds of fixed waits dominate a short deployment round:

- **The SuperNode's polls** (``flwr/supernode/start_client_internal.py``): a
  node that finds no message sleeps 3 s before asking the SuperLink again
  (``start_client_internal``), and looks for its ``ClientApp``'s reply every
  0.5 s (``_push_messages``). :func:`shorten_polls` maps these two sleeps
  (used by :mod:`fedgraph.runtime.flower.supernode`).
- **The first retry of an object pull**
  (``flwr/supercore/inflatable/inflatable_utils.py``: ``pull_objects`` and
  ``pull_and_inflate_object_from_tree``, keyword default ``initial_backoff``
  from ``PULL_INITIAL_BACKOFF = 1``, doubling up to 10 s). A message is
  announced before its objects have arrived: a SuperNode lists a message to
  its ``ClientApp`` runtime before it has pulled the message's objects from
  the SuperLink, and a reply is listed at the SuperLink before its node has
  pushed the reply's objects. A reader that comes too early finds an object
  missing and waits a whole second (then two) before asking again.
  :func:`shorten_pull_backoff` lowers that delay (and its cap) in the process
  that calls it (the SuperNode launcher, the fedgraph executor, the ``ServerApp``
  with the run-config key ``pull-backoff``).

A third wait decides how soon a lost node is noticed: **the SuperNode's
heartbeat** (``flwr/supernode/fleet_http_connection.py`` reports the
interval ``HEARTBEAT_DEFAULT_INTERVAL = 30`` s to the SuperLink, and
``flwr/supercore/heartbeat.py`` sends a heartbeat every
(interval − 5 s) × 0.8 ± 0.1). The SuperLink marks a node offline once twice
its interval has passed without one, so a SuperNode that dies is reported
unavailable 37–60 s later. :func:`set_heartbeat_interval` sets the interval a
SuperNode reports and keeps (used by the launcher's
``--heartbeat-interval``); the SuperLink accepts 10 s to 30 min.

All three change values only, never Flower's logic, and check first that the
Flower code still has what they change (else :class:`RuntimeError`).
"""

from __future__ import annotations

import inspect
import time
from types import ModuleType
from typing import Any

#: the Flower releases whose code these changes were checked against; the
#: ``flower`` extra in ``pyproject.toml`` admits exactly these.
FLOWER_TESTED = ("1.41", "1.42")

#: Flower's fixed sleeps in ``start_client_internal.py`` (seconds).
FLOWER_IDLE_SLEEP = 3
FLOWER_REPLY_SLEEP = 0.5


class PollClock:
    r"""Stands in for the ``time`` module of one Flower module: ``sleep``
    maps Flower's idle and reply-wait sleeps to shorter intervals; every
    other attribute is the ``time`` module's.

    Args:
        idle (float): seconds instead of Flower's 3 s idle sleep.
        reply (float): seconds instead of Flower's 0.5 s reply-wait sleep.
    """

    def __init__(self, idle: float, reply: float) -> None:
        self.idle, self.reply = float(idle), float(reply)

    def sleep(self, seconds: float) -> None:
        if seconds == FLOWER_IDLE_SLEEP:
            seconds = self.idle
        elif seconds == FLOWER_REPLY_SLEEP:
            seconds = self.reply
        time.sleep(seconds)

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)

    def __repr__(self) -> str:
        return f"PollClock(idle={self.idle}, reply={self.reply})"


def shorten_polls(module: ModuleType, idle: float, reply: float) -> PollClock:
    r"""Installs a :class:`PollClock` as ``module.time`` after checking that
    ``module`` (Flower's ``start_client_internal``) still has the two sleeps
    it maps. Raises :class:`RuntimeError` naming the Flower version if not."""
    source = inspect.getsource(module)
    wanted = (f"time.sleep({FLOWER_IDLE_SLEEP})", f"time.sleep({FLOWER_REPLY_SLEEP})")
    missing = [w for w in wanted if w not in source]
    if missing or getattr(module, "time", None) is not time:
        import flwr

        raise RuntimeError(
            f"{module.__name__} of flwr {flwr.__version__} has no "
            f"{' / '.join(missing) or 'module-level `time`'}; run Flower's "
            "`flower-supernode` instead of this launcher."
        )
    clock = PollClock(idle, reply)
    module.time = clock  # type: ignore[attr-defined]
    return clock


#: Flower's functions that pull a message's objects, with their keyword
#: default ``initial_backoff`` (seconds before the first retry).
PULL_FUNCTIONS = ("pull_objects", "pull_and_inflate_object_from_tree")


#: The longest retry delay, as a multiple of the first one.
CAP_FACTOR = 4


def shorten_pull_backoff(initial: float) -> dict[str, dict[str, float]]:
    r"""Sets the keyword defaults ``initial_backoff`` and ``backoff_cap`` of
    Flower's object-pull functions (:data:`PULL_FUNCTIONS`) in this process:
    an object that is not there yet is asked for again after ``initial``
    seconds, then twice as long, up to ``CAP_FACTOR * initial`` (Flower: 1 s,
    doubling up to 10 s). Returns the previous defaults by function name.
    Raises :class:`RuntimeError` when a function or one of these defaults is
    missing (another Flower version)."""
    if not 0 < initial <= 60:
        raise ValueError(f"`initial` must lie in (0, 60] s (got {initial})")
    from flwr.supercore.inflatable import inflatable_utils

    previous = {}
    for name in PULL_FUNCTIONS:
        fn = getattr(inflatable_utils, name, None)
        defaults = getattr(fn, "__kwdefaults__", None) or {}
        if not {"initial_backoff", "backoff_cap"} <= set(defaults):
            import flwr

            raise RuntimeError(
                f"flwr {flwr.__version__} has no `{name}(..., initial_backoff=, "
                "backoff_cap=)` in flwr.supercore.inflatable.inflatable_utils; "
                "leave the pull backoff as it is."
            )
        previous[name] = {k: defaults[k] for k in ("initial_backoff", "backoff_cap")}
    for name in PULL_FUNCTIONS:
        getattr(inflatable_utils, name).__kwdefaults__.update(
            initial_backoff=initial, backoff_cap=CAP_FACTOR * initial
        )
    return previous


#: The modules that read Flower's node heartbeat interval: the SuperNode's
#: connection (the interval it reports) and the sender (how often it beats).
HEARTBEAT_MODULES = ("flwr.supernode.fleet_http_connection", "flwr.supercore.heartbeat")


def set_heartbeat_interval(seconds: float) -> dict[str, float]:
    r"""Sets the heartbeat interval that a SuperNode started in this process
    reports to the SuperLink and keeps (Flower: 30 s): the SuperLink reports
    the node unavailable once ``2 * seconds`` pass without a heartbeat.
    Returns the previous value by module (:data:`HEARTBEAT_MODULES`). Raises
    :class:`ValueError` outside the SuperLink's bounds
    (``HEARTBEAT_MIN_INTERVAL`` … ``HEARTBEAT_MAX_INTERVAL``: 10 … 1800 s in
    flwr 1.42) and :class:`RuntimeError` when a module lacks the constant
    (another Flower version)."""
    import importlib

    from flwr.common import constant

    low, high = constant.HEARTBEAT_MIN_INTERVAL, constant.HEARTBEAT_MAX_INTERVAL
    if not low <= seconds <= high:
        raise ValueError(
            f"the heartbeat interval must lie in [{low}, {high}] s, the "
            f"SuperLink's bounds (got {seconds})"
        )
    modules = [importlib.import_module(name) for name in HEARTBEAT_MODULES]
    previous = {}
    for module in modules:
        if not hasattr(module, "HEARTBEAT_DEFAULT_INTERVAL"):
            import flwr

            raise RuntimeError(
                f"{module.__name__} of flwr {flwr.__version__} has no "
                "HEARTBEAT_DEFAULT_INTERVAL; leave the heartbeat as it is."
            )
        previous[module.__name__] = module.HEARTBEAT_DEFAULT_INTERVAL
    for module in modules:
        module.HEARTBEAT_DEFAULT_INTERVAL = seconds
    return previous


__all__ = [
    "PollClock",
    "shorten_polls",
    "shorten_pull_backoff",
    "set_heartbeat_interval",
    "PULL_FUNCTIONS",
    "HEARTBEAT_MODULES",
]
