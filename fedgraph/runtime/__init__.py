r"""Runtimes that drive :mod:`fedgraph.federated` strategies and clients."""

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

__all__ = [
    "run_simulation",
    "run_federation",
    "SimulationResult",
    "LoopState",
    "LoopSettings",
    "LoopHooks",
    "Transport",
    "InProcessTransport",
    "sample_clients",
    "evaluate_round",
    "evaluate_clients",
]
