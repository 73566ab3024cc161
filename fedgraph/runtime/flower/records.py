r"""Payload ↔ Flower records, so that a Flower ``ServerApp``/``ClientApp`` can
carry the very same payloads the simulation exchanges (``pip install
fedgraph-kg[flower]``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fedgraph.federated.payload import Payload

NUM_EXAMPLES = "num-examples"


def payload_to_recorddict(payload: Payload) -> Any:
    r"""A Flower ``RecordDict`` with ``"arrays"``, ``"row-ids"`` (both
    ``ArrayRecord``), ``"config"`` (``ConfigRecord``) and ``"metrics"``
    (``MetricRecord``, holding ``"num-examples"`` as Flower's strategies
    expect)."""
    from flwr.app import ArrayRecord, ConfigRecord, MetricRecord, RecordDict

    rd = RecordDict()
    rd["arrays"] = ArrayRecord({k: v.detach().cpu() for k, v in payload.arrays.items()})
    rd["row-ids"] = ArrayRecord(
        {k: v.detach().cpu() for k, v in payload.row_ids.items()}
    )
    rd["config"] = ConfigRecord(dict(payload.config))
    rd["metrics"] = MetricRecord(
        {**payload.metrics, NUM_EXAMPLES: int(payload.num_examples)}
    )
    return rd


def recorddict_to_payload(rd: Any) -> Payload:
    r"""Inverse of :func:`payload_to_recorddict`."""
    metrics = dict(rd["metrics"])
    num_examples = int(metrics.pop(NUM_EXAMPLES, 0))
    arrays = dict(rd["arrays"].to_torch_state_dict()) if len(rd["arrays"]) else {}
    row_ids = dict(rd["row-ids"].to_torch_state_dict()) if len(rd["row-ids"]) else {}
    return Payload(
        arrays=arrays,
        row_ids={k: v.long() for k, v in row_ids.items()},
        config=dict(rd["config"]),
        metrics=metrics,
        num_examples=num_examples,
    )


#: names of the two records of a packed message (:func:`pack_content`).
PACKED = "fedgraph-packed"
TENSORS = "fedgraph-tensors"
#: the packed record's key of the tensor index (a JSON list of
#: ``[section, name, numpy dtype, shape]``, in the order of the bytes).
INDEX = "tensor-index"
#: the packed record's key of the tensors' bytes, when they fit in one
#: Flower array chunk (``FLWR_PRIVATE_MAX_ARRAY_CHUNK_SIZE``, 5 MiB).
INLINE = "tensor-bytes"
_SECTIONS = ("arrays", "row-ids")


def _tensor_bytes(payload: Payload) -> tuple[list[list[Any]], list[bytes]]:
    index, chunks = [], []
    for section, tensors in zip(
        _SECTIONS, (payload.arrays, payload.row_ids), strict=True
    ):
        for name, tensor in tensors.items():
            array = tensor.detach().cpu().numpy()
            index.append([section, name, array.dtype.str, list(array.shape)])
            chunks.append(array.tobytes())
    return index, chunks


def pack_content(payload: Payload, control: Mapping[str, Any]) -> Any:
    r"""The payload and the control values in one Flower record, or two
    when its tensors are larger than one Flower array chunk, so that a
    message is 3 Flower objects (6 with large tensors; the layout of
    :func:`payload_to_recorddict` plus a control record is 6 to 11, and each
    object is one request on every hop of a deployment):

    * ``"fedgraph-packed"`` (``ConfigRecord``): ``"control/<key>"``,
      ``"config/<key>"``, ``"metrics/<key>"``, ``"num-examples"``, the
      tensor index ``"tensor-index"`` (JSON: section, name, dtype, shape)
      and, when they fit in one chunk, the tensors' bytes one after the
      other (``"tensor-bytes"``);
    * ``"fedgraph-tensors"`` (``ArrayRecord``, only for larger tensors):
      those bytes as one ``uint8`` array (chunked by Flower).

    :func:`unpack_content` gives back the same tensors bit for bit (dtype,
    shape and values), scalars and control values."""
    import numpy as np
    from flwr.app import Array, ArrayRecord, ConfigRecord, RecordDict
    from flwr.common import constant

    index, chunks = _tensor_bytes(payload)
    values: dict[str, Any] = {f"control/{k}": v for k, v in control.items()}
    values.update({f"config/{k}": v for k, v in payload.config.items()})
    values.update({f"metrics/{k}": v for k, v in payload.metrics.items()})
    values["num-examples"] = int(payload.num_examples)
    values[INDEX] = json.dumps(index)
    data = b"".join(chunks)
    inline = len(data) <= constant.FLWR_PRIVATE_MAX_ARRAY_CHUNK_SIZE
    if chunks and inline:
        values[INLINE] = data
    content = RecordDict()
    content[PACKED] = ConfigRecord(values)
    if chunks and not inline:
        array = Array(np.frombuffer(data, dtype=np.uint8))
        content[TENSORS] = ArrayRecord({"bytes": array})
    return content


def _unpack_tensors(content: Any, index: list[list[Any]]) -> dict[str, dict]:
    import numpy as np
    import torch

    out: dict[str, dict] = {section: {} for section in _SECTIONS}
    if not index:
        return out
    record = content[PACKED]
    if INLINE in record:
        data = np.frombuffer(record[INLINE], dtype=np.uint8)
    else:
        data = content[TENSORS]["bytes"].numpy()
    offset = 0
    for section, name, dtype, shape in index:
        dt = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.int64))
        array = np.frombuffer(data, dtype=dt, count=count, offset=offset)
        out[section][name] = torch.from_numpy(array.reshape(shape).copy())
        offset += count * dt.itemsize
    return out


def unpack_content(content: Any) -> tuple[Payload, dict[str, Any]]:
    r"""Inverse of :func:`pack_content`: the payload and the control values."""
    sections: dict[str, dict[str, Any]] = {"control": {}, "config": {}, "metrics": {}}
    record = content[PACKED]
    for key, value in record.items():
        section, _, name = key.partition("/")
        if name:
            sections[section][name] = value
    tensors = _unpack_tensors(content, json.loads(record[INDEX]))
    payload = Payload(
        arrays=tensors["arrays"],
        row_ids={k: v.long() for k, v in tensors["row-ids"].items()},
        config=sections["config"],
        metrics=sections["metrics"],
        num_examples=int(record["num-examples"]),
    )
    return payload, sections["control"]


def is_packed(content: Any) -> bool:
    r"""Whether ``content`` was built by :func:`pack_content`."""
    return PACKED in content


__all__ = [
    "payload_to_recorddict",
    "recorddict_to_payload",
    "pack_content",
    "unpack_content",
    "is_packed",
    "PACKED",
    "TENSORS",
]
