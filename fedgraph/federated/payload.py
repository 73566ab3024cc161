r"""The message that crosses between a federated server and its clients."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from torch import Tensor

Scalar = int | float | str | bool

#: Bytes one scalar of :attr:`Payload.config` / :attr:`Payload.metrics`
#: occupies on the wire (``int``/``float`` as 64-bit, ``bool`` as one byte,
#: ``str`` as its UTF-8 encoding); ``num_examples`` is one 64-bit integer.
SCALAR_BYTES = 8


class PayloadError(ValueError):
    r"""A payload that breaks the :class:`Payload` contract (wrong types,
    row ids that do not match their array, …)."""


def _scalar_bytes(value: Scalar) -> int:
    if isinstance(value, bool):
        return 1
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    return SCALAR_BYTES


@dataclass
class Payload:
    r"""The only object that crosses between a server and a client.

    Everything inside is a tensor or a scalar, so a payload maps one-to-one
    onto Flower's ``ArrayRecord`` (:attr:`arrays` and :attr:`row_ids`),
    ``ConfigRecord`` (:attr:`config`) and ``MetricRecord`` (:attr:`metrics`
    and :attr:`num_examples`, Flower's ``"num-examples"``).

    Counting rule (what :meth:`num_params` and :meth:`num_bytes` report):

    * :meth:`num_params` is the number of *model parameters* sent: the elements
      of every tensor in :attr:`arrays`. Row ids are an index, not parameters,
      and are reported separately by :meth:`num_ids` (one per row).
    * :meth:`num_bytes` is the exact size of the tensor data sent — every
      tensor in :attr:`arrays` and :attr:`row_ids` at its own dtype
      (``numel * element_size``) — plus :data:`SCALAR_BYTES` per ``int``/
      ``float`` scalar, one byte per ``bool`` and the UTF-8 length of each
      ``str`` in :attr:`config` and :attr:`metrics`, plus
      :data:`SCALAR_BYTES` for :attr:`num_examples`. Dictionary keys are
      protocol framing and are not counted.

    Args:
        arrays (dict[str, Tensor]): named tensors (e.g. ``"entity"``: an
            ``[n, d]`` embedding block).
        row_ids (dict[str, Tensor]): for an array whose rows are keyed by
            *global* entity id, the ``[n]`` long tensor of those ids (same
            key as the array). A key without an array is an id-only message
            (e.g. a registration: "these are the entities I hold").
        config (dict[str, int | float | str | bool]): instructions (server →
            client), e.g. ``{"proximal-mu": 0.1}``.
        metrics (dict[str, int | float]): results (client → server), incl.
            mergeable sums and counts.
        num_examples (int): the number of examples behind the reply (the
            FedAvg weight). (default: :obj:`0`)
    """

    arrays: dict[str, Tensor] = field(default_factory=dict)
    row_ids: dict[str, Tensor] = field(default_factory=dict)
    config: dict[str, Scalar] = field(default_factory=dict)
    metrics: dict[str, int | float] = field(default_factory=dict)
    num_examples: int = 0

    def __post_init__(self) -> None:
        for key, value in self.arrays.items():
            if not isinstance(value, Tensor):
                raise PayloadError(
                    f"`arrays['{key}']` must be a Tensor (got {type(value).__name__})"
                )
        for key, ids in self.row_ids.items():
            if not isinstance(ids, Tensor) or ids.dim() != 1 or ids.is_floating_point():
                raise PayloadError(
                    f"`row_ids['{key}']` must be a 1-D integer tensor "
                    f"(got {getattr(ids, 'shape', type(ids).__name__)})"
                )
            if key in self.arrays and ids.numel() != self.arrays[key].size(0):
                raise PayloadError(
                    f"`row_ids['{key}']` has {ids.numel()} ids but "
                    f"`arrays['{key}']` has {self.arrays[key].size(0)} rows"
                )
        for name, record in (("config", self.config), ("metrics", self.metrics)):
            for key, value in record.items():
                if not isinstance(value, int | float | str | bool):
                    raise PayloadError(
                        f"`{name}['{key}']` must be an int, float, str or bool "
                        f"(got {type(value).__name__})"
                    )
        if int(self.num_examples) < 0:
            raise PayloadError(
                f"`num_examples` must be non-negative (got {self.num_examples})"
            )

    # ------------------------------------------------------------ counting
    def num_params(self) -> int:
        r"""Number of model parameters sent (elements of :attr:`arrays`)."""
        return sum(int(a.numel()) for a in self.arrays.values())

    def num_ids(self) -> int:
        r"""Number of row ids sent (elements of :attr:`row_ids`)."""
        return sum(int(i.numel()) for i in self.row_ids.values())

    def num_bytes(self) -> int:
        r"""Exact bytes sent, by the rule in the class docstring."""
        tensors = list(self.arrays.values()) + list(self.row_ids.values())
        out = sum(int(t.numel()) * t.element_size() for t in tensors)
        out += sum(_scalar_bytes(v) for v in self.config.values())
        out += sum(_scalar_bytes(v) for v in self.metrics.values())
        return out + SCALAR_BYTES

    # ------------------------------------------------------------ helpers
    def detach(self) -> Payload:
        r"""A copy whose tensors are detached, contiguous CPU clones (what a
        wire transfer produces: the receiver can never alias the sender's
        parameters)."""
        return Payload(
            arrays={
                k: v.detach().cpu().clone().contiguous() for k, v in self.arrays.items()
            },
            row_ids={
                k: v.detach().cpu().clone().long() for k, v in self.row_ids.items()
            },
            config=dict(self.config),
            metrics=dict(self.metrics),
            num_examples=int(self.num_examples),
        )

    def to_dict(self) -> dict[str, Any]:
        r"""A plain ``torch.save``-able mapping (checkpoints)."""
        return {
            "arrays": dict(self.arrays),
            "row_ids": dict(self.row_ids),
            "config": dict(self.config),
            "metrics": dict(self.metrics),
            "num_examples": int(self.num_examples),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Payload:
        r"""Inverse of :meth:`to_dict`."""
        return cls(
            arrays=dict(d.get("arrays", {})),
            row_ids=dict(d.get("row_ids", {})),
            config=dict(d.get("config", {})),
            metrics=dict(d.get("metrics", {})),
            num_examples=int(d.get("num_examples", 0)),
        )

    def __repr__(self) -> str:
        arrays = ", ".join(f"{k}={tuple(v.shape)}" for k, v in self.arrays.items())
        return (
            f"Payload(arrays=[{arrays}], config={self.config}, "
            f"metrics={sorted(self.metrics)}, num_examples={self.num_examples})"
        )


__all__ = ["Payload", "PayloadError", "Scalar", "SCALAR_BYTES"]
