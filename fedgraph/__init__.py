r"""fedgraph: federated learning on knowledge graphs and RDF graphs with PyG.

The package is laid out along the dataflow:

``data`` (load KGs / RDF graphs, client shards) → ``partition``
(partitioners) → ``models`` (KGE scorers, RGCN, text encoders) → ``eval``
(filtered ranking, accuracy) → ``training`` (local training loops,
distillation) → ``federated`` (strategies and clients: the core, and the
families ``kge``, ``rgcn``, ``text``, ``unlearning``) → ``runtime`` (in-process
simulation, Flower) → ``cli``. No package imports one to its right
(``tests/test_layers.py``).

:func:`fedgraph.pipeline` runs the whole dataflow in one call and returns a
:class:`fedgraph.PipelineResult` (imported on first use, with torch).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fedgraph.version import __version__

if TYPE_CHECKING:
    from fedgraph.runtime.pipeline import pipeline
    from fedgraph.runtime.pipeline_result import PipelineResult


def __getattr__(name: str) -> Any:
    # imported on first use (PEP 562): ``import fedgraph`` (and the command
    # line's ``--help``) does not import torch
    if name == "pipeline":
        from fedgraph.runtime.pipeline import pipeline

        return pipeline
    if name == "PipelineResult":
        from fedgraph.runtime.pipeline_result import PipelineResult

        return PipelineResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["__version__", "pipeline", "PipelineResult"]
