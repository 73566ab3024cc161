r"""Data files are read strictly: one test per malformed-data finding.

The rule for invisible characters (``fedgraph/data/io.py``): a byte-order
mark opening a file is dropped and whitespace around a tab-separated field is
stripped, each with a :class:`~fedgraph.data.io.DataFormatWarning` naming the
file (and first line); neither ever creates an entity.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import tarfile
import warnings

import pytest
import torch

from fedgraph.cli.main import main
from fedgraph.data import read_triple_folder
from fedgraph.data.io import DataFormatError, DataFormatWarning
from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.data.openke import read_openke_ids
from fedgraph.data.rdf_entities import RDF_DATASETS, build_rdf_graph
from fedgraph.partition import (
    PartitionFormatError,
    RandomRelationPartitioner,
    load_partition,
    save_partition,
)

# A Nations-like folder: 4 countries, 3 relations.
TRAIN = (
    "usa\tembargo\tcuba\nussr\taid\tcuba\nchina\ttreaties\tussr\nusa\ttreaties\tchina\n"
)
VALID = "cuba\taid\tussr\n"
TEST = "china\tembargo\tusa\n"


def write_folder(path, train=TRAIN, valid=VALID, test=TEST):
    path.mkdir(parents=True, exist_ok=True)
    for name, text in (("train", train), ("valid", valid), ("test", test)):
        (path / f"{name}.txt").write_bytes(text.encode())
    return path


def read_quietly(path):
    r"""The folder's graph and the warnings reading it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kg = read_triple_folder(path)
    return kg, caught


def test_bom_at_start_of_train_is_dropped_with_a_warning(tmp_path):
    clean, _ = read_quietly(write_folder(tmp_path / "clean"))
    bom = write_folder(tmp_path / "bom", train="\ufeff" + TRAIN)  # as Notepad saves
    assert (bom / "train.txt").read_bytes().startswith(b"\xef\xbb\xbfusa\t")
    kg, caught = read_quietly(bom)
    assert kg.num_entities == clean.num_entities == 4  # not a 5th "\ufeffusa"
    assert kg.entity_names == ["usa", "cuba", "ussr", "china"]
    for split in ("train", "valid", "test"):
        assert torch.equal(kg.triples(split), clean.triples(split))
    assert [(w.category, str(w.message)) for w in caught] == [
        (
            DataFormatWarning,
            f"{bom / 'train.txt'}: starts with a UTF-8 byte-order mark (BOM); ignored",
        )
    ]


@pytest.mark.dataset
def test_bom_at_start_of_nations_train_keeps_14_entities(data_root, tmp_path):
    folder = shutil.copytree(data_root / "nations", tmp_path / "nations")
    train = folder / "train.txt"
    train.write_bytes(b"\xef\xbb\xbf" + train.read_bytes())
    kg, caught = read_quietly(folder)
    assert kg.num_entities == 14 and kg.num_relations == 55
    assert not any("\ufeff" in n for n in kg.entity_names)
    assert [w.category for w in caught] == [DataFormatWarning]


def test_a_bom_after_the_start_is_an_error_naming_the_line(tmp_path):
    folder = write_folder(tmp_path / "f", train=TRAIN + "\ufeffusa\taid\tcuba\n")
    with pytest.raises(DataFormatError) as exc:
        read_triple_folder(folder)
    assert str(exc.value) == (
        f"{folder / 'train.txt'}, line 5: byte-order mark (U+FEFF) after the "
        "start of the file (two files joined?)"
    )


def test_trailing_space_is_stripped_not_a_new_entity(tmp_path):
    padded = TRAIN.replace("usa\ttreaties", "usa \ttreaties") + "ussr\taid\tusa \n"
    folder = write_folder(tmp_path / "f", train=padded)
    kg, caught = read_quietly(folder)
    assert kg.num_entities == 4 and "usa " not in kg.entity_names
    assert kg.triples("train")[-1].tolist() == [2, 1, 0]  # ussr aid usa
    assert [(w.category, str(w.message)) for w in caught] == [
        (
            DataFormatWarning,
            f"{folder / 'train.txt'}, line 4: whitespace around a field "
            "('usa \\ttreaties\\tchina'); stripped on 2 line(s)",
        )
    ]


def test_test_triples_copied_into_train_are_flagged(tmp_path, capsys):
    folder = write_folder(tmp_path / "f", train=TRAIN + TEST + VALID + TEST)
    with pytest.warns(UserWarning) as record:
        kg = read_triple_folder(folder)
    messages = [str(w.message) for w in record if "also in" in str(w.message)]
    assert messages == [
        f"{folder / 'valid.txt'}: 1 triple(s) also in {folder / 'train.txt'} "
        "(first at line 1); kept, but a model that memorises the training set "
        "scores them perfectly",
        f"{folder / 'test.txt'}: 1 triple(s) also in {folder / 'train.txt'} "
        "(first at line 1); kept, but a model that memorises the training set "
        "scores them perfectly",
    ]
    assert kg.num_triples("test") == 1  # kept, only flagged
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["info", str(folder), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["in_train"] == {"valid": 1, "test": 1}


def test_clean_folder_reports_no_triples_in_train(tmp_path, capsys):
    folder = write_folder(tmp_path / "f")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a clean folder warns about nothing
        assert main(["info", str(folder), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["in_train"] == {"valid": 0, "test": 0}


def _partition(tmp_path):
    names = ["usa", "cuba", "ussr", "china", "india", "egypt"]
    train = torch.tensor([[0, 0, 1], [2, 1, 1], [3, 2, 2], [0, 2, 3], [4, 3, 5]])
    valid = torch.tensor([[1, 1, 2], [5, 3, 4]])
    test = torch.tensor([[3, 0, 0], [4, 3, 0]])
    kg = KnowledgeGraph(
        {"train": train, "valid": valid, "test": test},
        num_entities=6,
        num_relations=4,
        entity_names=names,
        relation_names=["embargo", "aid", "treaties", "trade"],
    )
    return save_partition(RandomRelationPartitioner(2, seed=0)(kg), tmp_path / "part")


def _rehash(folder, rel):
    meta_path = folder / "META.json"
    meta = json.loads(meta_path.read_text())
    digest = hashlib.sha256((folder / rel).read_bytes()).hexdigest()
    meta["files"][rel] = "sha256:" + digest
    meta_path.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")


def test_non_injective_entity_ids_is_refused(tmp_path):
    part = _partition(tmp_path)
    ids_file = part / "ids" / "client0" / "entity_ids.txt"
    ids = ids_file.read_text().split("\n")[:-1]
    assert len(ids) >= 2
    ids[-1] = ids[0]  # two local entities → one global id
    ids_file.write_text("\n".join(ids) + "\n")
    _rehash(part, "ids/client0/entity_ids.txt")  # checksums alone would not catch it
    with pytest.raises(PartitionFormatError) as exc:
        load_partition(part)
    assert str(exc.value) == (
        f"{ids_file}, line {len(ids)}: global id {ids[0]} is listed twice "
        "(also on line 1); an id map must be one-to-one"
    )


def test_non_injective_openke_entity2id_is_refused(tmp_path):
    path = tmp_path / "entity2id.txt"
    path.write_text("3\nusa\t0\ncuba\t1\nusa\t2\n")  # one name, two ids
    with pytest.raises(DataFormatError) as exc:
        read_openke_ids(path)
    assert str(exc.value) == (
        f"{path}, line 4: name 'usa' is listed twice (also on line 2, with ids 0 and 2)"
    )
    path.write_text("3\nusa\t0\ncuba\t1\nussr\t1\n")  # two names, one id
    with pytest.raises(DataFormatError) as exc:
        read_openke_ids(path)
    assert str(exc.value) == (
        f"{path}, line 4: id 1 is used twice (also on line 3: 'cuba' and 'ussr')"
    )


def test_partition_with_an_unlisted_client_folder_is_refused(tmp_path):
    part = _partition(tmp_path)
    assert json.loads((part / "META.json").read_text())["num_clients"] == 2
    shutil.copytree(part / "client1", part / "client2")
    with pytest.raises(PartitionFormatError) as exc:
        load_partition(part)
    assert str(exc.value) == (
        f"`{part}`: META.json lists 2 clients (`num_clients`) but the folder also "
        "holds client2/; a partition is only read whole, as it was saved"
    )


def fake_archive(path, nt):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in (
            ("aifb_stripped.nt.gz", gzip.compress(nt)),
            ("trainingSet.tsv", b"person\tid\tlabel\n"),
            ("testSet.tsv", b"person\tid\tlabel\n"),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf.getvalue())
    return path


def test_relabelled_aifb_archive_is_refused_by_info(tmp_path, monkeypatch, capsys):
    archive = fake_archive(tmp_path / "rdf" / "aifb.tgz", b"<a:s> <a:p> <a:o> .\n")
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    expected = (
        f"Archive '{archive}' has SHA-256 {digest}, expected "
        f"{RDF_DATASETS['aifb'].sha256}: the file is corrupt or a different release"
    )
    assert main(["info", "aifb", "--root", str(tmp_path), "--no-download"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith(expected)
    monkeypatch.setenv("FEDGRAPH_DATA", str(tmp_path))  # the data root, by env
    assert main(["info", "aifb"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith(expected)
    from fedgraph.data import load_dataset

    with pytest.raises(ValueError, match="SHA-256"):
        load_dataset("aifb")


def test_non_utf8_ntriples_error_names_the_real_line(tmp_path):
    lines = [f"<a:s{i}> <a:p> <a:o{i}> .\n".encode() for i in range(40)]
    lines[24] = b'<a:s24> <a:p> "caf\xe9" .\n'  # Latin-1 byte on line 25
    archive = fake_archive(tmp_path / "x.tgz", b"".join(lines))
    with pytest.raises(ValueError) as exc:
        build_rdf_graph(archive, RDF_DATASETS["aifb"])
    message = str(exc.value)
    assert "\n" not in message
    assert message.startswith(
        f"{archive}:aifb_stripped.nt.gz, line 25: not UTF-8 text (byte 0xe9 at offset"
    )


def test_non_utf8_triple_file_error_names_the_real_line(tmp_path):
    rows = "".join(f"e{i}\tr\te{i + 1}\n" for i in range(30)).encode()
    lines = rows.split(b"\n")
    lines[24] = b"caf\xe9\tr\te25"
    folder = write_folder(tmp_path / "f")
    (folder / "train.txt").write_bytes(b"\n".join(lines))
    with pytest.raises(DataFormatError, match=r"train\.txt, line 25: not UTF-8"):
        read_triple_folder(folder)


def test_rdf_partition_with_an_extra_client_folder_is_refused(tmp_path):
    from fedgraph.data.rdf_graph import RDFGraph
    from fedgraph.partition import RDFTypePartitioner
    from fedgraph.partition.rdf_shard import FederatedRDF

    n = 12
    src = torch.arange(n)
    g = RDFGraph(
        torch.stack([src, (src + 1) % n]),
        torch.zeros(n, dtype=torch.long),
        torch.tensor([0, 1] * 6),
        torch.tensor([0, 1] * 3 + [-1] * 6),
        {"train_mask": torch.tensor([True] * 4 + [False] * 8)},
        [f"<n{i:02d}>" for i in range(n)],
        ["r0"],
        ["person", "paper"],
        ["a", "b"],
        core_types=["person", "paper"],
        name="toy",
    )
    fed = RDFTypePartitioner(2, num_types=2, seed=0)(g)
    fed.save(tmp_path / "p")
    shutil.copytree(tmp_path / "p" / "client1", tmp_path / "p" / "client2")
    with pytest.raises(ValueError) as err:
        FederatedRDF.load(tmp_path / "p")
    assert str(err.value) == (
        f"`{tmp_path / 'p'}`: META.json lists 2 clients (`num_clients`) "
        "but the folder also holds client2/"
    )
