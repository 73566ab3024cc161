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


def _objects(content):
    from flwr.supercore.inflatable.inflatable_object import get_all_nested_objects

    return get_all_nested_objects(content)


@pytest.mark.parametrize("chunk", [None, 16])
def test_packed_content_roundtrips_bit_for_bit_in_fewer_flower_objects(
    chunk, monkeypatch
):
    # chunk 16 bytes: the tensors no longer fit in one Flower array chunk
    # and travel as one uint8 array of their own
    from flwr.common import constant

    from fedgraph.runtime.flower.protocol import from_content, to_content

    if chunk is not None:
        monkeypatch.setattr(constant, "FLWR_PRIVATE_MAX_ARRAY_CHUNK_SIZE", chunk)
    p = Payload(
        arrays={
            "entity": torch.randn(3, 4),
            "f64": torch.randn(2, 2, dtype=torch.float64),
            "i16": torch.arange(5, dtype=torch.int16),
            "mask": torch.tensor([True, False, True]),
            "scalar": torch.tensor(2.5),
            "empty": torch.zeros(0, 4),
            "strided": torch.randn(4, 3).t(),
        },
        row_ids={"entity": torch.tensor([7, 2, 9])},
        config={"proximal-mu": 0.1, "split": "valid", "full": True, "a/b": 3},
        metrics={"count": 2, "loss_sum": 0.5},
        num_examples=11,
    )
    control = {"server-round": 3, "use-best": False, "entity-tokens": [5, 1]}
    plain, packed = to_content(p, control), to_content(p, control, packed=True)
    for content in (plain, packed):
        q, c = from_content(content)
        assert c == control
        assert q.config == p.config and q.metrics == p.metrics
        assert q.num_examples == 11 and q.num_bytes() == p.num_bytes()
        for got, sent in ((q.arrays, p.arrays), (q.row_ids, p.row_ids)):
            assert list(got) == list(sent)
            for k in sent:
                assert got[k].dtype == sent[k].dtype and got[k].shape == sent[k].shape
                assert torch.equal(got[k], sent[k])
        assert type(q.config["a/b"]) is int and type(q.metrics["count"]) is int
    if chunk is None:  # RecordDict and one ConfigRecord holding the bytes
        assert list(packed) == ["fedgraph-packed"] and len(_objects(packed)) == 2
    else:  # + one ArrayRecord with one Array (169 bytes) and its chunk
        assert list(packed) == ["fedgraph-packed", "fedgraph-tensors"]
        assert packed["fedgraph-tensors"]["bytes"].shape == (169,)
        assert len(_objects(packed)) == 2 + 3
        # RecordDict, 2 ArrayRecords with 8 Arrays of one chunk each,
        # 2 ConfigRecords, 1 MetricRecord
        assert len(_objects(plain)) == 1 + 2 + 8 + 8 + 3


def test_packed_content_without_tensors_is_one_record():
    from fedgraph.runtime.flower.protocol import from_content, reply_content, to_content
    from fedgraph.runtime.flower.records import is_packed

    p = Payload(metrics={"mrr_sum": 1.5, "count": 3}, num_examples=3)
    packed = to_content(p, {"server-round": 1}, packed=True)
    assert list(packed) == ["fedgraph-packed"] and len(_objects(packed)) == 2
    q, c = from_content(packed)
    assert q.arrays == {} and q.row_ids == {} and q.metrics == p.metrics
    assert c == {"server-round": 1} and q.num_examples == 3
    # a reply takes the layout of the message it answers
    assert is_packed(reply_content(packed, p, {}))
    assert not is_packed(reply_content(to_content(p, {}), p, {}))
