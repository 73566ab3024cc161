r"""fedgraph on `Flower <https://flower.ai>`_ (``pip install fedgraph-kg[flower]``).

The same :class:`~fedgraph.federated.Strategy` and
:class:`~fedgraph.federated.Client` objects as the in-process simulation,
driven by a ``ServerApp`` over Flower's ``Grid`` and served by a
``ClientApp`` on each SuperNode (see ``docs/flower.md``):

* :mod:`~fedgraph.runtime.flower.server_app`: ``app``, :func:`run_server`;
* :mod:`~fedgraph.runtime.flower.client_app`: ``app``, :func:`make_client_app`;
* :mod:`~fedgraph.runtime.flower.transport`: :class:`GridTransport`, the
  :class:`~fedgraph.runtime.Transport` of the shared round loop
  (:func:`~fedgraph.runtime.run_federation`) over a ``Grid``;
* :mod:`~fedgraph.runtime.flower.local`: :class:`LocalGrid`, the real apps
  in one process without a SuperLink;
* :mod:`~fedgraph.runtime.flower.alignment`: the alignment step through
  which the nodes give the server every size it needs;
* :mod:`~fedgraph.runtime.flower.node`: the process-lived ``ClientApp``
  (a worker keeps the client in memory across messages).
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the module defining it (imported on first use, PEP 562,
#: so that :mod:`fedgraph.runtime.flower.node` imports only Flower)
_EXPORTS = {
    "FlowerRunSettings": "fedgraph.runtime.flower.config",
    "partition_id": "fedgraph.runtime.flower.config",
    "node_device": "fedgraph.runtime.flower.config",
    "Transport": "fedgraph.runtime.transport",
    "InProcessTransport": "fedgraph.runtime.transport",
    "GridTransport": "fedgraph.runtime.flower.transport",
    "run_federation": "fedgraph.runtime.loop",
    "evaluate_clients": "fedgraph.runtime.loop",
    "run_server": "fedgraph.runtime.flower.server_app",
    "make_server_app": "fedgraph.runtime.flower.server_app",
    "build_kge_strategy": "fedgraph.runtime.flower.server_app",
    "make_client_app": "fedgraph.runtime.flower.client_app",
    "build_kge_client": "fedgraph.runtime.flower.client_app",
    "LocalGrid": "fedgraph.runtime.flower.local",
    "run_local": "fedgraph.runtime.flower.local",
    "ClientReplyError": "fedgraph.runtime.flower.protocol",
    "Alignment": "fedgraph.runtime.flower.alignment",
    "AlignedRun": "fedgraph.runtime.flower.alignment",
    "WorkerClientApp": "fedgraph.runtime.flower.node",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "FlowerRunSettings",
    "partition_id",
    "node_device",
    "Transport",
    "InProcessTransport",
    "GridTransport",
    "run_federation",
    "evaluate_clients",
    "run_server",
    "make_server_app",
    "build_kge_strategy",
    "make_client_app",
    "build_kge_client",
    "LocalGrid",
    "run_local",
    "ClientReplyError",
    "Alignment",
    "AlignedRun",
    "WorkerClientApp",
]
