r"""Client-level differential privacy on uploaded rows (clipping + Gaussian
noise), as in DP-FedAvg (McMahan et al., ICLR 2018) applied to each upload.

A client's update in a round is the difference between the rows it uploads
and the rows it received (for every keyed array of the reply: entity rows,
FedR's relation rows). :class:`DPUploadClient` clips the whole update to L2
norm :math:`C` and adds :math:`\mathcal{N}(0, \sigma^2 C^2)` to every
coordinate before the upload:

.. math::
    \tilde{\mathbf{E}}^c = \mathbf{E}_t^c + \Delta^c \min\left(1,
    \frac{C}{\lVert \Delta^c \rVert_F}\right) + \mathcal{N}(0, \sigma^2 C^2 I)

so each upload is a Gaussian mechanism of sensitivity :math:`C` in the
client's whole dataset (client-level, add/remove-one-client adjacency), and
:func:`~fedgraph.privacy.accountant.gaussian_epsilon` gives its
:math:`(\varepsilon, \delta)` after the rounds it took part in. What DP does
*not* hide: which rows are uploaded (the entity ids: switch on private
alignment or secure aggregation for that), the metrics and ``num_examples``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from fedgraph.federated.payload import Payload, PayloadError
from fedgraph.privacy.accountant import gaussian_epsilon, rdp_epsilon
from fedgraph.privacy.wrap import ClientWrapper


def _positions(reference: Tensor, ids: Tensor, what: str) -> Tensor:
    order = torch.argsort(reference)
    srt = reference[order]
    pos = torch.searchsorted(srt, ids).clamp_max(max(srt.numel() - 1, 0))
    if srt.numel() == 0 or not torch.equal(srt[pos], ids):
        raise PayloadError(f"{what}: uploaded rows the client did not receive")
    return order[pos]


def clip_and_noise(
    update: Mapping[str, Tensor],
    clip: float,
    noise_multiplier: float,
    generator: torch.Generator,
) -> tuple[dict[str, Tensor], float]:
    r"""The update jointly clipped to L2 norm ``clip`` plus
    :math:`\mathcal{N}(0, (\sigma C)^2)` noise; also returns the update's
    norm before clipping."""
    if clip <= 0:
        raise ValueError(f"`clip` must be positive (got {clip})")
    norm = float(
        torch.sqrt(
            sum(
                (v.double().pow(2).sum() for v in update.values()),
                torch.zeros((), dtype=torch.float64),
            )
        )
    )
    scale = min(1.0, clip / norm) if norm > 0 else 1.0
    out = {}
    for k in sorted(update):
        v = update[k]
        noise = torch.randn(v.shape, generator=generator, dtype=torch.float64)
        out[k] = (v.double() * scale + noise * (noise_multiplier * clip)).to(v.dtype)
    return out, norm


class DPUploadClient(ClientWrapper):
    r"""Clips and noises the wrapped client's uploaded rows (see the module).

    Args:
        inner (Client): the client.
        clip (float): :math:`C`, the L2 bound of one round's update.
        noise_multiplier (float): :math:`\sigma` (calibrate it with
            :func:`~fedgraph.privacy.accountant.calibrate_noise`).
        seed (int, optional): seeds the noise with the client's id.
            (default: :obj:`0`)
    """

    def __init__(
        self, inner: Any, clip: float, noise_multiplier: float, seed: int = 0
    ) -> None:
        super().__init__(inner)
        if clip <= 0 or noise_multiplier <= 0:
            raise ValueError(
                f"`clip` and `noise_multiplier` must be positive (got {clip} and "
                f"{noise_multiplier})"
            )
        self.clip, self.noise_multiplier = float(clip), float(noise_multiplier)
        cid = int(getattr(inner, "client_id", 0))
        self.noise_generator = torch.Generator().manual_seed(
            int(seed) * 104_729 + cid + 17
        )
        self.uploads = 0

    def fit(self, payload: Payload) -> Payload:
        reply = self.inner.fit(payload)
        keys = [k for k in reply.arrays if k in reply.row_ids]
        update, reference = {}, {}
        for k in keys:
            if k not in payload.arrays or k not in payload.row_ids:
                raise PayloadError(
                    f"DP upload: the client uploads `{k}` rows it was not sent"
                )
            pos = _positions(payload.row_ids[k].long(), reply.row_ids[k].long(), k)
            reference[k] = payload.arrays[k][pos].to(reply.arrays[k].dtype)
            update[k] = reply.arrays[k].detach().cpu() - reference[k]
        noised, _ = clip_and_noise(
            update, self.clip, self.noise_multiplier, self.noise_generator
        )
        arrays = dict(reply.arrays)
        for k in keys:
            arrays[k] = reference[k] + noised[k]
        self.uploads += 1
        return Payload(
            arrays=arrays,
            row_ids=dict(reply.row_ids),
            config=dict(reply.config),
            metrics=dict(reply.metrics),
            num_examples=reply.num_examples,
        )

    def privacy_spent(self, delta: float) -> dict[str, float]:
        r"""This client's :math:`(\varepsilon, \delta)` after its uploads so
        far (exact Gaussian composition; Opacus' RDP bound beside it)."""
        out = {
            "uploads": self.uploads,
            "noise_multiplier": self.noise_multiplier,
            "clip": self.clip,
            "epsilon": gaussian_epsilon(self.noise_multiplier, self.uploads, delta),
            "delta": delta,
        }
        rdp = rdp_epsilon(self.noise_multiplier, self.uploads, delta)
        if rdp is not None:
            out["epsilon_rdp"] = rdp
        return out

    def state_dict(self) -> dict[str, Any]:
        return {
            **self.inner.state_dict(),
            "dp_upload": {
                "generator": self.noise_generator.get_state(),
                "uploads": self.uploads,
            },
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.inner.load_state_dict(state)
        if "dp_upload" in state:
            self.noise_generator.set_state(state["dp_upload"]["generator"])
            # privacy spent never rolls back (restoring the best round's
            # state for the test pass keeps the uploads made since)
            self.uploads = max(self.uploads, int(state["dp_upload"]["uploads"]))


__all__ = ["DPUploadClient", "clip_and_noise"]
