r"""fedgraph: federated learning on knowledge graphs and RDF graphs with PyG.

The package is laid out along the dataflow:

``data`` (load KGs / RDF graphs, client shards) → ``partition``
(partitioners) → ``models`` (KGE scorers, RGCN, text encoders) → ``eval``
(filtered ranking, accuracy) → ``training`` (local training loops,
distillation) → ``federated`` (strategies and clients: the core, and the
families ``kge``, ``rgcn``, ``text``, ``unlearning``) → ``runtime`` (in-process
simulation, Flower) → ``cli``. No package imports one to its right
(``tests/test_layers.py``).
"""

__version__ = "0.1.0"

from fedgraph._moved import install as _install_moved

_install_moved()

__all__ = ["__version__"]
