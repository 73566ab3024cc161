r"""The report's plots, drawn with matplotlib's non-interactive Agg backend.

Every function takes plain series (so the results pages and ``fedgraph
report`` draw the same figures) and writes one file: PNG for a user's report,
SVG for the documentation. SVG output is byte-for-byte reproducible (fixed
hash salt, no date), so a test can regenerate the pages' figures and compare.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

Series = Mapping[str, tuple[Sequence[float], Sequence[float]]]


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "fedgraph"
    plt.rcParams["svg.fonttype"] = "none"  # text as text: smaller, stable
    return plt


def _save(fig, path: str | os.PathLike[str]) -> Path:
    from fedgraph.data.io import _atomic_write

    path = Path(path)
    fmt = path.suffix.lstrip(".") or "png"
    meta = {"Date": None} if fmt == "svg" else {"Software": None}
    fig.tight_layout()
    _atomic_write(
        path,
        lambda tmp: fig.savefig(tmp, format=fmt, dpi=110, metadata=meta),
    )
    _plt().close(fig)
    return path


def line_plot(
    series: Series,
    path: str | os.PathLike[str],
    *,
    xlabel: str,
    ylabel: str,
    title: str = "",
    xlog: bool = False,
    hline: tuple[float, str] | None = None,
) -> Path:
    r"""One line per entry of ``series`` (label → ``(x, y)``), markers at the
    points; ``hline = (y, label)`` adds a dashed reference line."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for label, (x, y) in series.items():
        ax.plot(list(x), list(y), marker="o", markersize=3, linewidth=1.4, label=label)
    if hline is not None:
        ax.axhline(hline[0], color="grey", linestyle="--", linewidth=1, label=hline[1])
    if xlog:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)


def grouped_bars(
    groups: Sequence[str],
    bars: Mapping[str, Sequence[float]],
    path: str | os.PathLike[str],
    *,
    ylabel: str,
    title: str = "",
    errors: Mapping[str, Sequence[float]] | None = None,
) -> Path:
    r"""Grouped bars: one group per entry of ``groups`` (e.g. clients), one
    bar per entry of ``bars`` (label → one value per group)."""
    plt = _plt()
    n = max(1, len(bars))
    width = 0.8 / n
    fig, ax = plt.subplots(figsize=(max(4.8, 0.9 * len(groups) * n / 2 + 3), 3.8))
    for i, (label, values) in enumerate(bars.items()):
        xs = [g + (i - (n - 1) / 2) * width for g in range(len(groups))]
        err = None if errors is None else errors.get(label)
        ax.bar(xs, list(values), width=width, label=label, yerr=err, capsize=2)
    ax.set_xticks(range(len(groups)), list(groups))
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)
