r"""Where the training samples (each epoch's batch order and the negatives)
are drawn: on the host, the default, or on the model's device.

``"host"``: batches and negatives are drawn on the CPU from the CPU
generator, then moved to the model's device. The samples do not depend on
the device, so a run on a GPU sees exactly the samples of the CPU run, and
a checkpoint written on one device resumes on another.

``"device"``: the training triples (and their loss weights) are copied to the
model's device once, and the batch order and the negatives are drawn there
from a :class:`torch.Generator` on that device, seeded
:math:`(s + \mathtt{0x9E3779B9}) \bmod 2^{64}` from the seed :math:`s` of the
host generator (:func:`device_generator`; the offset changes the low 32 bits,
the only ones a CPU generator reads, so on a CPU the two streams differ); a
training step then reads nothing back to the host. A CUDA generator draws another stream than a CPU one, so such a
run is reproducible, and resumable, on the same device type; on a CPU it
draws from its own CPU generator, separate from the host one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import torch
from torch import Tensor

#: where the samples are drawn (``sample_on``; ``fedgraph train --sample-on``)
SAMPLE_ON = ("host", "device")

#: added to the host generator's seed to seed the device generator (below
#: 2**32: a CPU generator reads only the low 32 bits of its seed)
DEVICE_SEED_OFFSET = 0x9E3779B9

# how the setting is spelled where a user sets it, for the resume errors
_WHERE = "(`fedgraph train --sample-on`, Flower run-config key `sample-on`)"


def check_sample_on(value: Any, what: str = "`sample_on`") -> str:
    r"""``value`` if it is one of :data:`SAMPLE_ON`, else a one-line
    :class:`ValueError` starting with ``what``."""
    if value not in SAMPLE_ON:
        raise ValueError(f"{what} must be one of {list(SAMPLE_ON)} (got {value!r})")
    return str(value)


def device_generator(device: torch.device | str, seed: int) -> torch.Generator:
    r"""A generator on ``device`` seeded :math:`(\text{seed} +
    \mathtt{0x9E3779B9}) \bmod 2^{64}` (``seed``: the host generator's seed;
    :data:`DEVICE_SEED_OFFSET`)."""
    gen = torch.Generator(device=torch.device(device))
    return gen.manual_seed((int(seed) + DEVICE_SEED_OFFSET) % 2**64)


def generator_state(gen: torch.Generator) -> dict[str, Any]:
    r"""``gen``'s state (a CPU byte tensor, also for a CUDA generator) and its
    device type, for a checkpoint."""
    return {"device": gen.device.type, "state": gen.get_state()}


def load_generator_state(
    gen: torch.Generator, state: Mapping[str, Any] | None, owner: str
) -> None:
    r"""Restores :func:`generator_state` into ``gen``.

    Raises:
        ValueError: (one line starting with ``owner``) when ``state`` is
            missing (a checkpoint drawn on the host) or was written by a
            generator on another device type.
    """
    if state is None:
        raise ValueError(
            f"{owner}: the checkpoint drew its samples on the host "
            f"(sample_on='host'); resume it with sample_on='host' {_WHERE}"
        )
    if state["device"] != gen.device.type:
        raise ValueError(
            f"{owner}: the checkpoint drew its samples on a {state['device']} "
            f"generator, which a {gen.device.type} one cannot continue; resume on "
            f"{state['device']}, or train with sample_on='host' (the same "
            "samples on every device)"
        )
    gen.set_state(state["state"])


class DeviceCopy:
    r"""The copy on ``device`` of a host tensor, made once and made again
    only when another tensor is given (e.g. after unlearning replaced a
    client's training triples)."""

    def __init__(self, device: torch.device | str) -> None:
        self.device = torch.device(device)
        self._source: Tensor | None = None
        self._copy: Tensor | None = None

    def __call__(self, tensor: Tensor | None) -> Tensor | None:
        if tensor is None:
            return None
        if tensor is not self._source:
            self._source, self._copy = tensor, tensor.to(self.device)
        return self._copy


class SampleSource:
    r"""Where a trainer or client draws its samples (``sample_on``): the host
    triples, weights and CPU generator it is given (``"host"``), or their
    copies on ``device`` and a generator there (``"device"``,
    :func:`device_generator` seeded from ``host_seed``).

    Args:
        sample_on (str): ``"host"`` or ``"device"``.
        device (torch.device or str): the model's device.
        host_seed (int): the seed of the owner's host generator.
    """

    def __init__(
        self, sample_on: str, device: torch.device | str, host_seed: int
    ) -> None:
        self.sample_on = check_sample_on(sample_on)
        #: the device generator (:obj:`None` with ``"host"``)
        self.generator = (
            device_generator(device, host_seed) if self.sample_on == "device" else None
        )
        self._triples, self._weights = DeviceCopy(device), DeviceCopy(device)

    def __call__(
        self, triples: Tensor, weights: Tensor | None, host: torch.Generator
    ) -> tuple[Tensor, Tensor | None, torch.Generator]:
        r"""``(triples, weights, generator)`` to draw from: the given host
        ones, or their copies on the device (made once, again only when
        another tensor is given) and the device generator."""
        if self.generator is None:
            return triples, weights, host
        on_device = self._triples(triples)
        assert on_device is not None
        return on_device, self._weights(weights), self.generator

    def state_dict(self) -> dict[str, Any]:
        r"""``{"sample_generator": …}`` with ``"device"``, else ``{}`` (a host
        run's checkpoint is unchanged)."""
        if self.generator is None:
            return {}
        return {"sample_generator": generator_state(self.generator)}

    def load_state_dict(self, state: Mapping[str, Any], owner: str) -> None:
        r"""Restores :meth:`state_dict` from an owner's checkpoint ``state``.

        Raises:
            ValueError: (one line starting with ``owner``) if the checkpoint
                drew its samples elsewhere (:func:`load_generator_state`).
        """
        if self.generator is not None:
            load_generator_state(self.generator, state.get("sample_generator"), owner)
        elif "sample_generator" in state:
            raise ValueError(
                f"{owner}: the checkpoint drew its samples on the device "
                f"(sample_on='device'); resume it with sample_on='device' {_WHERE}"
            )


def epoch_batches(
    triples: Tensor,
    weights: Tensor | None,
    *,
    batch_size: int,
    generator: torch.Generator,
    device: torch.device,
    shuffle: bool = True,
    sample_on: str = "host",
) -> Iterator[tuple[Tensor, Tensor, Tensor | None]]:
    r"""One epoch's batches: ``(drawn, batch, weight)`` per step, where
    ``batch`` (``[b, 3]``) and ``weight`` (``[b]`` or :obj:`None`) are on
    ``device`` and ``drawn`` is the batch where the negatives are drawn (the
    CPU batch on the host; ``batch`` itself on the device).

    ``"host"``: ``triples``, ``weights`` and ``generator`` on the CPU (the
    order is a :func:`torch.randperm` of the CPU generator). ``"device"``:
    all three on ``device``; the order is drawn there and nothing is read
    back to the host.
    """
    n = triples.size(0)
    if sample_on == "host":
        perm = torch.randperm(n, generator=generator) if shuffle else torch.arange(n)
    else:
        where = generator.device
        if triples.device.type != device.type or where.type != device.type:
            raise ValueError(
                "sample_on='device' needs the triples and the generator on the "
                f"model's device {device} (got {triples.device} and {where})"
            )
        perm = (
            torch.randperm(n, generator=generator, device=where)
            if shuffle
            else torch.arange(n, device=where)
        )
    for start in range(0, n, batch_size):
        idx = perm[start : start + batch_size]
        drawn = triples[idx]
        w = None if weights is None else weights[idx].to(device)
        yield drawn, drawn.to(device), w


__all__ = [
    "SAMPLE_ON",
    "DEVICE_SEED_OFFSET",
    "check_sample_on",
    "device_generator",
    "generator_state",
    "load_generator_state",
    "DeviceCopy",
    "SampleSource",
    "epoch_batches",
]
