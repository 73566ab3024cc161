"""Real-data checks of the partitioners against FedE and FedLU (FB15k-237)."""

import time

import numpy as np
import pytest
import torch
from partition_kgs import random_kg

from fedgraph.partition import (
    RandomRelationPartitioner,
    SpectralRelationPartitioner,
    benchmark_names,
    describe,
    load_benchmark,
)

FEDE_MEAN_ENTITIES = {3: 12595.3, 5: 11260.4, 10: 8340.1}  # FedE Table 2


@pytest.fixture(scope="module")
def fb15k237(data_root, tmp_path_factory):
    from fedgraph.data import load_dataset

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FEDGRAPH_CACHE", str(tmp_path_factory.mktemp("fbcache")))
        return load_dataset("fb15k-237", root=data_root)


def _published_relation_labels(fed, graph):
    labels = torch.full((graph.num_relations,), -1)
    for shard in fed:
        names = [fed.relation_names[r] for r in shard.relation_ids.tolist()]
        labels[[graph.relation_to_id[n] for n in names]] = shard.client_id
    return labels


def test_recipes_are_listed():
    names = benchmark_names()
    for k in (3, 5, 10):
        assert {f"FB15k-237-Fed{k}", f"FB15k-237-C{k}", f"FB15k-237-R{k}"} <= set(names)
    assert {"NELL-995-Fed3", "AIFB-Fed10", "MUTAG-Fed10"} <= set(names)
    with pytest.raises(ValueError, match="Unknown benchmark `nope`"):
        load_benchmark("nope")


@pytest.mark.dataset
@pytest.mark.parametrize("k", [3, 5, 10])
def test_random_relation_split_fb15k237(fb15k237, k):
    fed = RandomRelationPartitioner(k, seed=0)(fb15k237)
    rel_sets = [set(s.relation_ids.tolist()) for s in fed]
    assert sum(map(len, rel_sets)) == 237 and set().union(*rel_sets) == set(range(237))
    assert max(map(len, rel_sets)) - min(map(len, rel_sets)) <= 1
    total = sum(s.graph.num_triples() for s in fed)
    assert total == fb15k237.num_triples() == 310_116
    mean_entities = np.mean([s.num_entities for s in fed])
    assert abs(mean_entities / FEDE_MEAN_ENTITIES[k] - 1) < 0.06
    for s in fed:
        n = s.graph.num_triples()
        assert (
            s.graph.num_triples("valid")
            == s.graph.num_triples("test")
            == round(0.1 * n)
        )


@pytest.mark.dataset
def test_spectral_c3_reproduces_fedlu(fb15k237, data_root):
    from sklearn.metrics import adjusted_rand_score

    from fedgraph.data import load_federated_folder

    t0 = time.perf_counter()
    fed = SpectralRelationPartitioner(3, seed=0)(fb15k237)
    elapsed = time.perf_counter() - t0
    assert elapsed < 30
    sizes = sorted(s.graph.num_triples() for s in fed)
    assert sizes == [15_009, 55_307, 239_800]  # FedLU's C3 clients incl. valid+test
    published = load_federated_folder(data_root / "fedlu-fb15k-237" / "C3")
    ours = torch.tensor(fed.meta["relation_clients"])
    theirs = _published_relation_labels(published, fb15k237)
    assert adjusted_rand_score(theirs.numpy(), ours.numpy()) == 1.0


@pytest.mark.dataset
def test_published_c3_loads(data_root):
    fed = load_benchmark("FB15k-237-C3-published", root=data_root)
    assert [s.graph.num_triples("train") for s in fed] == [44_245, 12_007, 191_840]
    st = describe(fed, clustering=False)
    assert [c["triples"]["valid"] for c in st["clients"]] == [5_531, 1_501, 23_980]
    assert st["overall"]["relations"] == 237


@pytest.mark.dataset
def test_load_benchmark_builds_then_reads_cache(data_root):
    a = load_benchmark("FB15k-237-Fed3", root=data_root)
    b = load_benchmark("FB15k-237-Fed3", root=data_root)
    assert (
        a.meta["benchmark"] == "FB15k-237-Fed3" and b.meta["recipe"] == a.meta["recipe"]
    )
    assert a.meta["partitioner"] == "RandomRelationPartitioner"
    for x, y in zip(a, b, strict=True):
        assert torch.equal(x.graph.triples("test"), y.graph.triples("test"))


def test_recipe_build_cache_and_rebuild(tmp_path, monkeypatch):
    import json

    import fedgraph.partition.benchmarks

    calls = []

    def fake_load(name, root=None, **kwargs):
        calls.append(name)
        return random_kg(num_relations=6)

    monkeypatch.setattr(fedgraph.partition.benchmarks, "load_dataset", fake_load)
    monkeypatch.setenv("FEDGRAPH_RECIPES", str(tmp_path))
    recipe = {
        "name": "Toy-Fed2",
        "source": "toy",
        "strategy": "relation",
        "num_clients": 2,
        "seed": 3,
    }
    (tmp_path / "toy-fed2.json").write_text(json.dumps(recipe))
    assert benchmark_names() == ["Toy-Fed2"]
    a = load_benchmark("toy-fed2")
    b = load_benchmark("TOY-FED2")  # from the cache: no second load
    assert calls == ["toy"] and a.meta["recipe"] == recipe
    assert a.meta["seed"] == 3 and b.meta["partitioner"] == "RandomRelationPartitioner"
    for x, y in zip(a, b, strict=True):
        assert torch.equal(x.graph.triples("train"), y.graph.triples("train"))
    recipe["seed"] = 4  # a changed recipe is rebuilt
    (tmp_path / "toy-fed2.json").write_text(json.dumps(recipe))
    c = load_benchmark("toy-fed2")
    assert calls == ["toy", "toy"] and c.meta["seed"] == 4


@pytest.mark.dataset
def test_dirichlet_split_fb15k237_into_100_clients(fb15k237):
    from fedgraph.partition import DirichletRelationPartitioner

    # the relation partitions stop at 237 clients of one relation each
    fed = DirichletRelationPartitioner(100, seed=0)(fb15k237)
    assert fed.num_clients == 100
    assert sum(s.graph.num_triples() for s in fed) == 310_116
    assert sum(fed.meta["client_sizes"]) == 310_116
    train = [s.graph.num_triples("train") for s in fed]
    assert min(train) >= 1_800  # documented: 1,892 … 4,537 (seed 0)
    assert min(s.num_relations for s in fed) > 100  # α = 0.5: many relations each
