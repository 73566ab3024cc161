r"""The figures of ``fedgraph report --out``, read back from matplotlib: MRR in
% as in the tables, curves against local epochs (or rounds, or bytes), the
legend outside the data; and the partition table's one format per column."""

from __future__ import annotations

import json
import random

import pytest

from fedgraph.cli import report as report_cli
from fedgraph.cli.main import main
from fedgraph.partition import format_table

pytestmark = pytest.mark.usefixtures("one_thread")
plt = pytest.importorskip("matplotlib.pyplot")

SMALL = ["--dim", "8", "--batch-size", "32", "--num-negatives", "4",
         "--lr", "0.01", "--quiet", "--eval-every", "1"]  # fmt: skip


def _write_federation(root):
    rng = random.Random(1)
    for c in range(2):
        d = root / f"client{c}"
        d.mkdir(parents=True)
        ents = [f"e{i}" for i in range(c * 4, c * 4 + 12)]  # overlapping
        for split, n in (("train", 50), ("valid", 8), ("test", 8)):
            lines = {
                f"{rng.choice(ents)}\tr{c}_{rng.randrange(3)}\t{rng.choice(ents)}"
                for _ in range(n)
            }
            (d / f"{split}.txt").write_text("\n".join(sorted(lines)) + "\n")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    r"""FedE (3 rounds of 3 local epochs) and Independent (3 epochs)."""
    tmp = tmp_path_factory.mktemp("runs")
    _write_federation(tmp / "fed")
    for alg, extra in (("fede", ["--local-epochs", "3"]), ("independent", [])):
        argv = ["train", str(tmp / "fed"), "--algorithm", alg,
                "--out", str(tmp / alg), "--rounds", "3", *SMALL, *extra]  # fmt: skip
        assert main(argv) == 0
    return tmp


@pytest.fixture(scope="module")
def report(runs, tmp_path_factory):
    r"""``report(*extra)``: the figures of ``fedgraph report`` on both runs
    (``extra`` arguments appended) by title, kept open (``plt.close``
    recorded); each set of arguments is run once."""
    drawn: dict[tuple[str, ...], dict] = {}
    close = plt.close

    def run(*extra):
        if extra not in drawn:
            figures = []
            out = tmp_path_factory.mktemp("report")
            argv = ["report", str(runs / "fede"), str(runs / "independent")]
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(plt, "close", figures.append)
                assert main([*argv, "--out", str(out), *extra]) == 0
            drawn[extra] = {fig.axes[0].get_title(): fig for fig in figures}
        return drawn[extra]

    yield run
    for figures in drawn.values():
        for fig in figures.values():
            close(fig)


def _doc(runs, alg):
    return json.loads((runs / alg / "results.json").read_text())


def _lines(fig):
    return {line.get_label(): line for line in fig.axes[0].get_lines()}


def _fede_valid(runs):
    return [h["valid"]["mrr"] for h in _doc(runs, "fede")["history"] if "valid" in h]


def _independent_valid(runs):
    r"""The weighted validation MRR of each epoch, from the results file."""
    hist = _doc(runs, "independent")["history"]
    out = []
    for epoch in (1, 2, 3):
        v = [next(e["valid"] for e in h if e["epoch"] == epoch) for h in hist]
        num = sum(x["n_queries"] * x["mrr"] for x in v)
        out.append(num / sum(x["n_queries"] for x in v))
    return out


def test_curves_are_percent_against_local_epochs(runs, report):
    fig = report()["weighted validation MRR"]
    ax = fig.axes[0]
    assert ax.get_ylabel() == "validation MRR (%)"
    assert ax.get_xlabel() == "local epochs (a round of E local epochs counts E)"
    lines = _lines(fig)
    assert sorted(lines) == ["fede", "independent"]
    assert list(lines["fede"].get_xdata()) == [3.0, 6.0, 9.0]
    assert list(lines["fede"].get_ydata()) == [100 * m for m in _fede_valid(runs)]
    assert list(lines["independent"].get_xdata()) == [1.0, 2.0, 3.0]
    want = [100 * m for m in _independent_valid(runs)]
    assert list(lines["independent"].get_ydata()) == want


def test_curves_against_rounds_and_bytes(runs, report):
    fig = report("--x-axis", "rounds")["weighted validation MRR"]
    assert fig.axes[0].get_xlabel() == "round (baselines: epoch)"
    assert list(_lines(fig)["fede"].get_xdata()) == [1.0, 2.0, 3.0]
    fig = report("--x-axis", "communication")["weighted validation MRR"]
    assert fig.axes[0].get_xlabel() == "bytes communicated (up + down, cumulative)"
    lines = _lines(fig)
    assert sorted(lines) == ["fede"]  # Independent has no ledger
    ledger = _doc(runs, "fede")["comm_per_round"]
    per = [ledger[str(r)]["bytes_up"] + ledger[str(r)]["bytes_down"] for r in range(4)]
    assert (
        list(lines["fede"].get_xdata())
        == [
            float(sum(per[:2])),  # round 0 (setup) and round 1
            float(sum(per[:3])),
            float(sum(per)),
        ]
    )
    assert list(lines["fede"].get_ydata()) == [100 * m for m in _fede_valid(runs)]


def test_communication_and_clients_are_percent(runs, report):
    figs = report()
    comm = figs["validation MRR against communication"].axes[0]
    assert comm.get_ylabel() == "validation MRR (%)"
    assert list(comm.get_lines()[0].get_ydata()) == [100 * m for m in _fede_valid(runs)]
    ax = figs["test MRR per client"].axes[0]
    assert ax.get_ylabel() == "test MRR (%)"
    heights = [[p.get_height() for p in c.patches] for c in ax.containers]
    assert heights == [
        [100 * c["mrr"] for c in _doc(runs, alg)["clients"]]
        for alg in ("fede", "independent")
    ]


@pytest.mark.parametrize(
    "title",
    [
        "weighted validation MRR",
        "test MRR per client",
        "validation MRR against communication",
    ],  # fmt: skip
)
def test_legend_covers_no_data(report, title):
    fig = report()[title]
    fig.canvas.draw()
    legends = fig.legends or [fig.axes[0].get_legend()]
    assert len(legends) == 1
    box = legends[0].get_window_extent()
    ax = fig.axes[0]
    assert not box.overlaps(ax.get_window_extent())  # not over the axes at all
    artists = [*ax.patches, *ax.get_lines()]
    assert artists and not any(box.overlaps(a.get_window_extent()) for a in artists)


def test_local_epochs_axis_needs_the_setting(runs, tmp_path, capsys):
    doc = _doc(runs, "fede")
    del doc["settings"]["local_epochs"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    out = tmp_path / "rep"
    assert main(["report", str(old), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{old}: the run's settings record no `local_epochs`" in err
    assert "(`--x-axis rounds`)" in err and not out.exists()
    assert main(["report", str(old), "--out", str(out), "--x-axis", "rounds"]) == 0


def test_cli_choices_are_the_report_axes():
    from fedgraph.report.runs import X_AXES, curve_series

    assert report_cli.X_AXES == tuple(X_AXES)
    with pytest.raises(ValueError) as exc:
        curve_series([], "epochs")
    assert str(exc.value) == (
        "`x_axis` must be one of local-epochs, rounds, communication (got 'epochs')"
    )


def test_partition_table_formats_a_column_one_way():
    stats = {"clients": [{"client": i, "mean_degree": d, "clustering": c}
                         for i, (d, c) in enumerate(
                             [(27.5, 0.1234), (9.17, 0.5), (14.1, 0.25)])]}  # fmt: skip
    rows = [line.split() for line in format_table(stats).splitlines()[2:]]
    assert rows == [
        ["0", "27.5", "0.1234"],
        ["1", "9.2", "0.5000"],
        ["2", "14.1", "0.2500"],
    ]
