r"""Compare a user's own runs: ``fedgraph report RUN_DIR... [--out DIR]``.

A run is a ``fedgraph train`` output folder (``results.json`` once finished,
``progress.json`` while it trains) or a results JSON itself (the
:func:`fedgraph.eval.write_results` format). :func:`load_run` reads one into
a :class:`RunSummary`; :func:`runs_table` is the Markdown comparison (best
and final validation MRR, test metrics, rounds, communication, time);
:func:`write_report` writes that table, the per-client table and the plots.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fedgraph.data.io import atomic_write_text
from fedgraph.runtime.run_record import is_per_graph


@dataclass
class RunSummary:
    r"""What a report shows of one run.

    Args:
        label (str): the run's name in tables and legends (its folder name).
        path (Path): the file it was read from.
        settings (dict): the run's recorded settings.
        curve (list[tuple[int, float]]): ``(round, weighted validation MRR)``
            at every evaluation (baselines: epochs, clients' MRRs weighted
            by their validation queries, a client that stopped early counted
            at its last value).
        comm_curve (list[tuple[int, float]]): ``(parameters sent up and down
            so far, validation MRR)`` at every evaluation (federated runs).
        global_curve (list[tuple[int, float]]): FedLU's global model's
            validation MRR per evaluated round (empty for other methods).
        test (dict): weighted test metrics (empty while the run trains).
        clients (list[dict]): per-client test metrics.
        rounds (int): rounds (baselines: the longest client's epochs) run.
        best_round (int or None): the round the test metrics come from.
        comm (dict): communication totals.
        seconds_per_round (float or None): mean wall seconds per round.
        local_epochs (int or None): local epochs per round (baselines: 1, an
            epoch being the unit of their curve; ``None`` when a federated
            run's settings do not record it).
        bytes_per_round (dict[int, int]): bytes sent up and down in each
            round of the run's ledger (round 0: the setup); empty when none
            was recorded.
    """

    label: str
    path: Path
    settings: dict[str, Any]
    curve: list[tuple[int, float]]
    comm_curve: list[tuple[int, float]] = field(default_factory=list)
    global_curve: list[tuple[int, float]] = field(default_factory=list)
    test: dict[str, float] = field(default_factory=dict)
    clients: list[dict[str, Any]] = field(default_factory=list)
    rounds: int = 0
    best_round: int | None = None
    comm: dict[str, int] = field(default_factory=dict)
    seconds_per_round: float | None = None
    local_epochs: int | None = 1
    bytes_per_round: dict[int, int] = field(default_factory=dict)

    @property
    def algorithm(self) -> str:
        s = self.settings
        return str(s.get("algorithm") or s.get("setting") or "?")

    @property
    def finished(self) -> bool:
        return bool(self.test)


def _baseline_curve(history: list[list[dict[str, Any]]]) -> list[tuple[int, float]]:
    per_client = [
        {e["epoch"]: e["valid"] for e in h if "valid" in e} for h in history if h
    ]
    epochs = sorted({ep for c in per_client for ep in c})
    curve = []
    for ep in epochs:
        num = den = 0.0
        for c in per_client:
            done = [e for e in c if e <= ep]
            if not done:
                continue
            v = c[max(done)]
            w = float(v.get("n_queries", 1.0))
            num += w * v["mrr"]
            den += w
        if den:
            curve.append((int(ep), num / den))
    return curve


def _federated_curves(
    history: list[dict[str, Any]], comm_per_round: dict[str, dict[str, int]]
) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    curve = [
        (int(h["round"]), float(h["valid"]["mrr"])) for h in history if "valid" in h
    ]
    comm_curve: list[tuple[int, float]] = []
    if comm_per_round:
        per = {
            int(r): c.get("params_up", 0) + c.get("params_down", 0)
            for r, c in comm_per_round.items()
        }
        for rnd, mrr in curve:
            comm_curve.append((sum(v for r, v in per.items() if r <= rnd), mrr))
    return curve, comm_curve


def _read_run_file(path: Path) -> tuple[Path, str, dict[str, Any]]:
    r"""The results (else progress) file of the run at ``path`` (a folder or
    a file), the run's label and the file's content."""
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    if path.is_dir():
        for name in ("results.json", "progress.json"):
            if (path / name).is_file():
                file = path / name
                break
        else:
            raise FileNotFoundError(
                f"{path} holds neither results.json nor progress.json: is it a "
                "`fedgraph train` output folder?"
            )
        label = path.resolve().name
    else:
        file, label = path, path.stem
    try:
        doc = json.loads(file.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{file}: not valid JSON ({exc.msg}, line {exc.lineno})"
        ) from None
    if not isinstance(doc, dict) or "history" not in doc:
        raise ValueError(
            f"{file}: not a fedgraph results or progress file (no 'history')"
        )
    return file, label, doc


def load_run(path: str | os.PathLike[str]) -> RunSummary:
    r"""Reads a run folder (or a results JSON) into a :class:`RunSummary`.

    Raises:
        FileNotFoundError: if ``path`` does not exist or holds neither
            ``results.json`` nor ``progress.json``.
        ValueError: if the file there is not a fedgraph results or progress
            file.
    """
    file, label, doc = _read_run_file(Path(path))
    history = doc["history"]
    settings = dict(doc.get("settings") or {})
    baseline = is_per_graph(history)
    glob: list[tuple[int, float]] = []
    ledger = doc.get("comm_per_round") or {}
    if baseline:
        curve, comm_curve = _baseline_curve(history), []
    else:
        curve, comm_curve = _federated_curves(history, ledger)
        glob = [
            (int(h["round"]), float(h["valid"]["global_mrr"]))
            for h in history
            if "global_mrr" in h.get("valid", {})
        ]
    axes = {
        "local_epochs": 1 if baseline else _local_epochs(settings),
        "bytes_per_round": {
            int(r): int(c.get("bytes_up", 0)) + int(c.get("bytes_down", 0))
            for r, c in ledger.items()
        },
    }
    run = RunSummary(label, file, settings, curve, comm_curve, glob, **axes)
    if "weighted" not in doc:  # progress.json of a run still training
        last = max((r for r, _ in curve), default=0)
        run.rounds = (
            max((int(h["round"]) for h in history), default=last)
            if not baseline
            else last
        )
        return run
    run.test = dict(doc["weighted"])
    run.clients = list(doc.get("clients", []))
    run.rounds = int(doc.get("rounds", 0))
    run.best_round = doc.get("best_round")
    run.comm = dict(doc.get("comm") or {})
    run.seconds_per_round = doc.get("seconds_per_round")
    return run


def _local_epochs(settings: dict[str, Any]) -> int | None:
    r"""The local epochs per round a federated run's settings record
    (``None`` when they record no positive integer)."""
    value = settings.get("local_epochs")
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return None
    return value


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.2f}"


def _count(n: float | None, unit: str = "") -> str:
    if not n:
        return "–"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            return f"{n / div:.2f} {suffix}{unit}"
    return f"{n:.0f} {unit}".rstrip()


def runs_table(runs: Sequence[RunSummary]) -> str:
    r"""Markdown: one row per run. Metrics are percentages (MRR 0.3196 is
    31.96); "best valid" is the best weighted validation MRR of the curve,
    "final valid" its last point, "test" the weighted test metrics of the
    round the run selected."""
    lines = [
        "| run | algorithm | data | model | best valid MRR (round) | final valid MRR "
        "| test MRR | test Hits@1 | test Hits@10 | rounds | params up+down "
        "| bytes up+down | s / round |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        s = r.settings
        best = max(r.curve, key=lambda p: p[1]) if r.curve else None
        best_cell = "–" if best is None else f"{100 * best[1]:.2f} ({best[0]})"
        final = r.curve[-1][1] if r.curve else None
        params = r.comm.get("params_up", 0) + r.comm.get("params_down", 0)
        nbytes = r.comm.get("bytes_up", 0) + r.comm.get("bytes_down", 0)
        spr = "–" if r.seconds_per_round is None else f"{r.seconds_per_round:.2f}"
        rounds = str(r.rounds) if r.finished else f"{r.rounds} (training)"
        lines.append(
            f"| {r.label} | {r.algorithm} | {s.get('data', '?')} | "
            f"{s.get('model', '?')} | {best_cell} | {_pct(final)} | "
            f"{_pct(r.test.get('mrr'))} | {_pct(r.test.get('hits@1'))} | "
            f"{_pct(r.test.get('hits@10'))} | {rounds} | {_count(params)} | "
            f"{_count(nbytes, 'B')} | {spr} |"
        )
    return "\n".join(lines)


def clients_table(runs: Sequence[RunSummary]) -> str:
    r"""Markdown: test MRR (%) of every client (rows) in every finished run
    (columns), with each client's number of test triples."""
    done = [r for r in runs if r.clients]
    n = max((len(r.clients) for r in done), default=0)
    lines = [
        "| client | test triples | " + " | ".join(r.label for r in done) + " |",
        "|---|---|" + "---|" * len(done),
    ]
    for c in range(n):
        n_test = next(
            (r.clients[c].get("n_test") for r in done if c < len(r.clients)), ""
        )
        cells = [_pct(r.clients[c]["mrr"]) if c < len(r.clients) else "–" for r in done]
        lines.append(f"| {c} | {n_test} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


#: the x-axes of the validation curves (``fedgraph report --x-axis``) and
#: their labels: local epochs (a federated round of E local epochs counts E,
#: a baseline's epoch 1), rounds (a baseline's epochs), or the bytes sent up
#: and down so far (the run's ledger).
X_AXES = {
    "local-epochs": "local epochs (a round of E local epochs counts E)",
    "rounds": "round (baselines: epoch)",
    "communication": "bytes communicated (up + down, cumulative)",
}


def _to_x(run: RunSummary, x_axis: str) -> Callable[[int], float] | None:
    r"""Maps ``run``'s rounds (epochs) to ``x_axis``; ``None`` when the run
    has no position there (no ledger for ``communication``)."""
    if x_axis == "rounds":
        return float
    if x_axis == "local-epochs":
        epochs = run.local_epochs
        if epochs is None:
            raise ValueError(
                f"{run.path}: the run's settings record no `local_epochs`, so its "
                "rounds cannot be counted in local epochs; plot against rounds "
                "(`--x-axis rounds`)"
            )
        return lambda r: float(r * epochs)
    per = run.bytes_per_round
    if not per:
        return None
    return lambda r: float(sum(v for k, v in per.items() if k <= r))


def curve_series(
    runs: Sequence[RunSummary], x_axis: str = "local-epochs"
) -> tuple[dict[str, tuple[list[float], list[float]]], list[str]]:
    r"""Each run's weighted validation MRR in % (FedLU: its global model's as
    well, labelled ``"<run> (global)"``) against ``x_axis`` (a key of
    :data:`X_AXES`), and the labels of the runs with no position on that
    axis (``communication``: a run without a ledger, e.g. a baseline).

    Raises:
        ValueError: if ``x_axis`` is unknown, or is ``local-epochs`` and a
            federated run's settings record no ``local_epochs``.
    """
    if x_axis not in X_AXES:
        raise ValueError(
            f"`x_axis` must be one of {', '.join(X_AXES)} (got {x_axis!r})"
        )
    series: dict[str, tuple[list[float], list[float]]] = {}
    left_out: list[str] = []
    for run in runs:
        to_x = _to_x(run, x_axis)
        if to_x is None:
            left_out.append(run.label)
            continue
        for label, curve in (
            (run.label, run.curve),
            (f"{run.label} (global)", run.global_curve),
        ):
            if curve:
                series[label] = (
                    [to_x(x) for x, _ in curve],
                    [100 * y for _, y in curve],
                )
    return series, left_out


def curves_figure(runs: Sequence[RunSummary], x_axis: str = "local-epochs") -> Any:
    r"""The validation curves (MRR in %) against ``x_axis``
    (:func:`curve_series`), legend below the axes; ``None`` when no run
    has a point on that axis."""
    from fedgraph.report.plots import line_figure

    series, _ = curve_series(runs, x_axis)
    if not series:
        return None
    return line_figure(
        series,
        xlabel=X_AXES[x_axis],
        ylabel="validation MRR (%)",
        title="weighted validation MRR",
        legend_outside=True,
    )


def communication_figure(runs: Sequence[RunSummary]) -> Any:
    r"""Validation MRR (%) against the parameters communicated so far, for
    the runs that communicated; ``None`` when none did."""
    from fedgraph.report.plots import line_figure

    comm = {
        r.label: ([x for x, _ in r.comm_curve], [100 * y for _, y in r.comm_curve])
        for r in runs
        if r.comm_curve
    }
    if not comm:
        return None
    return line_figure(
        comm,
        xlabel="parameters communicated (up + down, cumulative)",
        ylabel="validation MRR (%)",
        title="validation MRR against communication",
        legend_outside=True,
    )


def clients_figure(runs: Sequence[RunSummary]) -> Any:
    r"""Grouped bars of every finished run's test MRR (%) per client, legend
    below the axes; ``None`` when no run has finished."""
    from fedgraph.report.plots import bars_figure

    done = [r for r in runs if r.clients]
    if not done:
        return None
    n = max(len(r.clients) for r in done)
    bars = {
        r.label: [100 * c["mrr"] for c in r.clients] + [0.0] * (n - len(r.clients))
        for r in done
    }
    return bars_figure(
        [f"client {c}" for c in range(n)],
        bars,
        ylabel="test MRR (%)",
        title="test MRR per client",
        legend_outside=True,
    )


def _report_lines(
    runs: Sequence[RunSummary], drawn: dict[str, Any], fmt: str, x_axis: str
) -> list[str]:
    md = ["# Runs compared", "", runs_table(runs), ""]
    left_out = curve_series(runs, x_axis)[1]
    if drawn["curves"] is not None:
        md += [f"![validation curves](curves.{fmt})", ""]
        if left_out:
            md += [f"Not on the {x_axis} axis (no ledger): {', '.join(left_out)}.", ""]
    if drawn["communication"] is not None:
        md += [f"![MRR against communication](communication.{fmt})", ""]
    if drawn["clients"] is not None:
        md += ["## Per client (test MRR, %)", "", clients_table(runs), ""]
        md += [f"![per-client test MRR](clients.{fmt})", ""]
    md += ["## Commands", ""]
    for r in runs:
        cmd = r.settings.get("command")
        md += [f"- {r.label}: `{cmd}`" if cmd else f"- {r.label}: (not recorded)"]
    return md


def write_report(
    runs: Sequence[RunSummary],
    out: str | os.PathLike[str],
    fmt: str = "png",
    x_axis: str = "local-epochs",
) -> list[Path]:
    r"""Writes into ``out``: ``report.md`` (the two tables and the figures),
    ``curves.{fmt}`` (validation MRR against ``x_axis``, see
    :data:`X_AXES`), ``communication.{fmt}`` (validation MRR against
    parameters communicated, when a run communicated) and ``clients.{fmt}``
    (per-client test MRR). Metrics are in % everywhere. Every figure is
    drawn before any file is written. Returns the files written.

    Raises:
        ValueError: as :func:`curve_series`.
    """
    from fedgraph.report.plots import save_figure

    drawn = {
        "curves": curves_figure(runs, x_axis),
        "communication": communication_figure(runs),
        "clients": clients_figure(runs),
    }
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = [
        save_figure(fig, out / f"{name}.{fmt}")
        for name, fig in drawn.items()
        if fig is not None
    ]
    report = out / "report.md"
    atomic_write_text(report, "\n".join(_report_lines(runs, drawn, fmt, x_axis)) + "\n")
    return [report, *written]
