r"""Runtimes that drive :mod:`fedgraph.federated` strategies and clients."""

from fedgraph.runtime.simulation import (
    SimulationResult,
    evaluate_round,
    run_simulation,
    sample_clients,
)

__all__ = ["run_simulation", "SimulationResult", "sample_clients", "evaluate_round"]
