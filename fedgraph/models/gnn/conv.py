r"""A faster evaluation of PyG's :class:`~torch_geometric.nn.conv.RGCNConv`
for small hidden sizes on a CPU."""

from __future__ import annotations

import torch
from torch import Tensor
from torch_geometric.nn import RGCNConv


class GatherRGCNConv(RGCNConv):
    r""":class:`~torch_geometric.nn.conv.RGCNConv` (same parameters, same
    function, same ``state_dict``) evaluated relation by relation on edges
    grouped by type:

    .. math::
        \mathbf{h}_i = \mathbf{W}_0 \mathbf{x}_i + \mathbf{b}
        + \sum_{r} \sum_{j \in \mathcal{N}_i^r}
        \frac{\mathbf{x}_j \mathbf{W}_r}{|\mathcal{N}_i^r|}

    The source rows are gathered once in edge-type order, each relation's
    block is multiplied by its :math:`\mathbf{W}_r` (one dense product per
    relation, ``E x d_in x d_out`` multiply-adds in all), and the messages are
    scatter-added with the per-relation mean normalisation
    :math:`1 / |\mathcal{N}_i^r|`. :class:`RGCNConv` runs one message-passing
    call per relation and :class:`~torch_geometric.nn.conv.FastRGCNConv`
    materialises a ``[E, d_in, d_out]`` weight per edge and a one-hot
    ``[E, R]`` matrix per call; at the Fed-RGCN sizes (:math:`d = 16`,
    :math:`R \approx 50`-90, tens of thousands of edges) this layer is about
    6x faster than :class:`FastRGCNConv` forward + backward on one CPU thread
    and supports double back-propagation (the -L gradient penalty).

    With ``x=None`` (one-hot, featureless nodes) row :math:`j` of
    :math:`\mathbf{W}_r` is gathered per edge. The edge grouping is cached for
    the last ``edge_type`` tensor seen (the same object on every call in
    full-graph training). Block-diagonal decomposition and bipartite inputs
    are not supported.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.num_blocks is not None:
            raise ValueError("`num_blocks` is not supported by GatherRGCNConv")
        self._groups: tuple | None = None

    def relation_weights(self) -> Tensor:
        r"""The ``[R, d_in, d_out]`` relation weights
        :math:`\mathbf{W}_r = \sum_b a_{rb} \mathbf{V}_b`."""
        if self.num_bases is None:
            return self.weight
        return (self.comp @ self.weight.view(self.num_bases, -1)).view(
            self.num_relations, self.in_channels_l, self.out_channels
        )

    def _grouping(
        self, edge_index: Tensor, edge_type: Tensor, num_nodes: int
    ) -> tuple[Tensor, Tensor, Tensor, list[int], Tensor]:
        r"""Source, target and type of every edge in type order, the edge
        count per relation and :math:`1 / |\mathcal{N}_i^r|` per edge."""
        cached = self._groups
        if (
            cached is not None
            and cached[0] is edge_type
            and cached[1] is edge_index
            and cached[2] == num_nodes
        ):
            return cached[3:]
        if edge_type.numel() and (
            int(edge_type.min()) < 0 or int(edge_type.max()) >= self.num_relations
        ):
            raise ValueError(
                f"`edge_type` must lie in [0, {self.num_relations}) "
                f"(got values in [{int(edge_type.min())}, {int(edge_type.max())}])"
            )
        perm = torch.argsort(edge_type, stable=True)
        src, dst, typ = edge_index[0, perm], edge_index[1, perm], edge_type[perm]
        counts = torch.bincount(typ, minlength=self.num_relations).tolist()
        # 1 / |N_i^r| for every edge into i via r.
        group = dst * self.num_relations + typ
        deg = torch.bincount(group, minlength=num_nodes * self.num_relations)
        norm = 1.0 / deg.index_select(0, group).to(torch.get_default_dtype())
        self._groups = (edge_type, edge_index, num_nodes, src, dst, typ, counts, norm)
        return src, dst, typ, counts, norm

    def forward(  # type: ignore[override]
        self, x: Tensor | None, edge_index: Tensor, edge_type: Tensor
    ) -> Tensor:
        if isinstance(x, tuple) or not isinstance(edge_index, Tensor):
            raise TypeError(
                "GatherRGCNConv takes one node feature matrix and a dense edge_index"
            )
        num_nodes = self.in_channels_l if x is None else x.size(0)
        src, dst, typ, counts, norm = self._grouping(edge_index, edge_type, num_nodes)
        weight = self.relation_weights()
        if x is None:  # one-hot input: the message of j via r is row j of W_r
            msg = weight[typ, src]
        else:
            # unbind, not weight[r]: one backward op instead of a zero-filled
            # [R, d_in, d_out] gradient per relation; empty relations skipped.
            blocks = x.index_select(0, src).split(counts)
            parts = [
                b @ w
                for b, w, n in zip(blocks, weight.unbind(0), counts, strict=True)
                if n
            ]
            msg = torch.cat(parts) if parts else x.new_zeros(0, self.out_channels)
        msg = msg * norm.to(msg.dtype).unsqueeze(-1)
        out = msg.new_zeros(num_nodes, self.out_channels).index_add_(0, dst, msg)
        if self.root is not None:
            out = out + (self.root if x is None else x @ self.root)
        if self.bias is not None:
            out = out + self.bias
        return out


__all__ = ["GatherRGCNConv"]
