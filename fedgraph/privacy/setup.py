r"""Switches the privacy settings on for any FedE-family run: wraps the
strategy and clients built by :func:`~fedgraph.federated.kge.setup.build_kge_federation`.

Client side, innermost first: the client → DP on its uploads → keyed-hash
alignment or secure aggregation. Server side, outermost first: the upload
recorder → keyed-hash alignment or secure aggregation → the strategy.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from fedgraph.privacy.accountant import calibrate_noise
from fedgraph.privacy.alignment import (
    KeyedHashClient,
    KeyedHashStrategy,
    write_secret,
)
from fedgraph.privacy.dp import DPUploadClient
from fedgraph.privacy.record import KEEP, UploadRecorder
from fedgraph.privacy.secagg import SecAggClient, SecAggStrategy
from fedgraph.privacy.wrap import find_wrapper

SECRET_FILE = "alignment-secret.key"
UPLOADS_DIR = "uploads"


@dataclass
class PrivacySettings:
    r"""Privacy settings of a federated KGE run (all off by default).

    Args:
        record_uploads (str): ``""`` (off), ``"last"`` or ``"all"``: record
            what the server receives, under ``RUN_DIR/uploads``.
        dp_epsilon (float): target :math:`\varepsilon` of each client's
            uploads over the whole run (``0``: no DP); the noise multiplier
            is calibrated for ``rounds`` uploads.
        dp_delta (float): :math:`\delta`. (default: 1e-5)
        dp_clip (float): :math:`C`, the L2 bound of a round's update.
        secagg (bool): secure aggregation of entity sums and counts.
        secagg_neighbours (int): SecAgg+ neighbours (``0``: all: SecAgg).
        secagg_clip_range (float): :math:`B` of the quantisation.
        secagg_levels (int): quantisation levels.
        secagg_threshold (int): SecAgg+ dropout recovery with this Shamir
            threshold (``0``: none; at least 2), in a Flower deployment
            (:mod:`fedgraph.privacy.secagg_plus`; the in-process simulation
            loses no client and runs without it).
        private_alignment (bool): keyed-hash entity tokens.
    """

    record_uploads: str = ""
    dp_epsilon: float = 0.0
    dp_delta: float = 1e-5
    dp_clip: float = 1.0
    secagg: bool = False
    secagg_neighbours: int = 0
    secagg_clip_range: float = 8.0
    secagg_levels: int = 2**24
    secagg_threshold: int = 0
    private_alignment: bool = False

    def __post_init__(self) -> None:
        if self.record_uploads not in ("", *KEEP):
            raise ValueError(
                f"`record_uploads` must be one of {('', *KEEP)} (got {self.record_uploads!r})"
            )
        if self.dp_epsilon < 0:
            raise ValueError(
                f"`dp_epsilon` must be non-negative (got {self.dp_epsilon})"
            )
        if not 0 < self.dp_delta < 1:
            raise ValueError(f"`dp_delta` must lie in (0, 1) (got {self.dp_delta})")
        if self.dp_clip <= 0:
            raise ValueError(f"`dp_clip` must be positive (got {self.dp_clip})")
        if self.secagg and self.private_alignment:
            raise ValueError(
                "secure aggregation already keeps entity ids from the server; "
                "switch on either it or private alignment"
            )
        if (
            self.secagg_neighbours < 0
            or self.secagg_levels < 2
            or self.secagg_clip_range <= 0
        ):
            raise ValueError("secagg settings must be positive")
        if self.secagg_threshold < 0 or self.secagg_threshold == 1:
            raise ValueError(
                "the secagg threshold must be 0 (no dropout recovery) or at least "
                f"2 (got {self.secagg_threshold})"
            )
        if self.secagg_threshold and not self.secagg:
            raise ValueError("a secagg threshold needs secure aggregation switched on")

    @property
    def active(self) -> bool:
        return bool(self.record_uploads or self.defended)

    @property
    def defended(self) -> bool:
        r"""Whether a defence is on (DP, SecAgg or private alignment);
        recording uploads alone changes nothing that crosses the wire."""
        return bool(self.dp_epsilon or self.secagg or self.private_alignment)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def alignment_secret(run_dir: str | os.PathLike[str], create: bool = True) -> bytes:
    r"""The federation secret of a run (``RUN_DIR/alignment-secret.key``, the
    clients' file; created on first use). The server-side code never reads it."""
    path = Path(run_dir) / SECRET_FILE
    if path.is_file():
        return bytes.fromhex(path.read_text().strip())
    if not create:
        raise FileNotFoundError(f"{path} not found")
    secret = secrets.token_bytes(32)
    write_secret(path, secret)  # mode 0600 from the start
    return secret


def apply_privacy(
    strategy: Any,
    clients: dict[int, Any],
    settings: PrivacySettings,
    *,
    rounds: int,
    run_dir: str | os.PathLike[str] | None = None,
    entity_names: list[str] | None = None,
    seed: int = 0,
) -> tuple[Any, dict[int, Any]]:
    r"""The strategy and clients with ``settings``' defences (and recorder)."""
    if not settings.active:
        return strategy, clients
    if (settings.record_uploads or settings.private_alignment) and run_dir is None:
        raise ValueError("recording uploads and private alignment need a run folder")
    out = dict(clients)
    if settings.dp_epsilon > 0:
        sigma = calibrate_noise(settings.dp_epsilon, settings.dp_delta, rounds)
        out = {
            c: DPUploadClient(cl, settings.dp_clip, sigma, seed=seed)
            for c, cl in out.items()
        }
    if settings.private_alignment:
        secret = alignment_secret(run_dir)  # type: ignore[arg-type]
        out = {c: KeyedHashClient(cl, secret, entity_names) for c, cl in out.items()}
        strategy = KeyedHashStrategy(strategy)
    if settings.secagg:
        k = settings.secagg_neighbours or None
        strategy = SecAggStrategy(
            strategy, k, settings.secagg_clip_range, settings.secagg_levels
        )
        rows = strategy.base.num_entities  # the shared index (FedR: relations)
        out = {
            c: SecAggClient(
                cl,
                rows,
                settings.secagg_clip_range,
                settings.secagg_levels,
                key=strategy.key,
            )
            for c, cl in out.items()
        }
    if settings.record_uploads:
        strategy = UploadRecorder(
            strategy,
            Path(run_dir) / UPLOADS_DIR,
            settings.record_uploads,  # type: ignore[arg-type]
        )
    return strategy, out


def privacy_report(
    clients: dict[int, Any], settings: PrivacySettings
) -> dict[str, Any]:
    r"""The ``privacy`` section of ``results.json``: the settings and, with
    DP, each client's :math:`(\varepsilon, \delta)` after its uploads."""
    report: dict[str, Any] = {"settings": settings.to_dict()}
    if settings.dp_epsilon > 0:
        report["dp"] = {
            str(c): find_wrapper(cl, DPUploadClient).privacy_spent(settings.dp_delta)
            for c, cl in sorted(clients.items())
        }
    return report


def add_privacy_report(results: Path, report: dict[str, Any]) -> None:
    r"""Adds ``report`` to ``results.json`` as its ``privacy`` key (atomically)."""
    from fedgraph.data.io import atomic_write_json

    doc = json.loads(Path(results).read_text())
    doc["privacy"] = report
    atomic_write_json(results, doc, default=float)


__all__ = [
    "PrivacySettings",
    "apply_privacy",
    "privacy_report",
    "add_privacy_report",
    "alignment_secret",
]
