import json

import pytest
import torch

from fedgraph.eval.metrics import LinkPredState
from fedgraph.eval.results import read_results, summarize, write_results

pytestmark = pytest.mark.usefixtures("one_thread")


def test_summarize_and_write(tmp_path):
    a = LinkPredState().update(torch.tensor([1.0, 2.0]), "head")
    b = LinkPredState().update(torch.tensor([4.0]), "tail")
    weighted, clients = summarize([a, b], n_test=[2, 1])
    assert weighted["mrr"] == pytest.approx((1 + 0.5 + 0.25) / 3)
    assert weighted["head_mrr"] == pytest.approx(0.75)
    assert clients[1]["n_test"] == 1 and clients[1]["mr"] == 4.0
    p = write_results(
        tmp_path / "x" / "r.json",
        weighted=weighted,
        clients=clients,
        rounds=3,
        seconds_per_round=1.5,
        settings={"model": "transe"},
    )
    doc = read_results(p)
    assert doc["comm"] == {
        "params_up": 0,
        "params_down": 0,
        "bytes_up": 0,
        "bytes_down": 0,
    }
    assert doc["rounds"] == 3 and doc["settings"]["model"] == "transe"
    assert not list((tmp_path / "x").glob(".*tmp*"))
    with pytest.raises(ValueError, match="n_test"):
        write_results(
            tmp_path / "y.json",
            weighted={},
            clients=[{}],
            rounds=1,
            seconds_per_round=0,
        )
    (tmp_path / "z.json").write_text(json.dumps({"a": 1}))
    with pytest.raises(ValueError, match="not a fedgraph results file"):
        read_results(tmp_path / "z.json")


def test_results_record_the_library_versions(tmp_path, monkeypatch):
    import platform

    import torch_geometric

    from fedgraph.eval import results

    path = write_results(
        tmp_path / "r.json",
        weighted={},
        clients=[],
        rounds=1,
        seconds_per_round=0.0,
        settings={"model": "transe"},
    )
    versions = read_results(path)["versions"]
    assert versions["python"] == platform.python_version()
    assert versions["torch"] == torch.__version__
    assert versions["torch_geometric"] == torch_geometric.__version__
    assert "versions" not in read_results(path)["settings"]  # resume ignores them
    # a library that is not installed is left out, not recorded as missing
    monkeypatch.setattr(
        results, "RECORDED_LIBRARIES", ("torch", "no-such-distribution-xyz")
    )
    assert sorted(results.library_versions()) == ["python", "torch"]
