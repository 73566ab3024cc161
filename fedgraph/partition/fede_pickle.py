r"""Reads the federated datasets published with FedE (`zjukg/FedE
<https://github.com/zjukg/FedE>`_, ``data/FB15k237-Fed3.pkl``, ``-Fed5``,
``-Fed10``, ``NELL-995-Fed3.pkl``) as a :class:`FederatedKG`.

Each file is a pickled list with one dict per client,
``{"train" | "valid" | "test": {"edge_index", "edge_type", "edge_index_ori",
"edge_type_ori"}}`` of NumPy arrays (FedE's ``data/README.md``): the
``*_ori`` arrays hold the OpenKE ids of heads/tails (``[2, n]``) and
relations (``[n]``), which become the global ids here; local ids are
rebuilt as the client's global ids in increasing order, as for every
fedgraph partition (:func:`~fedgraph.partition.split.to_local`).

The file is unpickled with an allow-list (NumPy arrays, dtypes and plain
containers only), so a file that would run code is refused instead.

Convert once, then train on the folder::

    python -m fedgraph.cli.fede_pickle FB15k237-Fed3.pkl --out data/fb15k-237-fed3-published
    fedgraph train data/fb15k-237-fed3-published --protocol fede ...
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

import torch

from fedgraph.data.io import DataFormatError
from fedgraph.data.shard import FederatedKG
from fedgraph.partition.split import to_local

SPLITS = ("train", "valid", "test")

#: the globals FedE's pickles need (NumPy array reconstruction)
_ALLOWED = {
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"),
    ("builtins", "dict"),
    ("builtins", "list"),
    ("collections", "OrderedDict"),
}


class _ArrayUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(
                f"refusing to load {module}.{name} (only NumPy arrays are expected)"
            )
        return super().find_class(module, name)


def load_fede_pickle(
    path: str | os.PathLike[str], num_entities: int | None = None
) -> FederatedKG:
    r"""FedE's published partition in ``path`` as a :class:`FederatedKG`.

    Args:
        path (str or PathLike): a FedE ``.pkl`` file.
        num_entities (int, optional): size of the global vocabulary
            (default: the largest id + 1; FB15k-237 in OpenKE ids: 14,541,
            NELL-995: 75,492).

    Raises:
        DataFormatError: the file is not in FedE's format (names the file and
            the client/split at fault).
    """
    path = Path(path)
    try:
        with path.open("rb") as fh:
            clients = _ArrayUnpickler(fh).load()
    except (pickle.UnpicklingError, EOFError, ValueError) as exc:
        raise DataFormatError(f"{path}: not a FedE partition file ({exc})") from None
    if not isinstance(clients, list) or not clients:
        raise DataFormatError(
            f"{path}: expected a list of client dicts (got {type(clients).__name__})"
        )
    splits: list[dict[str, torch.Tensor]] = []
    for c, client in enumerate(clients):
        out = {}
        for split in SPLITS:
            try:
                part = client[split]
                ht = torch.as_tensor(part["edge_index_ori"]).long()
                r = torch.as_tensor(part["edge_type_ori"]).long().view(-1)
            except (KeyError, TypeError) as exc:
                raise DataFormatError(
                    f"{path}: client {c} has no '{split}' edge_index_ori/"
                    f"edge_type_ori ({exc!r})"
                ) from None
            if ht.dim() != 2 or ht.size(0) != 2 or ht.size(1) != r.numel():
                raise DataFormatError(
                    f"{path}: client {c} '{split}': edge_index_ori must be [2, n] "
                    f"with n = len(edge_type_ori) (got {tuple(ht.shape)} and "
                    f"{r.numel()})"
                )
            out[split] = torch.stack([ht[0], r, ht[1]], dim=1)
        splits.append(out)
    every = torch.cat([t for s in splits for t in s.values()])
    if every.numel() and int(every.min()) < 0:
        raise DataFormatError(f"{path}: negative ids")
    n_ent = int(every[:, [0, 2]].max()) + 1 if every.numel() else 0
    if num_entities is not None:
        if num_entities < n_ent:
            raise ValueError(
                f"`num_entities`={num_entities} but {path} holds entity id {n_ent - 1}"
            )
        n_ent = int(num_entities)
    n_rel = int(every[:, 1].max()) + 1 if every.numel() else 0
    shards = [to_local(c, s, n_ent) for c, s in enumerate(splits)]
    meta = {"source": f"FedE {path.name}", "partitioner": "published (FedE)"}
    return FederatedKG(shards, num_entities=n_ent, num_relations=n_rel, meta=meta)


__all__ = ["load_fede_pickle"]
