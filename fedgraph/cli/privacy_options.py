r"""The privacy options of ``fedgraph train`` (no torch import: ``--help``
answers before the runtime loads). See docs/privacy.md."""

from __future__ import annotations

import argparse
from typing import Any

from fedgraph.cli.choices import RECORD_KEEP
from fedgraph.cli.options import between, non_negative, real


def add_privacy_arguments(p: argparse.ArgumentParser) -> None:
    r"""The privacy options of ``fedgraph train`` (read by
    :func:`privacy_settings`)."""
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


def _unused_options(args: argparse.Namespace, base: Any) -> list[str]:
    r"""Options given a value that only another (absent) option would use
    (``base``: the default settings)."""
    unused = []
    if not args.dp_epsilon:
        unused += [
            f"`--dp-{k}` without `--dp-epsilon`"
            for k in ("delta", "clip")
            if getattr(args, f"dp_{k}") != getattr(base, f"dp_{k}")
        ]
    if not args.secagg and args.secagg_neighbours != base.secagg_neighbours:
        unused.append("`--secagg-neighbours` without `--secagg`")
    return unused


def privacy_settings(args: argparse.Namespace) -> Any:
    r"""The :class:`~fedgraph.privacy.setup.PrivacySettings` of ``fedgraph
    train``'s options.

    Raises:
        ValueError: for a value out of range, or an option that would go
            unused (``--dp-clip`` without ``--dp-epsilon``).
    """
    from fedgraph.privacy.setup import PrivacySettings

    unused = _unused_options(args, PrivacySettings())
    if unused:
        raise ValueError(f"privacy options: {'; '.join(unused)} has no effect")
    try:
        return PrivacySettings(
            record_uploads=args.record_uploads,
            dp_epsilon=args.dp_epsilon,
            dp_delta=args.dp_delta,
            dp_clip=args.dp_clip,
            secagg=args.secagg,
            secagg_neighbours=args.secagg_neighbours,
            private_alignment=args.private_alignment,
        )
    except ValueError as exc:
        raise ValueError(f"privacy options: {exc}") from None


__all__ = ["add_privacy_arguments", "privacy_settings"]
