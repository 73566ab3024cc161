r"""The one results-JSON format every fedgraph trainer writes.

.. code-block:: text

    {
      "weighted": {"mrr", "mr", "hits@1", "hits@3", "hits@5", "hits@10",
                   "head_mrr", ..., "tail_mrr", ..., "n_queries"},
      "clients": [{"client": 0, "n_test": ..., "mrr": ..., ...}, ...],
      "rounds": int,               # federated rounds (or epochs of a baseline)
      "seconds_per_round": float,
      "comm": {"params_up", "params_down", "bytes_up", "bytes_down"},
      "settings": {...},           # model, dims, gamma, candidates, filter,
                                   # directions, command, seed, ...
      "history": [...],            # learning curve (valid metrics per eval)
      "versions": {...},           # Python and the installed libraries
      ...                          # e.g. "weighted_global" (FedLU)
    }

``weighted`` is the merge of the clients' :class:`LinkPredState` (exact
query-weighted means, FedLU's convention). Metrics are fractions (MRR 0.3196
is the 31.96 of the papers' tables).
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from fedgraph.data.io import atomic_write_json
from fedgraph.eval.metrics import LinkPredState

ZERO_COMM = {"params_up": 0, "params_down": 0, "bytes_up": 0, "bytes_down": 0}

#: The distributions whose versions a results file records, where installed.
RECORDED_LIBRARIES = (
    "fedgraph-kg",
    "torch",
    "torch_geometric",
    "torch-scatter",
    "numpy",
    "transformers",
    "flwr",
    "geomloss",
)


def library_versions() -> dict[str, str]:
    r"""The versions of Python and of the installed :data:`RECORDED_LIBRARIES`
    (an absent one is left out): what a results file was made with. They sit
    beside ``settings``, not in it, so a run resumes across library upgrades."""
    out = {"python": platform.python_version()}
    for name in RECORDED_LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def summarize(
    states: Sequence[LinkPredState], n_test: Sequence[int] | None = None
) -> tuple[dict[str, float], list[dict[str, Any]]]:
    r"""``(weighted, clients)`` entries from per-client test states.

    Args:
        states (Sequence[LinkPredState]): one state per client.
        n_test (Sequence[int], optional): test triples per client (default:
            queries / number of directions).
    """
    clients = []
    for i, s in enumerate(states):
        m = s.compute()
        n = int(n_test[i]) if n_test is not None else int(m.get("n_queries", 0))
        clients.append({"client": i, "n_test": n, **m})
    weighted = LinkPredState.merged(states).compute()
    return weighted, clients


def write_results(
    path: str | os.PathLike[str],
    *,
    weighted: Mapping[str, float],
    clients: Sequence[Mapping[str, Any]],
    rounds: int,
    seconds_per_round: float,
    comm: Mapping[str, int] | None = None,
    settings: Mapping[str, Any] | None = None,
    history: Sequence[Mapping[str, Any]] | None = None,
    **extra: Any,
) -> Path:
    r"""Writes the results JSON atomically (temp file + :func:`os.replace`).

    Args:
        path: output file (parents are created).
        weighted: merged metrics of all clients.
        clients: per-client metrics, each with ``"n_test"``.
        rounds (int): rounds (federated) or epochs (baselines) trained.
        seconds_per_round (float): mean wall seconds per round / epoch.
        comm (Mapping, optional): communication totals (zeros for baselines).
        settings (Mapping, optional): everything needed to rerun and compare
            (model, dims, gamma, candidate set, filter set, directions, ...).
        history (Sequence, optional): the learning curve.
        **extra: more top-level entries (e.g. ``weighted_global``).
    """
    for i, c in enumerate(clients):
        if "n_test" not in c:
            raise ValueError(f"`clients[{i}]` has no 'n_test' entry")
    doc = {
        "weighted": dict(weighted),
        "clients": [dict(c) for c in clients],
        "rounds": int(rounds),
        "seconds_per_round": float(seconds_per_round),
        "comm": dict(comm if comm is not None else ZERO_COMM),
        "settings": dict(settings or {}),
        "history": list(history or []),
        "versions": library_versions(),
        **extra,
    }
    path = Path(path)
    atomic_write_json(path, doc, indent=2)
    return path


def read_results(path: str | os.PathLike[str]) -> dict[str, Any]:
    r"""Reads a results JSON written by :func:`write_results`."""
    doc = json.loads(Path(path).read_text())
    for key in ("weighted", "clients", "rounds"):
        if key not in doc:
            raise ValueError(f"{path}: not a fedgraph results file (no '{key}')")
    return doc


__all__ = [
    "write_results",
    "read_results",
    "summarize",
    "library_versions",
    "RECORDED_LIBRARIES",
    "ZERO_COMM",
]
