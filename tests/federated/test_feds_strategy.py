import pytest
import torch

from fedgraph.federated.kge.feds import FULL_UPLOAD, PRIORITY, SIGN, FedEP, FedS
from fedgraph.federated.payload import Payload, PayloadError

IDS = {0: torch.tensor([0, 1, 2]), 1: torch.tensor([1, 2, 3]), 2: torch.tensor([0, 2])}


def _registered(cls, **kw):
    s = cls(4, 1, init_range=1.0, **kw)
    s.register({c: Payload(row_ids={"entity": v}) for c, v in IDS.items()})
    return s


def test_fedep_shares_only_common_entities_and_averages():
    s = _registered(FedEP)
    assert {c: v.tolist() for c, v in s.shared_ids.items()} == {
        0: [0, 1, 2],
        1: [1, 2],
        2: [0, 2],
    }
    down = s.configure_train(1, [0, 1, 2])
    assert down[1].row_ids["entity"].tolist() == [1, 2]  # entity 3 is never sent
    assert down[1].arrays["entity"].shape == (2, 1) and down[1].config[FULL_UPLOAD]
    assert "entity" not in s.configure_train(2, [1])[1].row_ids  # ids sent once
    s.aggregate_train(
        1,
        {
            0: Payload(arrays={"entity": torch.tensor([[1.0], [2.0], [3.0]])}),
            1: Payload(arrays={"entity": torch.tensor([[4.0], [5.0]])}),
            2: Payload(arrays={"entity": torch.tensor([[7.0], [8.0]])}),
        },
    )
    assert s.table[:3].flatten().tolist() == pytest.approx([4.0, 3.0, 16 / 3])
    with pytest.raises(PayloadError, match="2 shared entities"):
        s.aggregate_train(2, {1: Payload(arrays={"entity": torch.zeros(3, 1)})})


def test_feds_schedule_sparse_round_and_personalised_download():
    s = _registered(FedS, p=0.5, sync_interval=2)
    assert [s.is_full_upload(r) for r in range(1, 8)] == [
        True,
        False,
        False,
        True,
        False,
        False,
        True,
    ]
    full = {
        c: Payload(arrays={"entity": torch.zeros(len(v), 1)})
        for c, v in s.shared_ids.items()
    }
    s.aggregate_train(1, full)
    down2 = s.configure_train(2, [0, 1, 2])
    assert SIGN not in down2[0].arrays and not down2[0].config[FULL_UPLOAD]
    # round 2 sparse uploads (K = floor(0.5 N_c)): c0 -> {0}, c1 -> {2}, c2 -> {2}
    s.aggregate_train(
        2,
        {
            0: Payload(
                arrays={
                    "entity": torch.tensor([[1.0]]),
                    SIGN: torch.tensor([True, False, False]),
                }
            ),
            1: Payload(
                arrays={
                    "entity": torch.tensor([[10.0]]),
                    SIGN: torch.tensor([False, True]),
                }
            ),
            2: Payload(
                arrays={
                    "entity": torch.tensor([[100.0]]),
                    SIGN: torch.tensor([False, True]),
                }
            ),
        },
    )
    down3 = s.configure_train(3, [0, 1, 2])
    # client 0: A = [0, 0, 110], P = [0, 0, 2] -> K = 1: entity 2
    assert down3[0].arrays[SIGN].tolist() == [False, False, True]
    assert down3[0].arrays["entity"].flatten().tolist() == [110.0]
    assert down3[0].arrays[PRIORITY].tolist() == [2]
    # client 1: A(2) = 100 from client 2, P = 1
    assert down3[1].arrays[SIGN].tolist() == [False, True]
    assert down3[1].arrays["entity"].flatten().tolist() == [100.0]
    # client 2: A(0) = 1 (P=1), A(2) = 10 (P=1): K = 1, a random one of the two
    assert int(down3[2].arrays[SIGN].sum()) == 1
    # what is counted: K rows * D + N_c sign entries + K priorities
    assert down3[0].num_params() == 1 + 3 + 1
    assert (
        down3[0].num_bytes()
        == 4
        + 3 * 1
        + 2
        + sum(
            8
            if not isinstance(v, (bool, str))
            else (1 if isinstance(v, bool) else len(v))
            for v in down3[0].config.values()
        )
        + 8
    )
    # sparse upload with an inconsistent sign vector is rejected
    with pytest.raises(PayloadError, match="sign"):
        s.aggregate_train(
            3,
            {
                0: Payload(
                    arrays={
                        "entity": torch.zeros(2, 1),
                        SIGN: torch.tensor([True, False, False]),
                    }
                )
            },
        )


def test_feds_state_roundtrip():
    s = _registered(FedS, p=0.5, sync_interval=2)
    s.aggregate_train(
        1,
        {
            c: Payload(arrays={"entity": torch.ones(len(v), 1)})
            for c, v in s.shared_ids.items()
        },
    )
    s.aggregate_train(
        2,
        {
            0: Payload(
                arrays={
                    "entity": torch.tensor([[1.0]]),
                    SIGN: torch.tensor([True, False, False]),
                }
            )
        },
    )
    t = FedS(4, 1, init_range=1.0, p=0.5, sync_interval=2)
    t.load_state_dict(s.state_dict())
    a, b = s.configure_train(3, [1]), t.configure_train(3, [1])
    assert torch.equal(a[1].arrays["entity"], b[1].arrays["entity"])
    assert torch.equal(a[1].arrays[SIGN], b[1].arrays[SIGN])
