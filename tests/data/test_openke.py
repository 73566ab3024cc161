import pytest

from fedgraph.data import DataFormatError, read_openke_folder


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, newline="")


@pytest.fixture
def folder(tmp_path):
    # Ids deliberately not in file order; triple columns are h t r.
    write(tmp_path / "entity2id.txt", "3\r\nbob\t1\r\nalice\t0\r\ncarol\t2\r\n")
    write(tmp_path / "relation2id.txt", "2\r\nlikes\t1\r\nknows\t0\r\n")
    write(tmp_path / "train2id.txt", "2\r\n0 1 1\r\n1 2 0\r\n")
    write(tmp_path / "valid2id.txt", "1\n2 0 1\n")
    write(tmp_path / "test2id.txt", "1\n0 2 0\n")
    return tmp_path


def test_reads_ids_and_reorders_h_t_r(folder):
    kg = read_openke_folder(folder)
    assert kg.entity_names == ["alice", "bob", "carol"]
    assert kg.relation_names == ["knows", "likes"]
    # "0 1 1" = alice (h), bob (t), likes (r)  ->  (0, 1, 1) in h, r, t
    # "1 2 0" = bob, carol, knows             ->  (1, 0, 2)
    assert kg.triples("train").tolist() == [[0, 1, 1], [1, 0, 2]]
    assert kg.triples("valid").tolist() == [[2, 1, 0]]
    assert kg.triples("test").tolist() == [[0, 0, 2]]


def test_count_line_mismatch(folder):
    write(folder / "train2id.txt", "3\n0 1 1\n1 2 0\n")
    with pytest.raises(
        DataFormatError,
        match=r"train2id\.txt, line 1: the count line says 3 rows but the file has 2",
    ):
        read_openke_folder(folder)
    write(folder / "entity2id.txt", "2\nbob\t1\nalice\t0\ncarol\t2\n")
    with pytest.raises(
        DataFormatError, match=r"entity2id\.txt, line 1: the count line says 2"
    ):
        read_openke_folder(folder)


def test_count_line_not_a_number(folder):
    write(folder / "relation2id.txt", "knows\t0\nlikes\t1\n")
    with pytest.raises(
        DataFormatError, match=r"relation2id\.txt, line 1: expected the number"
    ):
        read_openke_folder(folder)


def test_unknown_entity_id_names_line(folder):
    write(folder / "test2id.txt", "2\n0 2 0\n0 3 1\n")
    with pytest.raises(
        DataFormatError,
        match=r"test2id\.txt, line 3: unknown tail entity id 3 \(the dictionary has 3\)",
    ):
        read_openke_folder(folder)


def test_unknown_relation_id(folder):
    write(folder / "valid2id.txt", "1\n2 0 2\n")
    with pytest.raises(
        DataFormatError, match=r"valid2id\.txt, line 2: unknown relation id 2"
    ):
        read_openke_folder(folder)


def test_wrong_columns_and_non_integer(folder):
    write(folder / "train2id.txt", "2\n0 1 1\n1 2\n")
    with pytest.raises(DataFormatError, match=r"train2id\.txt, line 3: expected 3"):
        read_openke_folder(folder)
    write(folder / "train2id.txt", "2\n0 1 1\n1 x 0\n")
    with pytest.raises(
        DataFormatError,
        match=r"train2id\.txt, line 3: expected an integer id \(got 'x'\)",
    ):
        read_openke_folder(folder)


def test_duplicate_and_out_of_range_dictionary_ids(folder):
    write(folder / "entity2id.txt", "3\nbob\t1\nalice\t1\ncarol\t2\n")
    with pytest.raises(
        DataFormatError, match=r"entity2id\.txt, line 3: id 1 is used twice"
    ):
        read_openke_folder(folder)
    write(folder / "entity2id.txt", "3\nbob\t1\nalice\t0\ncarol\t5\n")
    with pytest.raises(DataFormatError, match=r"entity2id\.txt, line 4: id 5 outside"):
        read_openke_folder(folder)


def test_duplicates_counted_with_line(folder):
    write(folder / "train2id.txt", "3\n0 1 1\n1 2 0\n0 1 1\n")
    with pytest.warns(UserWarning, match=r"1 duplicate triple\(s\), first at line 4"):
        kg = read_openke_folder(folder)
    assert kg.num_triples("train") == 3
