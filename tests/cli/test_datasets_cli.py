import json

import pytest

from fedgraph.cli.main import main


def write_toy(root):
    d = root / "nations"
    d.mkdir(parents=True)
    (d / "train.txt").write_text("a\tr\tb\nb\ts\tc\n")
    (d / "valid.txt").write_text("c\tr\ta\n")
    (d / "test.txt").write_text("a\ts\tc\n")


def test_datasets_table_says_what_is_present(tmp_path, capsys):
    write_toy(tmp_path)
    assert main(["datasets", "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["name", "kind", "present", "path"]
    lines = {line.split()[0]: line.split() for line in out[2:]}
    assert lines["nations"][1:] == ["kg", "yes", str(tmp_path / "nations")]
    assert lines["fb15k-237"][2] == "no"
    assert lines["fedlu-fb15k-237-c3"][1] == "federated-kg"


def test_datasets_json(tmp_path, capsys):
    write_toy(tmp_path)
    assert main(["datasets", "--root", str(tmp_path), "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["nations"]["present"] is True and rows["umls"]["present"] is False


def test_info_json_for_a_kg(tmp_path, capsys):
    write_toy(tmp_path)
    assert main(["info", "Nations", "--root", str(tmp_path), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["entities"] == 3 and stats["relations"] == 2
    assert stats["triples"] == {"train": 2, "valid": 1, "test": 1}


def test_info_on_a_client_folder(tmp_path, capsys):
    for k in range(2):
        d = tmp_path / "part" / f"client{k}"
        d.mkdir(parents=True)
        for s in ("train", "valid", "test"):
            (d / f"{s}.txt").write_text(f"e{k}\tr\te{k + 1}\n")
    assert main(["info", str(tmp_path / "part"), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["kind"] == "federated-kg" and stats["entities"] == 3
    assert [c["triples"]["train"] for c in stats["clients"]] == [1, 1]
    assert stats["triples"]["train"] == 2


def test_unknown_dataset_exits_2_with_one_line(capsys):
    assert main(["info", "wn18"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Could not resolve dataset 'wn18'" in err[0]


def test_missing_dataset_exits_2_with_where_it_looked(tmp_path, capsys):
    assert main(["info", "umls", "--root", str(tmp_path), "--no-download"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert str(tmp_path / "umls") in err[0] and "FEDGRAPH_DATA" in err[0]


@pytest.mark.dataset
def test_info_fedlu_c3_real(capsys):
    assert main(["info", "fb15k-237-c3", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert [c["triples"]["train"] for c in stats["clients"]] == [44245, 12007, 191840]
    assert stats["entities"] == 14541 and stats["relations"] == 237
