r"""Graph neural networks for RDF entity classification."""

from fedgraph.models.gnn.rgcn import RGCN

__all__ = classes = ["RGCN"]
