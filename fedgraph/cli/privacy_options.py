r"""The privacy options of ``fedgraph train`` (no torch import: ``--help``
answers before the runtime loads). See docs/privacy.md."""

from __future__ import annotations

import argparse

from fedgraph.cli.choices import RECORD_KEEP
from fedgraph.cli.options import between, non_negative, real


def add_privacy_arguments(p: argparse.ArgumentParser) -> None:
    r"""The privacy options of ``fedgraph train`` (read by
    :func:`fedgraph.privacy.setup.settings_from_args`)."""
    g = p.add_argument_group("privacy (see docs/privacy.md)")
    g.add_argument(
        "--record-uploads",
        choices=RECORD_KEEP,
        default="",
        help="record what the server receives under OUT/uploads for `fedgraph "
        "audit` (last: the latest round only)",
    )
    g.add_argument(
        "--dp-epsilon",
        type=real(0.0, strict=False),
        default=0.0,
        help="client-level DP on uploads: each client's epsilon over --rounds (0: off)",
    )
    g.add_argument(
        "--dp-delta", type=between(0.0, 1.0), default=1e-5, help="DP delta, in (0, 1)"
    )
    g.add_argument(
        "--dp-clip", type=real(0.0), default=1.0, help="L2 bound of a round's update"
    )
    g.add_argument(
        "--secagg",
        action="store_true",
        help="secure aggregation of entity sums and counts (pairwise masks)",
    )
    g.add_argument(
        "--secagg-neighbours",
        type=non_negative,
        default=0,
        help="SecAgg+ ring neighbours per client (0: all)",
    )
    g.add_argument(
        "--private-alignment",
        action="store_true",
        help="clients name entities by keyed-hash tokens the server cannot invert",
    )


__all__ = ["add_privacy_arguments"]
