r"""Payload ↔ Flower records, so that a Flower ``ServerApp``/``ClientApp`` can
carry the very same payloads the simulation exchanges (``pip install
fedgraph-kg[flower]``)."""

from __future__ import annotations

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


__all__ = ["payload_to_recorddict", "recorddict_to_payload"]
