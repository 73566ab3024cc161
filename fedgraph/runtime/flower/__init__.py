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
  in one process without a SuperLink.
"""

from fedgraph.runtime.flower.client_app import build_kge_client, make_client_app
from fedgraph.runtime.flower.config import FlowerRunSettings, node_device, partition_id
from fedgraph.runtime.flower.local import LocalGrid, run_local
from fedgraph.runtime.flower.protocol import ClientReplyError
from fedgraph.runtime.flower.server_app import (
    build_kge_strategy,
    make_server_app,
    run_server,
)
from fedgraph.runtime.flower.transport import GridTransport
from fedgraph.runtime.loop import evaluate_clients, run_federation
from fedgraph.runtime.transport import InProcessTransport, Transport

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
]
