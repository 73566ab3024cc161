import json

import pytest

from fedgraph.runtime.run_record import (
    FREE_KEYS,
    check_resume,
    differing_settings,
    is_per_graph,
    same_data,
)


def test_a_baselines_history_is_one_list_per_graph():
    assert is_per_graph([[{"epoch": 5}], []])  # Independent, graph 1 not validated
    assert not is_per_graph([{"round": 1}])  # a federated run's rounds
    assert not is_per_graph([]) and not is_per_graph(None)


def test_differing_settings_ignores_free_and_new_keys():
    recorded = {"algorithm": "fede", "lr": 0.01, "dim": 8, "threads": 4,
                "device": "cpu", "rounds_max": 10, "extra": {"p": 0.4}}  # fmt: skip
    given = {"algorithm": "fede", "lr": 0.01, "dim": 8, "threads": 1,
             "device": "cuda", "rounds_max": 50, "extra": {"p": 0.4},
             "unseen": "keep"}  # fmt: skip
    assert differing_settings(recorded, given) == []
    given.update(lr=0.02, extra={"p": 0.5})
    assert differing_settings(recorded, given) == ["extra", "lr"]
    assert {"threads", "device", "quiet", "rounds_max"} <= FREE_KEYS


def test_same_data_compares_names_loosely_and_folders_by_path(tmp_path, monkeypatch):
    assert same_data("fedlu-r3", "FedLU_R3")
    assert not same_data("fedlu-r3", "fedlu-r5")
    (tmp_path / "part").mkdir()
    monkeypatch.chdir(tmp_path)
    assert same_data("part", str(tmp_path / "part"))
    assert not same_data("part", str(tmp_path))


def test_check_resume_lists_each_difference(tmp_path):
    assert check_resume(tmp_path, {"lr": 1}) is None  # nothing recorded yet
    (tmp_path / "progress.json").write_text(
        json.dumps({"settings": {"lr": 0.01, "seed": 0}, "history": []})
    )
    assert check_resume(tmp_path, {"lr": 0.01, "seed": 0}) == {"lr": 0.01, "seed": 0}
    with pytest.raises(ValueError, match=r"lr 0.01 -> 0.1, seed 0 -> 3"):
        check_resume(tmp_path, {"lr": 0.1, "seed": 3})
    (tmp_path / "progress.json").write_text("{not json")
    with pytest.raises(ValueError, match="progress.json is not valid JSON"):
        check_resume(tmp_path, {"lr": 0.01})
