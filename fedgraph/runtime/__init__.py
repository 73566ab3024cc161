r"""Runtimes that drive :mod:`fedgraph.federated` strategies and clients.

The names below are imported on first use (PEP 562), so that a light
submodule (:mod:`fedgraph.runtime.flower.node`, the process-lived Flower
``ClientApp`` that imports only Flower) does not import torch."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: public name -> the submodule defining it
_EXPORTS = {
    "run_simulation": "simulation",
    "evaluate_round": "simulation",
    "run_federation": "loop",
    "evaluate_clients": "loop",
    "sample_clients": "loop",
    "LoopState": "loop",
    "LoopSettings": "loop",
    "LoopHooks": "loop",
    "SimulationResult": "result",
    "Transport": "transport",
    "InProcessTransport": "transport",
    "BatchedKGETransport": "batched",
}

if TYPE_CHECKING:
    from fedgraph.runtime.batched import BatchedKGETransport
    from fedgraph.runtime.loop import (
        LoopHooks,
        LoopSettings,
        LoopState,
        evaluate_clients,
        run_federation,
        sample_clients,
    )
    from fedgraph.runtime.result import SimulationResult
    from fedgraph.runtime.simulation import evaluate_round, run_simulation
    from fedgraph.runtime.transport import InProcessTransport, Transport


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module = importlib.import_module(f"{__name__}.{_EXPORTS[name]}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "run_simulation",
    "run_federation",
    "SimulationResult",
    "LoopState",
    "LoopSettings",
    "LoopHooks",
    "Transport",
    "InProcessTransport",
    "BatchedKGETransport",
    "sample_clients",
    "evaluate_round",
    "evaluate_clients",
]
