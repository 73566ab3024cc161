import gzip

import pytest
import torch

from fedgraph.data import DataFormatError, read_triple_files, read_triple_folder
from fedgraph.data.io import factorize


def write(path, text, mode="w"):
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode == "wb":
        path.write_bytes(text)
    else:
        path.write_text(text, newline="")
    return path


@pytest.fixture
def folder(tmp_path):
    # CRLF line ends, as FB15k-237 ships.
    write(tmp_path / "train.txt", "a\tr1\tb\r\nb\tr2\tc\r\nc\tr1\ta\r\n")
    write(tmp_path / "valid.txt", "d\tr3\ta\r\n")
    write(tmp_path / "test.txt", "b\tr1\td\r\n")
    return tmp_path


def test_first_seen_ids_over_all_splits(folder):
    kg = read_triple_folder(folder)
    assert kg.entity_names == ["a", "b", "c", "d"]
    assert kg.relation_names == ["r1", "r2", "r3"]
    assert kg.triples("train").tolist() == [[0, 0, 1], [1, 1, 2], [2, 0, 0]]
    assert kg.triples("valid").tolist() == [[3, 2, 0]]
    assert kg.triples("test").tolist() == [[1, 0, 3]]
    assert kg.split_names == ["train", "valid", "test"]
    assert kg.name == folder.name


def test_crlf_and_lf_give_the_same_graph(folder, tmp_path):
    lf = tmp_path / "lf"
    for s in ("train", "valid", "test"):
        write(lf / f"{s}.txt", (folder / f"{s}.txt").read_text().replace("\r\n", "\n"))
    a, b = read_triple_folder(folder), read_triple_folder(lf)
    assert a.entity_names == b.entity_names
    assert all(torch.equal(a.triples(s), b.triples(s)) for s in a.split_names)
    assert not any("\r" in n for n in a.entity_names)


def test_factorize_first_seen():
    codes, uniq = factorize(["x", "y", "x", "z", "y"])
    assert uniq == ["x", "y", "z"]
    assert codes.tolist() == [0, 1, 0, 2, 1]


def test_wrong_column_count_names_file_and_line(folder):
    write(folder / "train.txt", "a\tr1\tb\nb\tr2\nc\tr1\ta\n")
    with pytest.raises(DataFormatError, match=r"train\.txt, line 2: expected 3"):
        read_triple_folder(folder)


def test_blank_line_inside_file_is_an_error(folder):
    write(folder / "valid.txt", "a\tr1\tb\n\nb\tr2\tc\n")
    with pytest.raises(DataFormatError, match=r"valid\.txt, line 2"):
        read_triple_folder(folder)


def test_empty_file(folder):
    write(folder / "test.txt", "")
    with pytest.raises(DataFormatError, match=r"test\.txt: file is empty"):
        read_triple_folder(folder)


def test_binary_junk(folder):
    write(folder / "train.txt", b"a\tr1\tb\n\x89PNG\xff\xfe\x00\x01\n", mode="wb")
    with pytest.raises(DataFormatError, match=r"train\.txt, line 2: not UTF-8"):
        read_triple_folder(folder)


def test_nul_bytes(folder):
    write(folder / "train.txt", b"a\tr1\tb\nb\x00\tr\tc\n", mode="wb")
    with pytest.raises(DataFormatError, match=r"line 2: NUL byte"):
        read_triple_folder(folder)


def test_gzip_and_truncated_gzip(folder, tmp_path):
    data = gzip.compress((folder / "train.txt").read_bytes())
    good = write(tmp_path / "g" / "train.txt.gz", data, mode="wb")
    kg = read_triple_files({"train": good})
    assert kg.num_triples("train") == 3
    bad = write(tmp_path / "g" / "bad.txt.gz", data[: len(data) // 2], mode="wb")
    with pytest.raises(DataFormatError, match=r"bad\.txt\.gz: truncated or corrupt"):
        read_triple_files({"train": bad})


def test_duplicates_keep_warns_with_count(folder):
    write(folder / "train.txt", "a\tr1\tb\nb\tr2\tc\na\tr1\tb\na\tr1\tb\n")
    with pytest.warns(
        UserWarning, match=r"2 duplicate triple\(s\), first at line 3; kept"
    ):
        kg = read_triple_folder(folder)
    assert kg.num_triples("train") == 4


def test_duplicates_drop_and_error(folder):
    write(folder / "train.txt", "a\tr1\tb\nb\tr2\tc\na\tr1\tb\n")
    with pytest.warns(UserWarning, match="dropped"):
        kg = read_triple_folder(folder, duplicates="drop")
    assert kg.triples("train").tolist() == [[0, 0, 1], [1, 1, 2]]
    with pytest.raises(DataFormatError, match=r"train\.txt, line 3: duplicate"):
        read_triple_folder(folder, duplicates="error")
    with pytest.raises(ValueError, match="`duplicates` must be one of"):
        read_triple_folder(folder, duplicates="ignore")


def test_missing_split_file(folder):
    (folder / "valid.txt").unlink()
    with pytest.raises(FileNotFoundError, match="valid.txt"):
        read_triple_folder(folder)


def test_load_dataset_on_a_folder(folder, monkeypatch):
    from fedgraph.data import load_dataset

    (folder / "unlearn.txt").write_text("a\tr1\tb\n")
    kg = load_dataset(str(folder) + "/", force_reload=True)
    assert kg.split_names == ["train", "valid", "test", "unlearn"]
    monkeypatch.chdir(folder.parent)
    assert load_dataset(folder.name).num_entities == 4  # no registered name


def test_heterodata_view(folder):
    kg = read_triple_folder(folder)
    data = kg.data
    assert data["entity"].num_nodes == 4
    assert data["entity", "r1", "entity"].edge_index.tolist() == [[0, 2, 1], [1, 0, 3]]
    assert data.edge_index.size(1) == 5 and data.edge_type.tolist() == [0, 1, 0, 2, 0]
