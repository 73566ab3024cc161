r"""Opt-in recording of what the server receives, for :mod:`fedgraph.privacy.attacks`.

:class:`UploadRecorder` wraps the outermost server-side strategy, so it stores
exactly the payloads the server is handed (after every client-side defence:
noised rows, opaque tokens, masked vectors) and the server's aggregate after
each round. Files (``torch.save``, written atomically) under ``DIR``:

* ``registration.pt``: ``{client: Payload.to_dict()}`` (round 0);
* ``round-NNNN.pt``: ``{"round", "uploads": {client: Payload.to_dict()},
  "aggregate": {"entity": table or None, "counts": presence counts or
  None}}``; with ``keep="last"`` only the latest round's file is kept.

Everything in them is a tensor, a number, a string or a plain container (a
:class:`~fedgraph.federated.Payload` holds nothing else), so they are read
back with :func:`~fedgraph.data.checkpoint.load_checkpoint`
(``torch.load(weights_only=True)``): a file that holds any other Python
object is refused, never run, since a run folder may come from someone else.

A run that starts (registers) removes the round files an earlier run left in
``DIR``; a resumed run, which continues from its checkpoint without
registering, keeps those of its rounds before the stop and writes the later
ones (a round recorded again after a stop between its file and the
checkpoint is replaced whole).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fedgraph.data.checkpoint import load_checkpoint
from fedgraph.data.io import atomic_torch_save
from fedgraph.federated.payload import Payload
from fedgraph.privacy.wrap import StrategyWrapper, find_wrapper, innermost

KEEP = ("last", "all")
REGISTRATION = "registration.pt"


#: what to do with a recorded file that cannot be read
_HINT = "record the uploads again (train with --record-uploads)"


def round_file(server_round: int) -> str:
    return f"round-{int(server_round):04d}.pt"


class UploadRecorder(StrategyWrapper):
    r"""Records every registration and ``fit`` reply the wrapped strategy
    receives, and its aggregate after the round.

    Args:
        inner (Strategy): the server side (with its defences).
        directory (path): where the files go.
        keep (str, optional): ``"last"``: only the latest round's uploads
            (the audit's default round); ``"all"``: every round.
            (default: ``"last"``)
    """

    def __init__(
        self, inner: Any, directory: str | os.PathLike[str], keep: str = "last"
    ) -> None:
        super().__init__(inner)
        if keep not in KEEP:
            raise ValueError(f"`keep` must be one of {KEEP} (got {keep!r})")
        self.directory = Path(directory)
        self.keep = keep

    def register(self, registrations: Mapping[int, Payload]) -> None:
        # A run registers once, when it starts (a resumed run continues from
        # its checkpoint without registering): rounds already in the folder
        # belong to an earlier run and would pass for this one's.
        self.directory.mkdir(parents=True, exist_ok=True)
        for old in self.directory.glob("round-*.pt"):
            old.unlink()
        atomic_torch_save(
            {int(c): p.to_dict() for c, p in registrations.items()},
            self.directory / REGISTRATION,
        )
        super().register(registrations)

    def aggregate_train(
        self, server_round: int, replies: Mapping[int, Payload]
    ) -> None:
        super().aggregate_train(server_round, replies)
        from fedgraph.federated.kge.fedr import FedR

        base = innermost(self.inner)
        table = getattr(base, "table", None)
        relation = None
        if isinstance(base, FedR):  # its table holds relations
            table, relation = None, base.table.detach().clone()
        from fedgraph.privacy.secagg import SecAggStrategy

        sec = find_wrapper(self.inner, SecAggStrategy)
        record = {
            "round": int(server_round),
            "uploads": {int(c): p.to_dict() for c, p in replies.items()},
            "aggregate": {
                "entity": None if table is None else table.detach().clone(),
                "counts": None if sec is None else sec.last_counts,
                "relation": relation,
            },
        }
        path = self.directory / round_file(server_round)
        atomic_torch_save(record, path)
        if self.keep == "last":
            for old in self.directory.glob("round-*.pt"):
                if old.name != path.name:
                    old.unlink()


def recorded_rounds(directory: str | os.PathLike[str]) -> list[int]:
    r"""The rounds with a recorded file under ``directory``, ascending."""
    return sorted(int(p.stem[6:]) for p in Path(directory).glob("round-*.pt"))


def load_round(
    directory: str | os.PathLike[str], server_round: int | None = None
) -> dict:
    r"""A recorded round (default: the latest one)."""
    d = Path(directory)
    rounds = recorded_rounds(d)
    if not rounds:
        raise FileNotFoundError(
            f"no recorded uploads in {d}: train with --record-uploads "
            "(Flower: run-config key `privacy.record-uploads`)"
        )
    r = rounds[-1] if server_round is None else int(server_round)
    if r not in rounds:
        raise ValueError(f"round {r} was not recorded in {d} (recorded: {rounds})")
    return load_checkpoint(
        d / round_file(r), keys=("round", "uploads", "aggregate"), hint=_HINT
    )


def load_registration(directory: str | os.PathLike[str]) -> dict[int, dict]:
    path = Path(directory) / REGISTRATION
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found: train with --record-uploads (Flower: run-config "
            "key `privacy.record-uploads`)"
        )
    return load_checkpoint(path, hint=_HINT)


__all__ = [
    "UploadRecorder",
    "load_round",
    "load_registration",
    "recorded_rounds",
    "KEEP",
]
