r"""The R-GCN entity classifier (two :class:`~torch_geometric.nn.conv.RGCNConv`
layers with basis decomposition) used centrally and by Fed-RGCN clients."""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import FastRGCNConv, RGCNConv

from fedgraph.models.gnn.conv import GatherRGCNConv

#: Layer implementations of :class:`RGCN` (all hold RGCNConv's parameters).
CONVS = {"gather": GatherRGCNConv, "fast": FastRGCNConv, "pyg": RGCNConv}


class RGCN(nn.Module):
    r"""Entity classification with R-GCN from `"Modeling Relational Data with
    Graph Convolutional Networks" <https://arxiv.org/abs/1703.06103>`_
    (Schlichtkrull et al., 2018), on featureless nodes:

    .. math::
        \mathbf{h}_i^{(l+1)} = \sigma\Big(\mathbf{W}_0^{(l)} \mathbf{h}_i^{(l)}
        + \sum_{r \in \mathcal{R}} \sum_{j \in \mathcal{N}_i^r}
        \frac{1}{|\mathcal{N}_i^r|} \mathbf{W}_r^{(l)} \mathbf{h}_j^{(l)}\Big),
        \qquad \mathbf{W}_r^{(l)} = \sum_{b=1}^{B} a_{rb}^{(l)} \mathbf{V}_b^{(l)}

    with ReLU between the two layers and a softmax over classes after the
    second. The bases :math:`\mathbf{V}_b^{(l)}` are each layer's ``weight``
    (``[B, d_in, d_out]``); the coefficients :math:`a_{rb}^{(l)}` its ``comp``
    (``[R, B]``). Only the bases are shared in Fed-RGCN (:meth:`bases`).

    Two inputs for featureless nodes:

    * ``"onehot"`` (R-GCN's choice): :math:`\mathbf{h}^{(0)}` is the identity,
      so the first layer's ``d_in`` is the number of nodes (its bases are
      ``[B, N, h]``, node-specific);
    * ``"embedding"``: a learned ``[N, h]`` node embedding feeds a first layer
      with ``[B, h, h]`` bases, whose shape does not depend on the graph, so
      clients with different node sets can share them (Fed-RGCN).

    Args:
        num_nodes (int): number of nodes.
        num_relations (int): number of edge types (incl. inverses).
        num_classes (int): number of classes.
        hidden_channels (int, optional): hidden size. (default: :obj:`16`)
        num_bases (int, optional): number of bases :math:`B`; ``None`` for a
            full weight per relation. (default: :obj:`30`)
        input (str, optional): ``"onehot"`` or ``"embedding"``.
            (default: :obj:`"onehot"`)
        dropout (float, optional): dropout on the hidden layer.
            (default: :obj:`0.0`)
        conv (str, optional): how the layer is evaluated, all with
            :class:`RGCNConv`'s parameters and function: ``"gather"``
            (:class:`~fedgraph.models.gnn.conv.GatherRGCNConv`, edges grouped
            by relation, fastest here), ``"fast"`` (PyG's
            :class:`FastRGCNConv`, a weight per edge) or ``"pyg"``
            (:class:`RGCNConv`, one propagation per relation).
            (default: :obj:`"gather"`)
    """

    def __init__(
        self,
        num_nodes: int,
        num_relations: int,
        num_classes: int,
        *,
        hidden_channels: int = 16,
        num_bases: int | None = 30,
        input: Literal["onehot", "embedding"] = "onehot",
        dropout: float = 0.0,
        conv: Literal["gather", "fast", "pyg"] = "gather",
    ) -> None:
        super().__init__()
        if conv not in CONVS:
            raise ValueError(f"`conv` must be one of {sorted(CONVS)} (got {conv!r})")
        if input not in ("onehot", "embedding"):
            raise ValueError(f"`input` must be 'onehot' or 'embedding' (got {input!r})")
        for key, val in (
            ("num_nodes", num_nodes),
            ("num_relations", num_relations),
            ("num_classes", num_classes),
            ("hidden_channels", hidden_channels),
        ):
            if val < 1:
                raise ValueError(f"`{key}` must be positive (got {val})")
        self.num_nodes = num_nodes
        self.num_relations = num_relations
        self.num_classes = num_classes
        self.hidden_channels = hidden_channels
        self.num_bases = num_bases
        self.input = input
        self.dropout = dropout
        if input == "embedding":
            self.embedding = nn.Parameter(torch.empty(num_nodes, hidden_channels))
            in_channels = hidden_channels
        else:
            self.register_parameter("embedding", None)
            in_channels = num_nodes
        layer = CONVS[conv]
        self.conv = conv
        self.conv1 = layer(
            in_channels, hidden_channels, num_relations, num_bases=num_bases
        )
        self.conv2 = layer(
            hidden_channels, num_classes, num_relations, num_bases=num_bases
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.embedding is not None:
            nn.init.xavier_uniform_(self.embedding)
        self.conv1.reset_parameters()
        self.conv2.reset_parameters()

    def features(self) -> Tensor | None:
        r"""The input :math:`\mathbf{h}^{(0)}` (``None`` for one-hot)."""
        return self.embedding

    def forward(
        self, edge_index: Tensor, edge_type: Tensor, x: Tensor | None = None
    ) -> Tensor:
        r"""Class logits ``[N, C]``.

        Args:
            edge_index (Tensor): ``[2, E]`` edges (incl. inverses).
            edge_type (Tensor): ``[E]`` edge types.
            x (Tensor, optional): input features overriding :meth:`features`
                (e.g. a tensor whose gradient is wanted). (default: :obj:`None`)
        """
        x = self.features() if x is None else x
        h = F.relu(self.conv1(x, edge_index, edge_type))
        h = F.dropout(h, p=self.dropout, training=self.training)
        return self.conv2(h, edge_index, edge_type)

    def bases(self) -> dict[str, Tensor]:
        r"""The shared parameters: ``{"conv1.weight", "conv2.weight"}`` (the
        bases with basis decomposition, else the full relation weights)."""
        return {"conv1.weight": self.conv1.weight, "conv2.weight": self.conv2.weight}

    @torch.no_grad()
    def load_bases(self, arrays: dict[str, Tensor]) -> None:
        r"""Copies received bases into the model (shapes must match)."""
        for key, param in self.bases().items():
            if key not in arrays:
                continue
            if arrays[key].shape != param.shape:
                raise ValueError(
                    f"`{key}` must have shape {tuple(param.shape)} "
                    f"(got {tuple(arrays[key].shape)})"
                )
            param.copy_(arrays[key])

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}({self.num_nodes}, num_relations="
            f"{self.num_relations}, num_classes={self.num_classes}, hidden_channels="
            f"{self.hidden_channels}, num_bases={self.num_bases}, input='{self.input}')"
        )


__all__ = ["RGCN"]
