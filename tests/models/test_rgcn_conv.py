import pytest
import torch
from torch_geometric.nn import RGCNConv

from fedgraph.models.gnn.conv import GatherRGCNConv


def random_graph(num_nodes=40, num_relations=7, num_edges=300, seed=0):
    gen = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, num_nodes, (2, num_edges), generator=gen)
    # Relation 3 is left without edges: an empty group must be handled.
    edge_type = torch.randint(0, num_relations - 1, (num_edges,), generator=gen)
    edge_type[edge_type == 3] = num_relations - 1
    return edge_index, edge_type


@pytest.mark.parametrize("onehot", [False, True])
@pytest.mark.parametrize("num_bases", [None, 4])
def test_equals_rgcnconv_forward_and_backward(onehot, num_bases):
    torch.manual_seed(0)
    edge_index, edge_type = random_graph()
    in_ch = 40 if onehot else 5
    ref = RGCNConv(in_ch, 3, 7, num_bases=num_bases)
    ours = GatherRGCNConv(in_ch, 3, 7, num_bases=num_bases)
    ours.load_state_dict(ref.state_dict())
    x = None if onehot else torch.randn(40, 5)
    out_ref, out = ref(x, edge_index, edge_type), ours(x, edge_index, edge_type)
    torch.testing.assert_close(out, out_ref)
    w = torch.randn_like(out)
    g_ref = torch.autograd.grad((out_ref * w).sum(), list(ref.parameters()))
    g = torch.autograd.grad((out * w).sum(), list(ours.parameters()))
    for a, b in zip(g, g_ref, strict=True):
        torch.testing.assert_close(a, b)


def test_hand_computed_mean_per_relation():
    # Node 2 receives 1 and 3 via relation 0 (mean) and 0 via relation 1.
    conv = GatherRGCNConv(1, 1, 2, root_weight=False, bias=False)
    with torch.no_grad():
        conv.weight.copy_(torch.tensor([[[1.0]], [[10.0]]]))
    x = torch.tensor([[1.0], [2.0], [0.0], [4.0]])
    edge_index = torch.tensor([[1, 3, 0], [2, 2, 2]])
    out = conv(x, edge_index, torch.tensor([0, 0, 1]))
    assert out[2, 0].item() == pytest.approx((2.0 + 4.0) / 2 + 10.0 * 1.0)
    assert out[[0, 1, 3]].abs().sum().item() == 0.0


def test_double_backward_matches_rgcnconv():
    # The -L penalty differentiates the input gradient's norm.
    torch.manual_seed(1)
    edge_index, edge_type = random_graph()
    ref = RGCNConv(5, 3, 7, num_bases=2)
    ours = GatherRGCNConv(5, 3, 7, num_bases=2)
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(40, 5, requires_grad=True)
    grads = []
    for conv in (ref, ours):
        (gx,) = torch.autograd.grad(
            conv(x, edge_index, edge_type).tanh().sum(), x, create_graph=True
        )
        grads.append(torch.autograd.grad(gx.norm(), list(conv.parameters())))
    for a, b in zip(*grads, strict=True):
        torch.testing.assert_close(a, b)


def test_grouping_cache_follows_the_edges():
    torch.manual_seed(2)
    conv = GatherRGCNConv(5, 3, 7)
    x = torch.randn(40, 5)
    e1, t1 = random_graph(seed=1)
    e2, t2 = random_graph(seed=2)
    first = conv(x, e1, t1)
    torch.testing.assert_close(conv(x, e2, t2), RGCNConv.forward(conv, x, e2, t2))
    torch.testing.assert_close(conv(x, e1, t1), first)


def test_rejects_bad_input():
    with pytest.raises(ValueError, match="num_blocks"):
        GatherRGCNConv(4, 4, 2, num_blocks=2)
    conv = GatherRGCNConv(5, 3, 2)
    with pytest.raises(ValueError, match="edge_type"):
        conv(torch.randn(4, 5), torch.tensor([[0], [1]]), torch.tensor([2]))


def test_graph_without_edges_keeps_root_and_bias():
    conv = GatherRGCNConv(5, 3, 4)
    x = torch.randn(6, 5)
    empty = torch.zeros(2, 0, dtype=torch.long)
    out = conv(x, empty, torch.zeros(0, dtype=torch.long))
    torch.testing.assert_close(out, x @ conv.root + conv.bias)
