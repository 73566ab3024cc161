r"""fedgraph: federated learning on knowledge graphs and RDF graphs with PyG.

The package is laid out along the dataflow:

``data`` (load KGs / RDF graphs) → ``partition`` (client shards) → ``models``
(KGE scorers, RGCN) → ``federated`` (strategies and clients) → ``runtime``
(in-process simulation, Flower) → ``eval`` (filtered ranking, accuracy).
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
