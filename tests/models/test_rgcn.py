r"""The R-GCN entity classifier on a hand-made graph."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch_geometric.nn import RGCNConv

from fedgraph.models.gnn import RGCN
from fedgraph.models.gnn.training import accuracy_counts, train_epoch


def toy():
    # 6 nodes, 2 relations (+ inverses = 4 edge types); class = which hub a
    # node points to.
    src = torch.tensor([0, 1, 2, 3])
    dst = torch.tensor([4, 4, 5, 5])
    rel = torch.tensor([0, 0, 1, 1])
    edge_index = torch.cat([torch.stack([src, dst]), torch.stack([dst, src])], dim=1)
    edge_type = torch.cat([2 * rel, 2 * rel + 1])
    y = torch.tensor([0, 0, 1, 1, -1, -1])
    return edge_index, edge_type, y


@pytest.mark.parametrize("inp", ["onehot", "embedding"])
def test_shapes_and_learning(inp):
    edge_index, edge_type, y = toy()
    model = RGCN(6, 4, 2, hidden_channels=8, num_bases=3, input=inp)
    assert model(edge_index, edge_type).shape == (6, 2)
    d_in = 6 if inp == "onehot" else 8
    assert model.bases()["conv1.weight"].shape == (3, d_in, 8)
    assert model.bases()["conv2.weight"].shape == (3, 8, 2)
    assert str(model) == (
        f"RGCN(6, num_relations=4, num_classes=2, hidden_channels=8, num_bases=3, input='{inp}')"
    )
    mask = y >= 0
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = [
        train_epoch(model, edge_index, edge_type, y, mask, opt) for _ in range(30)
    ]
    assert losses[-1] < 0.1 * losses[0]
    assert accuracy_counts(model, edge_index, edge_type, y, mask) == (4, 4)


@pytest.mark.parametrize("conv", ["gather", "fast"])
def test_layers_equal_rgcnconv(conv):
    # Every layer implementation computes exactly RGCNConv's function.
    edge_index, edge_type, _ = toy()
    model = RGCN(6, 4, 2, hidden_channels=8, num_bases=3, conv=conv)
    slow = RGCN(6, 4, 2, hidden_channels=8, num_bases=3, conv="pyg")
    slow.load_state_dict(model.state_dict())
    assert isinstance(slow.conv1, RGCNConv)
    torch.testing.assert_close(
        model(edge_index, edge_type), slow(edge_index, edge_type)
    )


def test_hand_computed_layer():
    # One relation, one basis, identity weights: a node's output is its root
    # term plus the mean of its in-neighbours under each relation.
    edge_index = torch.tensor([[0, 1], [2, 2]])
    edge_type = torch.tensor([0, 0])
    model = RGCN(3, 1, 2, hidden_channels=2, num_bases=1, input="embedding")
    with torch.no_grad():
        model.embedding.copy_(torch.tensor([[1.0, 0.0], [3.0, 2.0], [0.0, 0.0]]))
        model.conv1.weight.copy_(torch.eye(2).view(1, 2, 2))
        model.conv1.comp.fill_(1.0)
        model.conv1.root.zero_()
        model.conv1.bias.zero_()
    h = model.conv1(model.embedding, edge_index, edge_type)
    torch.testing.assert_close(h[2], torch.tensor([2.0, 1.0]))  # mean of rows 0, 1
    torch.testing.assert_close(h[:2], torch.zeros(2, 2))  # no in-edges, no root


def test_load_bases_and_errors():
    m = RGCN(6, 4, 2, hidden_channels=8, num_bases=3, input="embedding")
    new = {k: torch.full_like(v, 0.5) for k, v in m.bases().items()}
    m.load_bases(new)
    assert torch.equal(m.conv1.weight, new["conv1.weight"])
    with pytest.raises(ValueError, match="conv2.weight"):
        m.load_bases({"conv2.weight": torch.zeros(1, 1, 1)})
    with pytest.raises(ValueError, match="input"):
        RGCN(6, 4, 2, input="features")
    with pytest.raises(ValueError, match="num_classes"):
        RGCN(6, 4, 0)
    with pytest.raises(ValueError, match="conv"):
        RGCN(6, 4, 2, conv="sparse")
    assert F.softmax(m(*toy()[:2]), -1).shape == (6, 2)
