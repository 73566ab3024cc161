r"""Type aliases shared across fedgraph.

Conventions:

* ``Triples``: a ``torch.long`` tensor of shape ``[n, 3]`` whose columns are
  ``(head, relation, tail)``, always in this order, whatever the file format.
* ``IdMap``: a ``torch.long`` tensor of shape ``[n_local]`` mapping a client's
  local ids to global ids (``global_id = id_map[local_id]``).
* ``StateDict``: a flat mapping of names to tensors, as sent between a server
  and its clients.
"""

from __future__ import annotations

from collections.abc import Mapping

from torch import Tensor

Triples = Tensor
IdMap = Tensor
StateDict = Mapping[str, Tensor]
Metrics = Mapping[str, float]

SPLITS = ("train", "valid", "test")

__all__ = ["Triples", "IdMap", "StateDict", "Metrics", "SPLITS"]
