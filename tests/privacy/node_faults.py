r"""A Flower mod for the real-process tests (run-config ``client-mods =
"node_faults:pause_masked_input"``, this folder on the nodes'
``PYTHONPATH``): one node stops in SecAgg+'s masked-input exchange of one
round, so that the test can kill its SuperNode at that point of the round.

``FEDGRAPH_PAUSE_NODE = "PARTITION:ROUND:MARKER"`` (the nodes' environment)
names the node (its ``partition-id``), the round and a file. When that node
receives the round's masked-input ``train`` message (after the setup
exchange: its round key and shares are with the server), the mod writes
``MARKER`` and waits instead of answering; the test sees the file and sends
``SIGKILL`` to the SuperNode's process group (the node's ``ClientApp``
worker exits when its SuperNode is gone). Every other message passes
through unchanged.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

ENV = "FEDGRAPH_PAUSE_NODE"
#: the longest wait (seconds) should the test never kill the node.
PAUSE = 600.0


def _is_masked_input(
    message: Any, partition: int, server_round: int, node: Any
) -> bool:
    if message.metadata.message_type != "train":
        return False
    if node.get("partition-id") != partition:
        return False
    from fedgraph.privacy.secagg_plus import STAGE
    from fedgraph.runtime.flower.protocol import SERVER_ROUND, from_content

    payload, control = from_content(message.content)
    return control.get(SERVER_ROUND) == server_round and STAGE not in payload.config


def pause_masked_input(message: Any, context: Any, call_next: Any) -> Any:
    r"""The mod (see the module)."""
    spec = os.environ.get(ENV, "")
    if spec:
        partition, server_round, marker = spec.split(":", 2)
        if _is_masked_input(
            message, int(partition), int(server_round), context.node_config
        ):
            Path(marker).write_text(f"{os.getpid()}\n")
            time.sleep(PAUSE)
    return call_next(message, context)
