r"""The federated KGE dataset a Flower run config names (its ``data`` key),
read on a SuperNode to build its client (:mod:`~fedgraph.runtime.flower.client_app`)
and to answer the alignment request (:mod:`~fedgraph.runtime.flower.alignment`).

The read-only data is cached per process: it never changes during a run, so
a cache can only save reloading it.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any


@functools.lru_cache(maxsize=2)
def load_federation(data: str) -> Any:
    r"""The :class:`~fedgraph.data.shard.FederatedKG` named by the run
    config's ``data`` (a registered name or a partition folder)."""
    from fedgraph.data import load_dataset
    from fedgraph.data.shard import FederatedKG

    fed = load_dataset(Path(data) if Path(data).is_dir() else data)
    if not isinstance(fed, FederatedKG):
        raise ValueError(
            f"Run-config key `data` must name a federated dataset or partition "
            f"folder (got {data!r}, a {type(fed).__name__}); partition it with "
            "`fedgraph partition DATASET --clients K --out DIR`."
        )
    return fed


__all__ = ["load_federation"]
