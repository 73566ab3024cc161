import pytest
import torch

from fedgraph.data import load_dataset, load_federated_folder
from fedgraph.data.shard import FederatedKG


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def part(tmp_path):
    write(tmp_path / "client0" / "train.txt", "x\tp\ty\ny\tq\tz\n")
    write(tmp_path / "client0" / "valid.txt", "z\tp\tx\n")
    write(tmp_path / "client0" / "test.txt", "x\tq\tz\n")
    write(tmp_path / "client0" / "unlearn.txt", "x\tp\ty\n")
    write(tmp_path / "client1" / "train.txt", "w\tr\tz\nz\tr\tv\n")
    write(tmp_path / "client1" / "valid.txt", "v\tr\tw\n")
    write(tmp_path / "client1" / "test.txt", "w\tr\tv\n")
    return tmp_path


def test_global_and_local_ids(part):
    fed = load_federated_folder(part)
    assert isinstance(fed, FederatedKG) and fed.num_clients == 2
    # Global: first seen over client0 (train, valid, test, unlearn), client1.
    assert fed.entity_names == ["x", "y", "z", "w", "v"]
    assert fed.relation_names == ["p", "q", "r"]
    c0, c1 = fed.shards
    assert c0.graph.split_names == ["train", "valid", "test", "unlearn"]
    assert c1.graph.split_names == ["train", "valid", "test"]
    # Local ids are ranks of global ids: the maps are increasing.
    assert c0.entity_ids.tolist() == [0, 1, 2]
    assert c1.entity_ids.tolist() == [2, 3, 4]
    assert c1.relation_ids.tolist() == [2]
    assert c1.graph.entity_names == ["z", "w", "v"]
    # w r z  ->  local (1, 0, 0); global (3, 2, 2)
    assert c1.graph.triples("train").tolist() == [[1, 0, 0], [0, 0, 2]]
    assert c1.global_triples("train").tolist() == [[3, 2, 2], [2, 2, 4]]
    assert c0.global_triples("unlearn").tolist() == [[0, 0, 1]]


def test_global_triples_round_trip_names(part):
    fed = load_federated_folder(part)
    for shard in fed:
        g = shard.global_triples("valid")
        loc = shard.graph.triples("valid")
        names_g = [fed.entity_names[i] for i in g[:, 0].tolist()]
        names_l = [shard.graph.entity_names[i] for i in loc[:, 0].tolist()]
        assert names_g == names_l


def test_numbered_folders_and_load_dataset_path(part, tmp_path):
    fed = load_dataset(part)  # a Path → folder loader
    assert fed.num_clients == 2
    (part / "client1").rename(part / "1")
    assert load_federated_folder(part).num_clients == 2


def test_bad_layouts(part, tmp_path):
    (part / "client1").rename(part / "client2")
    with pytest.raises(ValueError, match="missing client1/"):
        load_federated_folder(part)
    with pytest.raises(FileNotFoundError, match="no client folders"):
        load_federated_folder(tmp_path / "client0")
    (part / "client2").rename(part / "client1")
    (part / "client0" / "test.txt").unlink()
    with pytest.raises(FileNotFoundError, match="missing test.txt"):
        load_federated_folder(part)


def test_shards_are_consistent(part):
    fed = load_federated_folder(part)
    for s in fed:
        assert torch.all(s.entity_ids[1:] > s.entity_ids[:-1])


def test_saved_partition_folder_is_read_by_load_partition(part, tmp_path):
    from fedgraph.partition import save_partition

    fed = load_federated_folder(part)
    out = tmp_path / "saved"
    save_partition(fed, out)
    back = load_dataset(out)
    assert back.num_clients == 2 and back.num_entities == fed.num_entities
    for a, b in zip(fed, back, strict=True):
        assert torch.equal(a.global_triples("train"), b.global_triples("train"))
