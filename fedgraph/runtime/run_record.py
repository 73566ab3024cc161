r"""The settings a training run records, and the check that a resumed run
continues the run it claims to.

A run folder's ``progress.json`` holds ``{"settings": {...}, "history": [...]}``
from the moment the run starts. ``--resume`` compares the settings it is
given with the recorded ones: any difference in a setting that changes the
result (algorithm, data, model, dimension, learning rate, seed, negatives,
…) is refused, since the rounds already trained used the recorded ones.
Only what cannot change the numbers may differ (:data:`FREE_KEYS`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

#: recorded keys a resumed run may change: how fast or where it runs, what it
#: prints, how far it goes, and what is measured rather than chosen
FREE_KEYS = frozenset(
    {
        "device",
        "threads",
        "quiet",
        "rounds_max",
        "stop_after",
        "command",
        "setup_seconds",
        "wall_seconds_this_call",
        # derived from the other settings (and may name the device)
        "strategy",
        "strategy_params",
        "protocol",
    }
)


def same_data(a: Any, b: Any) -> bool:
    r"""Whether two ``data`` settings name the same dataset: equal names
    (ignoring case, ``-`` and ``_``) or names of one registered dataset, or
    folders resolving to the same path."""
    if a == b:
        return True
    pa, pb = Path(str(a)).expanduser(), Path(str(b)).expanduser()
    if pa.exists() or pb.exists():
        try:
            return pa.resolve() == pb.resolve()
        except OSError:  # pragma: no cover - unreadable paths differ
            return False

    def norm(x: Any) -> str:
        return str(x).lower().replace("-", "").replace("_", "")

    if norm(a) == norm(b):
        return True
    try:  # two names of one registered dataset (an alias)
        from fedgraph.data.load import resolve_dataset

        return resolve_dataset(str(a)) is resolve_dataset(str(b))
    except (ValueError, KeyError):
        return False


def differing_settings(
    recorded: Mapping[str, Any],
    given: Mapping[str, Any],
    free: Collection[str] = FREE_KEYS,
) -> list[str]:
    r"""The keys (sorted) whose values differ between the ``recorded``
    settings of a run and the ``given`` ones, ignoring ``free`` (default:
    :data:`FREE_KEYS`) and keys only one side has (settings added since the
    run was written)."""
    out = []
    for key in sorted(set(recorded) & set(given) - set(free)):
        a, b = recorded[key], given[key]
        if key == "data":
            if not same_data(a, b):
                out.append(key)
        elif _plain(a) != _plain(b):
            out.append(key)
    return out


def _plain(x: Any) -> Any:
    # the recorded side went through JSON: tuples are lists, keys strings
    return json.loads(json.dumps(x, default=str, sort_keys=True))


def recorded_settings(run_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    r"""The settings a run folder records in ``progress.json`` (:obj:`None`
    if it has none yet).

    Raises:
        ValueError: if ``progress.json`` is not readable JSON.
    """
    path = Path(run_dir) / "progress.json"
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(
            f"{path} is not valid JSON ({exc}); restore it from a copy, or train "
            "into a new folder"
        ) from None
    settings = doc.get("settings") if isinstance(doc, dict) else None
    return dict(settings) if isinstance(settings, dict) else None


def check_resume(
    run_dir: str | os.PathLike[str], given: Mapping[str, Any]
) -> dict[str, Any] | None:
    r"""Refuses to resume ``run_dir`` with settings that change the result.

    Returns:
        the recorded settings (:obj:`None` for a folder without any).

    Raises:
        ValueError: one line listing each differing key with its recorded
            and its given value.
    """
    recorded = recorded_settings(run_dir)
    if recorded is None:
        return None
    diff = differing_settings(recorded, given)
    if diff:
        shown = ", ".join(f"{k} {recorded[k]!r} -> {given[k]!r}" for k in diff)
        raise ValueError(
            f"`--resume`: {run_dir} was trained with other settings ({shown}); "
            "resume with the recorded ones (progress.json) or train into a new "
            "`--out`"
        )
    return recorded


__all__ = [
    "FREE_KEYS",
    "same_data",
    "differing_settings",
    "recorded_settings",
    "check_resume",
]
