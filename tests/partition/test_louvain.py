r"""The Louvain relation partition: its communities, its own option
``resolution``, and that the registry, ``fedgraph partition`` and the docs
tables find it with no other edit."""

import json
import math

import pytest
import torch
from partition_kgs import random_kg, two_domain_kg

import fedgraph.data
from fedgraph.cli.main import main
from fedgraph.partition import partitioners
from fedgraph.partition.louvain import LouvainRelationPartitioner


def _triples(fed):
    return sorted(
        tuple(row)
        for s in fed.shards
        for split in ("train", "valid", "test")
        for row in s.global_triples(split).tolist()
    )


def test_two_domains_are_two_communities_and_two_clients():
    kg = two_domain_kg()
    part = LouvainRelationPartitioner(2, seed=0)
    assert part.communities(kg) == [[0, 1, 2], [3, 4]]
    fed = part(kg)
    assert fed.meta["relation_clients"] == [0, 0, 0, 1, 1]
    assert fed.meta["params"]["resolution"] == 1.0
    assert _triples(fed) == sorted(map(tuple, kg.all_triples().tolist()))
    again = LouvainRelationPartitioner(2, seed=0)(kg)
    assert _triples(again) == _triples(fed)
    for a, b in zip(fed.shards, again.shards, strict=True):
        assert torch.equal(a.graph.triples("train"), b.graph.triples("train"))


def test_resolution_sets_the_number_of_communities():
    kg = random_kg(num_entities=60, num_relations=12, num_triples=500)
    assert len(LouvainRelationPartitioner(2).communities(kg)) == 1
    with pytest.raises(ValueError) as exc:
        LouvainRelationPartitioner(2, resolution=1.0)(kg)
    assert str(exc.value) == (
        "Louvain found 1 communities of the relation graph at `resolution`=1.0, "
        "fewer than `num_clients`=2: raise `resolution` or lower `num_clients`"
    )
    part = LouvainRelationPartitioner(3, resolution=2.0)
    assert part.communities(kg) == [[r] for r in range(12)]
    owner = part.assign(kg)
    sizes = torch.bincount(kg.all_triples()[:, 1], minlength=12)
    load = torch.zeros(3, dtype=torch.long).index_add_(0, owner, sizes)
    assert owner[0] == 0 and int(load.max() - load.min()) <= int(sizes.max())


@pytest.mark.parametrize(
    "value, message",
    [
        (0, "`resolution` must be a positive number (got 0)"),
        (math.nan, "`resolution` must be a positive number (got nan)"),
        ("high", "`resolution` must be a number (got 'high')"),
    ],
)
def test_bad_resolution_is_refused(value, message):
    with pytest.raises(ValueError) as exc:
        LouvainRelationPartitioner(2, resolution=value)
    assert str(exc.value) == message


def test_louvain_is_registered_with_its_option():
    from fedgraph.cli.reference import partitioners_table

    assert partitioners.resolve_class("louvain") is LouvainRelationPartitioner
    assert "louvain" in partitioners.names()
    assert partitioners.hyperparameters("louvain") == {
        "resolution": 1.0,
        "ratios": (0.8, 0.1, 0.1),
        "splits": None,
    }
    assert repr(partitioners.resolve("Louvain-Relation", 2, resolution=0.5)) == (
        "LouvainRelationPartitioner(num_clients=2, seed=0, resolution=0.5, "
        "ratios=[0.8, 0.1, 0.1], splits=None)"
    )
    assert (
        "| `louvain` | `LouvainRelationPartitioner` | `resolution=1.0`, "
        "`ratios=(0.8, 0.1, 0.1)`, `splits=None` |"
    ) in partitioners_table()


def test_fedgraph_partition_runs_louvain_with_its_option(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(fedgraph.data, "load_dataset", lambda *a, **k: two_domain_kg())
    with pytest.raises(SystemExit):
        main(["partition", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "louvain" in help_text
    assert "louvain: resolution (1.0), ratios ((0.8, 0.1, 0.1)), splits (None)" in (
        help_text
    )
    out = tmp_path / "louvain2"
    argv = ["partition", "two", "--strategy", "louvain", "--clients", "2",
            "--out", str(out), "--quiet"]  # fmt: skip
    assert main([*argv, "--partition-kwargs", "resolution=0.5"]) == 0
    meta = json.loads((out / "META.json").read_text())
    assert meta["partitioner"] == "LouvainRelationPartitioner"
    assert meta["params"]["resolution"] == 0.5
    bad = tmp_path / "bad"
    argv[-2] = str(bad)
    assert main([*argv, "--partition-kwargs", "resolution=0"]) == 2
    assert "`resolution` must be a positive number (got 0.0)" in capsys.readouterr().err
    assert not bad.exists()
