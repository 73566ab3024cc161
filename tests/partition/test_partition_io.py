import json

import pytest
import torch
from partition_kgs import random_kg

from fedgraph.partition import (
    PartitionFormatError,
    RandomRelationPartitioner,
    load_partition,
    read_meta,
    save_partition,
)
from fedgraph.partition.io import FORMAT_VERSION


@pytest.fixture
def fed():
    return RandomRelationPartitioner(3, seed=1)(random_kg(num_relations=7))


@pytest.fixture
def saved(fed, tmp_path):
    return save_partition(fed, tmp_path / "part")


def _files(path):
    return {
        p.relative_to(path).as_posix(): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file()
    }


def test_layout_and_meta(saved, fed):
    names = set(_files(saved))
    assert {"META.json", "entities.txt", "relations.txt"} <= names
    for c in range(3):
        assert {
            f"ids/client{c}/entity_ids.txt",
            f"ids/client{c}/relation_ids.txt",
        } <= names
        assert {n for n in names if n.startswith(f"client{c}/")} == {
            f"client{c}/{f}"
            for f in (
                "META.json",
                "entities.txt",
                "relations.txt",
                "train.txt",
                "valid.txt",
                "test.txt",
            )
        }
    meta = json.loads((saved / "META.json").read_text())
    assert meta["format_version"] == FORMAT_VERSION and meta["kind"] == "kg"
    assert meta["partitioner"] == "RandomRelationPartitioner"
    assert meta["params"]["seed"] == 1 and meta["seed"] == 1
    assert meta["source_checksum"] == fed.meta["source_checksum"]
    assert meta["fedgraph_version"]
    assert meta["num_clients"] == 3 and len(meta["files"]) == len(names) - 1
    # first line of a split file: local head, relation, tail
    line = (saved / "client0" / "train.txt").read_text().splitlines()[0]
    assert line.split("\t") == [
        str(v) for v in fed[0].graph.triples("train")[0].tolist()
    ]
    assert not list(saved.parent.glob(".part.tmp-*"))  # temp folder renamed away


def test_roundtrip(saved, fed):
    back = load_partition(saved)
    assert back.num_entities == fed.num_entities and back.num_clients == 3
    assert back.entity_names == fed.entity_names
    for a, b in zip(fed, back, strict=True):
        assert torch.equal(a.entity_ids, b.entity_ids)
        assert torch.equal(a.relation_ids, b.relation_ids)
        for s in ("train", "valid", "test"):
            assert torch.equal(a.graph.triples(s), b.graph.triples(s))
        assert b.graph.entity_names == [
            fed.entity_names[i] for i in b.entity_ids.tolist()
        ]
    assert back.meta["relation_clients"] == fed.meta["relation_clients"]


def test_same_seed_saves_byte_identical(tmp_path):
    kg = random_kg(num_relations=7)
    a = save_partition(RandomRelationPartitioner(3, seed=2)(kg), tmp_path / "a")
    b = save_partition(RandomRelationPartitioner(3, seed=2)(kg), tmp_path / "b")
    assert _files(a) == _files(b)


def test_refuses_to_overwrite_unless_asked(saved, fed):
    with pytest.raises(FileExistsError, match="overwrite"):
        save_partition(fed, saved)
    save_partition(fed, saved, overwrite=True)
    assert load_partition(saved).num_clients == 3
    assert [p.name for p in saved.parent.iterdir()] == ["part"]


def test_missing_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        load_partition(tmp_path / "nope")


def test_missing_meta(saved):
    (saved / "META.json").unlink()
    with pytest.raises(PartitionFormatError, match="META.json is missing"):
        load_partition(saved)


def test_corrupt_meta_json(saved):
    (saved / "META.json").write_text('{"format": "fedgraph.partition", ')
    with pytest.raises(PartitionFormatError, match="corrupt JSON"):
        load_partition(saved)


def _edit_meta(path, **changes):
    meta = json.loads((path / "META.json").read_text())
    meta.update(changes)
    (path / "META.json").write_text(json.dumps(meta))


def test_wrong_version(saved):
    _edit_meta(saved, format_version=99)
    with pytest.raises(
        PartitionFormatError, match=r"unsupported `format_version` \(got 99"
    ):
        load_partition(saved)


def test_wrong_format_field(saved):
    _edit_meta(saved, format="something-else")
    with pytest.raises(PartitionFormatError, match="`format` must be"):
        load_partition(saved)


def test_unknown_kind(saved):
    _edit_meta(saved, kind="graph-of-cats")
    with pytest.raises(PartitionFormatError, match="unknown `kind`"):
        load_partition(saved)


def test_missing_client(saved):
    import shutil

    shutil.rmtree(saved / "client1")
    with pytest.raises(
        PartitionFormatError, match="client folder `client1` is missing"
    ):
        load_partition(saved)


def test_missing_file(saved):
    (saved / "client2" / "valid.txt").unlink()
    with pytest.raises(
        PartitionFormatError, match="file `client2/valid.txt` is missing"
    ):
        load_partition(saved)


def test_truncated_file(saved):
    f = saved / "client0" / "train.txt"
    data = f.read_bytes()
    f.write_bytes(data[: len(data) // 2])
    with pytest.raises(PartitionFormatError, match="train.txt`: checksum mismatch"):
        load_partition(saved)


def test_modified_file(saved):
    f = saved / "ids" / "client1" / "entity_ids.txt"
    f.write_text(f.read_text().replace("1", "2", 1))
    with pytest.raises(PartitionFormatError, match="checksum mismatch"):
        load_partition(saved)


def test_client_count_mismatch(saved):
    meta = json.loads((saved / "META.json").read_text())
    _edit_meta(saved, num_clients=meta["num_clients"] + 1)
    with pytest.raises(PartitionFormatError, match="`num_clients`=4 but 3 clients"):
        read_meta(saved)


def test_size_mismatch_after_valid_checksum(saved):
    # The files are intact but META.json lies about a split size.
    meta = json.loads((saved / "META.json").read_text())
    meta["clients"][0]["splits"]["train"] += 1
    (saved / "META.json").write_text(json.dumps(meta))
    with pytest.raises(PartitionFormatError, match="triples but META.json says"):
        load_partition(saved)


def test_names_with_newlines_rejected(fed, tmp_path):
    fed.entity_names[0] = "bad\nname"
    with pytest.raises(ValueError, match="newline"):
        save_partition(fed, tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_register_another_kind(tmp_path):
    from dataclasses import dataclass, field

    from fedgraph.partition.io import KINDS, PartitionKind, register_kind

    @dataclass
    class Toy:
        values: list
        meta: dict = field(default_factory=dict)

    def write(obj, folder):
        (folder / "client0").mkdir()
        (folder / "client0" / "values.txt").write_text(" ".join(map(str, obj.values)))
        return {"clients": [{"dir": "client0"}]}

    def read(folder, meta):
        return Toy(
            [int(v) for v in (folder / "client0" / "values.txt").read_text().split()]
        )

    register_kind(PartitionKind("toy", Toy, write, read))
    try:
        path = save_partition(Toy([1, 2, 3], meta={"seed": 5}), tmp_path / "toy")
        meta = read_meta(path)
        assert meta["kind"] == "toy" and meta["seed"] == 5 and meta["num_clients"] == 1
        assert load_partition(path).values == [1, 2, 3]
        (path / "client0" / "values.txt").write_text("1 2")
        with pytest.raises(PartitionFormatError, match="checksum mismatch"):
            load_partition(path)
    finally:
        del KINDS["toy"]


def test_overwrite_replaces_only_a_fedgraph_partition(saved, fed, tmp_path):
    other = tmp_path / "mine"
    other.mkdir()
    (other / "thesis.tex").write_text("x")
    with pytest.raises(ValueError, match="no META.json"):
        save_partition(fed, other, overwrite=True)
    assert (other / "thesis.tex").read_text() == "x"
    (saved / "client0" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="client0/notes.txt"):
        save_partition(fed, saved, overwrite=True)
    assert (saved / "client0" / "notes.txt").read_text() == "mine"
    (other / "META.json").write_text('{"format": "someone.else"}')
    with pytest.raises(ValueError, match="META.json is not fedgraph's"):
        save_partition(fed, other, overwrite=True)
