import pytest
import torch

from fedgraph.federated import CommLedger, Payload, PayloadError
from fedgraph.federated.payload import SCALAR_BYTES


def test_payload_counts_params_ids_and_bytes_exactly():
    p = Payload(
        arrays={"entity": torch.zeros(5, 4), "w": torch.zeros(3, dtype=torch.float64)},
        row_ids={"entity": torch.arange(5)},
        config={"proximal-mu": 0.1, "split": "valid", "flag": True},
        metrics={"count": 3},
        num_examples=7,
    )
    assert p.num_params() == 5 * 4 + 3
    assert p.num_ids() == 5
    expected = 20 * 4 + 3 * 8 + 5 * 8 + SCALAR_BYTES + len("valid") + 1 + SCALAR_BYTES
    assert p.num_bytes() == expected + SCALAR_BYTES  # + num_examples


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(arrays={"e": [1, 2]}), r"`arrays\['e'\]` must be a Tensor"),
        (
            dict(arrays={"e": torch.zeros(2, 2)}, row_ids={"e": torch.arange(3)}),
            r"has 3 ids but `arrays\['e'\]` has 2 rows",
        ),
        (dict(row_ids={"e": torch.zeros(2)}), "1-D integer tensor"),
        (dict(config={"x": [1]}), r"`config\['x'\]` must be an int"),
        (dict(num_examples=-1), "non-negative"),
    ],
)
def test_payload_rejects_contract_violations(kwargs, match):
    with pytest.raises(PayloadError, match=match):
        Payload(**kwargs)


def test_payload_detach_copies_and_roundtrips():
    w = torch.nn.Parameter(torch.ones(2, 2))
    p = Payload(arrays={"w": w}, num_examples=3)
    q = p.detach()
    assert not q.arrays["w"].requires_grad
    q.arrays["w"].add_(1)
    assert torch.all(w == 1)
    r = Payload.from_dict(q.to_dict())
    assert torch.equal(r.arrays["w"], q.arrays["w"]) and r.num_examples == 3


def test_ledger_sums_payload_sizes():
    led = CommLedger()
    a = Payload(arrays={"e": torch.zeros(3, 2)}, row_ids={"e": torch.arange(3)})
    b = Payload(arrays={"e": torch.zeros(1, 2)}, num_examples=4)
    led.record(1, 0, "down", a)
    led.record(1, 0, "up", b)
    led.record(2, 1, "down", a)
    t = led.totals()
    assert t["params_down"] == 2 * a.num_params() and t["params_up"] == b.num_params()
    assert t["bytes_down"] == 2 * a.num_bytes() and t["bytes_up"] == b.num_bytes()
    assert t["ids_down"] == 6 and t["messages_down"] == 2
    assert led.per_round()[2]["params_down"] == 6
    assert led.per_client()[0]["bytes_up"] == b.num_bytes()
    assert led.totals(upto_round=1)["params_down"] == a.num_params()
    led2 = CommLedger()
    led2.load_state_dict(led.state_dict())
    assert led2.totals() == t
    with pytest.raises(ValueError, match="`direction`"):
        led.record(1, 0, "sideways", a)
