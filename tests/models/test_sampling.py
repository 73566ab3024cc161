import pytest
import torch

from fedgraph.models.samplers import UniformNegativeSampler, subsampling_weights

pytestmark = pytest.mark.usefixtures("one_thread")


def test_shapes_and_seed():
    pos = torch.tensor([[0, 0, 1], [2, 1, 3]])
    s = UniformNegativeSampler(10, 4)
    a = s.sample(pos, "tail-batch", torch.Generator().manual_seed(1))
    b = s.sample(pos, "tail-batch", torch.Generator().manual_seed(1))
    assert a.shape == (2, 4) and torch.equal(a, b)
    assert UniformNegativeSampler(10, 4, shared=True).sample(
        pos, "head-batch"
    ).shape == (4,)


def test_filtered_never_returns_true_triples():
    # every (0, 0, t) with t != 9 is true: tail corruption must give 9
    true = torch.tensor([[0, 0, t] for t in range(9)])
    s = UniformNegativeSampler(
        10, 50, filtered=True, filter_triples=true, max_redraws=200
    )
    neg = s.sample(true[:2], "tail-batch", torch.Generator().manual_seed(0))
    assert (neg == 9).all()
    # head corruption of (h, 0, 0): true heads are 0 only
    neg = s.sample(
        torch.tensor([[0, 0, 0]]), "head-batch", torch.Generator().manual_seed(0)
    )
    assert (neg != 0).all()


def test_errors():
    with pytest.raises(ValueError, match="`shared=True`"):
        UniformNegativeSampler(
            10, 4, shared=True, filtered=True, filter_triples=torch.zeros(1, 3)
        )
    with pytest.raises(ValueError, match="`num_negatives`"):
        UniformNegativeSampler(10, 0)
    with pytest.raises(ValueError, match="`mode`"):
        UniformNegativeSampler(10, 2).sample(torch.zeros(1, 3, dtype=torch.long), "x")


def test_subsampling_weights_hand_computed():
    t = torch.tensor([[0, 0, 1], [0, 0, 2], [3, 1, 1]])
    # (h=0,r=0) occurs twice -> 4 + 1 = 5; (t=1,r=0) once -> 4; w = (5 + 4)^-1/2
    w = subsampling_weights(t)
    assert w.tolist() == pytest.approx([9**-0.5, 9**-0.5, 8**-0.5])
