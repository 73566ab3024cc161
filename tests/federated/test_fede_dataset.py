r"""FedE's exchange on the published FedLU R3 partition (no training: cheap)."""

import pytest
import torch

from fedgraph.data import load_federated_folder
from fedgraph.federated import FedE, Payload


@pytest.mark.dataset
def test_fede_exchange_on_fedlu_r3(data_root):
    fed = load_federated_folder(data_root / "fedlu-fb15k-237" / "R3")
    strategy = FedE(fed.num_entities, 8, init_range=1.0)
    regs = {s.client_id: Payload(row_ids={"entity": s.entity_ids}) for s in fed}
    strategy.register(regs)
    sent = strategy.configure_train(1, [0, 1, 2])
    for s in fed:  # each client receives exactly the rows of the entities it holds
        assert torch.equal(sent[s.client_id].row_ids["entity"], s.entity_ids)
        assert sent[s.client_id].num_params() == s.num_entities * 8
    # clients echo +c: the new table is the mean over each entity's holders
    replies = {
        c: Payload(arrays={"entity": p.arrays["entity"] + c}, row_ids=p.row_ids)
        for c, p in sent.items()
    }
    before = strategy.table.clone()
    strategy.aggregate_train(1, replies)
    holders = torch.zeros(fed.num_entities)
    offset = torch.zeros(fed.num_entities)
    for s in fed:
        holders[s.entity_ids] += 1
        offset[s.entity_ids] += s.client_id
    assert bool((holders > 0).all())  # every global entity is held by someone
    expected = before + (offset / holders).unsqueeze(1)
    torch.testing.assert_close(strategy.table, expected)
    assert int((holders >= 2).sum()) > 0.5 * fed.num_entities  # R3 shares most entities
