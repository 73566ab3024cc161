import pytest

from fedgraph.data import DataFormatError, MultilingualKG, load_dataset, read_dbp5l
from fedgraph.data.dbp5l import ALIGN_PAIRS


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, newline="")


@pytest.fixture
def folder(tmp_path):
    write(tmp_path / "relations.txt", "r:a\r\nr:b\r\n")
    write(tmp_path / "entity" / "en.tsv", "E0\r\nE1\r\nE2\r\n")
    write(tmp_path / "entity" / "el.tsv", "G0\r\nG1\r\n")
    for lang, rows in {"en": ["0\t1\t2", "2\t0\t1"], "el": ["1\t1\t0"]}.items():
        write(tmp_path / "kg" / f"{lang}-train.tsv", "\r\n".join(rows) + "\r\n")
        write(tmp_path / "kg" / f"{lang}-val.tsv", "0\t0\t1\n")
        write(tmp_path / "kg" / f"{lang}-test.tsv", "1\t0\t0\n")
    write(tmp_path / "seed_alignlinks" / "el-en.tsv", "1.0\t2.0\r\n0.0\t0.0\r\n")
    return tmp_path


def test_reads_languages_and_float_links(folder):
    m = read_dbp5l(folder, languages=("en", "el"))
    assert isinstance(m, MultilingualKG) and m.languages == ["en", "el"]
    en = m["en"]
    assert en.num_entities == 3 and en.num_relations == 2
    assert en.entity_names == ["E0", "E1", "E2"]
    assert en.triples("train").tolist() == [[0, 1, 2], [2, 0, 1]]
    assert en.split_names == ["train", "valid", "test"]
    assert m.alignment("el", "en").tolist() == [[1, 2], [0, 0]]
    assert m.alignment("en", "el").tolist() == [[2, 1], [0, 0]]
    s = m.stats()
    assert s["languages"]["en"]["triples"] == {"train": 2, "valid": 1, "test": 1}
    assert s["entities"] == 5 and s["alignments"] == {"el-en": 2}
    assert MultilingualKG.from_dict(m.to_dict()).stats() == s


def test_fractional_link_id_is_an_error(folder):
    write(folder / "seed_alignlinks" / "el-en.tsv", "1.0\t2.0\n0.5\t0.0\n")
    with pytest.raises(
        DataFormatError,
        match=r"el-en\.tsv, line 2: expected an integer id \(got '0\.5'\)",
    ):
        read_dbp5l(folder, languages=("en", "el"))


def test_unknown_ids(folder):
    write(folder / "seed_alignlinks" / "el-en.tsv", "1\t3\n")
    with pytest.raises(
        DataFormatError, match=r"el-en\.tsv, line 1: unknown en entity id 3"
    ):
        read_dbp5l(folder, languages=("en", "el"))
    write(folder / "kg" / "el-test.tsv", "1\t0\t0\n1\t2\t0\n")
    with pytest.raises(
        DataFormatError, match=r"el-test\.tsv, line 2: unknown relation id 2"
    ):
        read_dbp5l(folder, languages=("en", "el"))


@pytest.mark.dataset
def test_dbp5l_real():
    m = load_dataset("dbp-5l")
    s = m.stats()["languages"]
    assert (s["en"]["entities"], sum(s["en"]["triples"].values())) == (13996, 80167)
    assert (s["el"]["entities"], sum(s["el"]["triples"].values())) == (5231, 13839)
    assert s["en"]["triples"] == {"train": 48652, "valid": 24051, "test": 7464}
    assert m["en"].num_relations == 960
    assert len(m.alignments) == len(ALIGN_PAIRS)
    # First link of el-en.tsv is "3931.0  3931.0".
    assert m.alignment("el", "en")[0].tolist() == [3931, 3931]
    assert m.alignment("el", "en").size(0) == 2290
