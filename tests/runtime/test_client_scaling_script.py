"""benchmarks/client_scaling.py on UMLS: the JSON it writes, resuming, the plot."""

import json
import sys

import pytest

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.dataset
def test_client_scaling_writes_resumes_and_plots(tmp_path, load_script, monkeypatch):
    script = load_script("benchmarks/client_scaling.py")
    out, fig = tmp_path / "scaling.json", tmp_path / "scaling.svg"
    argv = ["client_scaling.py", "--dataset", "umls", "--clients", "2,4"]
    argv += ["--rounds", "1", "--dim", "16", "--out", str(out), "--plot", str(fig)]
    monkeypatch.setenv("FEDGRAPH_COMPILE", "0")
    monkeypatch.setattr(sys, "argv", argv)
    script.main()
    doc = json.loads(out.read_text())
    assert sorted(doc["entries"]) == [
        "2/batched",
        "2/sequential",
        "4/batched",
        "4/sequential",
    ]
    for key in ("2", "4"):
        seq, bat = doc["entries"][f"{key}/sequential"], doc["entries"][f"{key}/batched"]
        # the same training, one after another or batched
        assert seq["rounds"][0]["loss"] == pytest.approx(
            bat["rounds"][0]["loss"], rel=1e-5
        )
        assert bat["steps_per_round"] < seq["steps_per_round"]
        assert len(seq["rounds"][0]["loadavg_1min"]) == 2
    assert doc["settings"]["threads"] == 1 and fig.stat().st_size > 0
    # resumable: measured entries are kept, not measured again
    before = out.read_text()
    script.main()
    assert json.loads(out.read_text())["entries"] == json.loads(before)["entries"]
