r"""What the fedgraph Flower apps put in a ``Message``.

A message's ``RecordDict`` holds one :class:`~fedgraph.federated.Payload`
(:func:`~fedgraph.runtime.flower.records.payload_to_recorddict`: ``"arrays"``,
``"row-ids"``, ``"config"``, ``"metrics"``) plus one small control record,
``"fedgraph"`` (a ``ConfigRecord`` of integers and booleans): the round, the
best validation round so far, whether to keep the evaluated state, and, in a
registration reply, the client's ``partition-id``. The communication ledger
counts the payload only, exactly as the in-process simulation does; the
control record is protocol framing, like Flower's own message metadata.

With the run-config key ``compact-messages`` the server sends every message
in the packed layout of :func:`~fedgraph.runtime.flower.records.pack_content`
(one ``ConfigRecord`` with the control values, config, metrics and all
tensors as one byte string, which moves to an ``ArrayRecord`` of its own
when larger than one Flower array chunk: 3 Flower objects, or 6, instead of
6 to 11, each of which is one request on each hop of a deployment); a client answers in the layout of the message it answers
(:func:`reply_content`). The values, and the ledger's counts, are the same in
both layouts.

Message types (Flower's ``"<category>.<action>"``):

* ``"query.align"``: server → every connected node once, before the
  strategy exists; the reply's control record carries what the server needs
  to know of the node (:mod:`~fedgraph.runtime.flower.alignment`), its
  payload is empty.
* ``"query.register"``: server → every node once (and to a restarted node
  when it rejoins, with ``rejoin-round``); the reply is the client's
  :meth:`~fedgraph.federated.Client.register` payload and its partition id.
* ``"train"``: a :meth:`~fedgraph.federated.Strategy.configure_train`
  payload; the reply is the client's ``fit`` payload.
* ``"evaluate"``: a ``configure_evaluate`` payload; the reply is the
  client's ``evaluate`` payload (mergeable metric sums).
* ``"query.fuse"`` (run config ``fusion.enabled``, after the test pass): the
  test pass's ``configure_evaluate`` payload again; the client fuses the
  model it was tested with and its own single-KG model (FedE §2.2.3) and
  replies with the three models' mergeable test sums and its fitted layer
  (:func:`~fedgraph.runtime.flower.fusion.fusion_to_metrics`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fedgraph.federated.payload import Payload
from fedgraph.runtime.flower.records import (
    is_packed,
    pack_content,
    payload_to_recorddict,
    recorddict_to_payload,
    unpack_content,
)

ALIGN = "query.align"
REGISTER = "query.register"
TRAIN = "train"
EVALUATE = "evaluate"
FUSE = "query.fuse"

#: name of the control record in a message's ``RecordDict``.
CONTROL = "fedgraph"
#: control keys: the federated round; the best validation round so far
#: (``0``: none yet); "keep the state you evaluate as a best-round candidate";
#: "evaluate your best-round state"; a registering client's index.
SERVER_ROUND = "server-round"
BEST_ROUND = "best-round"
SNAPSHOT = "snapshot"
USE_BEST = "use-best"
PARTITION_ID = "partition-id"
#: control keys of checkpointed runs: "save your state to your node's
#: ``state-dir`` after this message"; "restore the state you saved for this
#: round" (in the registration of a resumed run).
CHECKPOINT = "checkpoint"
RESUME_ROUND = "resume-round"
#: control keys of a node rejoining a running federation: "you come back
#: after a failure; restore your newest saved state at or before this round
#: if you lost yours" (server → node); the round of the state the node
#: continues from, ``0`` for its initial state (node → server).
REJOIN_ROUND = "rejoin-round"
RESTORED_ROUND = "restored-round"


class ClientReplyError(RuntimeError):
    r"""A SuperNode answered with an error, or not at all, or with a reply
    the server cannot use, and the run's failure settings
    (``accept-failures``, ``min-fit-nodes``) do not let the round go on
    without it; the run stops. The message names the client
    (``partition-id``) and the round."""


def to_content(
    payload: Payload, control: Mapping[str, int | bool], *, packed: bool = False
) -> Any:
    r"""The ``RecordDict`` carrying ``payload`` and the control values; with
    ``packed``, in the packed layout of
    :func:`~fedgraph.runtime.flower.records.pack_content` (fewer Flower
    objects per message, same values)."""
    from flwr.app import ConfigRecord

    if packed:
        return pack_content(payload, control)
    content = payload_to_recorddict(payload)
    content[CONTROL] = ConfigRecord(dict(control))
    return content


def from_content(content: Any) -> tuple[Payload, dict[str, Any]]:
    r"""Inverse of :func:`to_content`: the payload and the control values
    (``{}`` when the message has no control record), from either layout."""
    if is_packed(content):
        return unpack_content(content)
    control = dict(content[CONTROL]) if CONTROL in content else {}
    return recorddict_to_payload(content), control


def reply_content(
    request: Any, payload: Payload, control: Mapping[str, int | bool]
) -> Any:
    r"""The content of a reply to a message with content ``request``: in the
    request's layout (packed or not)."""
    return to_content(payload, control, packed=is_packed(request))


__all__ = [
    "ALIGN",
    "REGISTER",
    "TRAIN",
    "EVALUATE",
    "FUSE",
    "CONTROL",
    "SERVER_ROUND",
    "BEST_ROUND",
    "SNAPSHOT",
    "USE_BEST",
    "PARTITION_ID",
    "CHECKPOINT",
    "RESUME_ROUND",
    "REJOIN_ROUND",
    "RESTORED_ROUND",
    "ClientReplyError",
    "to_content",
    "from_content",
    "reply_content",
]
