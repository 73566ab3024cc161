import pytest
import torch

from fedgraph.federated import Payload
from fedgraph.runtime.flower.records import payload_to_recorddict, recorddict_to_payload

pytest.importorskip("flwr")


def test_payload_roundtrips_through_flower_records():
    p = Payload(
        arrays={"entity": torch.randn(3, 4)},
        row_ids={"entity": torch.tensor([7, 2, 9])},
        config={"proximal-mu": 0.1, "split": "valid", "full": True, "server-round": 3},
        metrics={"count": 2, "loss_sum": 0.5},
        num_examples=11,
    )
    rd = payload_to_recorddict(p)
    assert rd["metrics"]["num-examples"] == 11
    q = recorddict_to_payload(rd)
    assert torch.equal(q.arrays["entity"], p.arrays["entity"])
    assert torch.equal(q.row_ids["entity"], p.row_ids["entity"])
    assert q.config == p.config and q.metrics == p.metrics and q.num_examples == 11
    assert q.num_bytes() == p.num_bytes()


def test_empty_payload_roundtrips():
    q = recorddict_to_payload(payload_to_recorddict(Payload(config={"split": "test"})))
    assert q.arrays == {} and q.row_ids == {} and q.config == {"split": "test"}
