r"""The report's plots, drawn with matplotlib's non-interactive Agg backend.

Every figure takes plain series (so the results pages and ``fedgraph
report`` draw the same figures). :func:`line_figure` and :func:`bars_figure`
return the :class:`~matplotlib.figure.Figure` (a test reads its data back);
:func:`line_plot` and :func:`grouped_bars` draw it into one file: PNG for a
user's report, SVG for the documentation. SVG output is byte-for-byte
reproducible (fixed hash salt, no date), so a test can regenerate the pages'
figures and compare. With ``legend_outside=True`` the legend sits below the
axes (constrained layout), where it cannot cover a line or a bar.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

Series = Mapping[str, tuple[Sequence[float], Sequence[float]]]


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "fedgraph"
    plt.rcParams["svg.fonttype"] = "none"  # text as text: smaller, stable
    return plt


def _figure(figsize: tuple[float, float], legend_outside: bool) -> tuple[Any, Any]:
    fig = _plt().figure(
        figsize=figsize, layout="constrained" if legend_outside else None
    )
    return fig, fig.subplots()


def _legend(fig: Any, ax: Any, legend_outside: bool, entries: int) -> None:
    if legend_outside:
        fig.legend(
            loc="outside lower center", ncols=min(3, max(1, entries)), fontsize=8
        )
    else:
        ax.legend(fontsize=8)


def save_figure(fig: Any, path: str | os.PathLike[str]) -> Path:
    r"""Writes ``fig`` to ``path`` (format from the suffix, atomically) and
    closes it; a figure without a layout engine is laid out tightly first."""
    from fedgraph.data.io import atomic_write

    path = Path(path)
    fmt = path.suffix.lstrip(".") or "png"
    meta = {"Date": None} if fmt == "svg" else {"Software": None}
    if fig.get_layout_engine() is None:
        fig.tight_layout()
    atomic_write(
        path,
        lambda tmp: fig.savefig(tmp, format=fmt, dpi=110, metadata=meta),
    )
    _plt().close(fig)
    return path


def line_figure(
    series: Series,
    *,
    xlabel: str,
    ylabel: str,
    title: str = "",
    xlog: bool = False,
    hline: tuple[float, str] | None = None,
    legend_outside: bool = False,
) -> Any:
    r"""One line per entry of ``series`` (label → ``(x, y)``), markers at the
    points; ``hline = (y, label)`` adds a dashed reference line. Returns the
    figure (not yet saved: :func:`save_figure`)."""
    fig, ax = _figure((6.4, 4.2 if legend_outside else 3.8), legend_outside)
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
    _legend(fig, ax, legend_outside, len(series) + (hline is not None))
    return fig


def line_plot(series: Series, path: str | os.PathLike[str], **kwargs: Any) -> Path:
    r""":func:`line_figure` (same keyword arguments) written to ``path``."""
    return save_figure(line_figure(series, **kwargs), path)


def bars_figure(
    groups: Sequence[str],
    bars: Mapping[str, Sequence[float]],
    *,
    ylabel: str,
    title: str = "",
    errors: Mapping[str, Sequence[float]] | None = None,
    legend_outside: bool = False,
) -> Any:
    r"""Grouped bars: one group per entry of ``groups`` (e.g. clients), one
    bar per entry of ``bars`` (label → one value per group). Returns the
    figure (not yet saved: :func:`save_figure`)."""
    n = max(1, len(bars))
    width = 0.8 / n
    height = 4.2 if legend_outside else 3.8
    fig, ax = _figure((max(4.8, 0.9 * len(groups) * n / 2 + 3), height), legend_outside)
    for i, (label, values) in enumerate(bars.items()):
        xs = [g + (i - (n - 1) / 2) * width for g in range(len(groups))]
        err = None if errors is None else errors.get(label)
        ax.bar(xs, list(values), width=width, label=label, yerr=err, capsize=2)
    ax.set_xticks(range(len(groups)), list(groups))
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    _legend(fig, ax, legend_outside, len(bars))
    return fig


def grouped_bars(
    groups: Sequence[str],
    bars: Mapping[str, Sequence[float]],
    path: str | os.PathLike[str],
    **kwargs: Any,
) -> Path:
    r""":func:`bars_figure` (same keyword arguments) written to ``path``."""
    return save_figure(bars_figure(groups, bars, **kwargs), path)
