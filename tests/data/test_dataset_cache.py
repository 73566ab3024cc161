import pytest

from fedgraph.data import DataFormatError, Nations
from fedgraph.data.triple_dataset import TripleFolderDataset


class Toy(TripleFolderDataset):
    name = "toy"
    folder = "toy"


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDGRAPH_CACHE", str(tmp_path / "cache"))
    d = tmp_path / "root" / "toy"
    d.mkdir(parents=True)
    (d / "train.txt").write_text("a\tr\tb\nb\tr\tc\n")
    (d / "valid.txt").write_text("c\tr\ta\n")
    (d / "test.txt").write_text("a\tr\tc\n")
    return tmp_path / "root"


def cache_files(root):
    d = root.parent / "cache" / "toy"
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def test_second_load_reads_the_cache(root, monkeypatch):
    first = Toy(root=root).get()
    assert len(cache_files(root)) == 1
    monkeypatch.setattr(Toy, "process", lambda self: pytest.fail("re-processed"))
    second = Toy(root=root).get()
    assert second.entity_names == first.entity_names
    assert second.triples("train").tolist() == first.triples("train").tolist()


def test_changed_raw_file_changes_the_key(root):
    Toy(root=root)
    (root / "toy" / "test.txt").write_text("c\tr\tb\n")
    kg = Toy(root=root).get()
    assert kg.triples("test").tolist() == [[2, 0, 1]]
    assert len(cache_files(root)) == 2  # keyed by content, old entry untouched


def test_options_are_part_of_the_key(root):
    a = Toy(root=root).processed_file_names
    b = Toy(root=root, duplicates="drop").processed_file_names
    assert a != b


def test_force_reload(root, monkeypatch):
    Toy(root=root)
    calls = []
    orig = Toy.process
    monkeypatch.setattr(Toy, "process", lambda self: calls.append(1) or orig(self))
    Toy(root=root)
    assert calls == []
    Toy(root=root, force_reload=True)
    assert calls == [1]


def test_failed_load_leaves_no_cache(root):
    (root / "toy" / "valid.txt").write_text("c\tr\n")
    with pytest.raises(DataFormatError, match=r"valid\.txt, line 1"):
        Toy(root=root)
    assert cache_files(root) == []


def test_corrupt_cache_is_rebuilt(root):
    Toy(root=root)
    (path,) = (root.parent / "cache" / "toy").iterdir()
    path.write_bytes(b"not a torch file")
    with pytest.warns(UserWarning, match="unreadable cache"):
        kg = Toy(root=root).get()
    assert kg.num_entities == 3


def test_registry_class_attributes():
    assert Nations.name == "nations" and Nations.kind == "kg"
    assert [f.path for f in Nations.remote_files] == [
        "train.txt",
        "valid.txt",
        "test.txt",
    ]
    assert all(
        len(f.sha256) == 64 and f.url.startswith("https://")
        for f in Nations.remote_files
    )
