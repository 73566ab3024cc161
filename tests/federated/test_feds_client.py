import pytest
import torch
from fedlu_toy import toy_federation, toy_model

from fedgraph.federated.kge.feds import SIGN, FedEP, FedS
from fedgraph.federated.kge.feds_client import FedSClient
from fedgraph.federated.payload import Payload
from fedgraph.runtime.simulation import run_simulation


def _clients(fed):
    return {
        s.client_id: FedSClient(
            s,
            toy_model(s),
            batch_size=16,
            num_negatives=4,
            local_epochs=1,
            lr=0.01,
            seed=0,
        )
        for s in fed
    }


def test_client_sparse_upload_and_update_rule():
    fed = toy_federation()
    strat = FedS(12, 8, init_range=1.0, p=0.5, sync_interval=2)
    clients = _clients(fed)
    strat.register({c: cl.register() for c, cl in clients.items()})
    cl = clients[0]
    pay = strat.configure_train(1, [0])[0]
    assert pay.row_ids["entity"].tolist() == list(range(3, 9))  # shared only
    up = cl.fit(pay)
    assert up.arrays["entity"].shape == (6, 8) and SIGN not in up.arrays
    # a sparse round: K = floor(0.5 * 6) = 3 rows + 6 sign entries
    before_hist = cl.history.clone()
    up = cl.fit(Payload(config={"feds-full-upload": False, "feds-p": 0.5}))
    assert up.arrays["entity"].shape == (3, 8) and up.arrays[SIGN].sum() == 3
    assert up.num_params() == 3 * 8 + 6
    sel = up.arrays[SIGN]
    assert torch.equal(cl.history[sel], up.arrays["entity"])
    assert torch.equal(cl.history[~sel], before_hist[~sel])
    # sparse download: rows 0 and 2 updated by (A + E) / (1 + P)
    E = cl.table.detach()[cl.shared_index].clone()
    sign = torch.tensor([True, False, True, False, False, False])
    A = torch.ones(2, 8)
    cl._receive(
        Payload(
            arrays={
                "entity": A,
                "priority": torch.tensor([1, 2], dtype=torch.int16),
                SIGN: sign,
            }
        )
    )
    new = cl.table.detach()[cl.shared_index]
    assert torch.allclose(new[0], (A[0] + E[0]) / 2)
    assert torch.allclose(new[2], (A[1] + E[2]) / 3)
    assert torch.equal(new[1], E[1])


@pytest.mark.parametrize(
    "cls,kw", [(FedEP, {}), (FedS, {"p": 0.5, "sync_interval": 1})]
)
def test_simulation_runs_and_counts_only_shared_rows(cls, kw):
    fed = toy_federation()
    res = run_simulation(
        cls(12, 8, init_range=1.0, **kw),
        _clients(fed),
        num_rounds=3,
        eval_every=3,
        patience=0,
        progress=False,
    )
    assert 0 < res.test["mrr"] <= 1
    full = 2 * 6 * 8  # two clients x 6 shared rows x dim 8
    if cls is FedEP:
        assert res.comm["params_up"] == 3 * full
    else:  # rounds 1 and 3 full, round 2 sparse: 3 rows + 6 sign entries each
        assert res.comm["params_up"] == 2 * full + 2 * (3 * 8 + 6)
        assert res.comm["params_down"] < 3 * full
