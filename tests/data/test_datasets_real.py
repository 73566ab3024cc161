r"""The numbers of issue 2, on the published files (``FEDGRAPH_DATA``)."""

import pytest

from fedgraph.data import load_dataset

pytestmark = pytest.mark.dataset


def test_fb15k_237():
    kg = load_dataset("fb15k-237")
    assert (kg.num_entities, kg.num_relations) == (14541, 237)
    assert kg.stats()["triples"] == {"train": 272115, "valid": 17535, "test": 20466}
    # First line of train.txt: /m/027rn  /location/country/form_of_government  /m/06cx9
    h, r, t = kg.triples("train")[0].tolist()
    assert kg.entity_names[h] == "/m/027rn" and kg.entity_names[t] == "/m/06cx9"
    assert kg.relation_names[r] == "/location/country/form_of_government"
    assert (h, t) == (0, 1)  # first-seen ids
    assert not any(n.endswith("\r") for n in kg.entity_names)


def test_aliases_resolve_to_the_same_dataset():
    a, b = load_dataset("FB15k_237"), load_dataset("fb15k237")
    assert a.num_entities == b.num_entities == 14541


@pytest.mark.parametrize(
    "name,stats",
    [
        ("nations", (14, 55, 1592, 199, 201)),
        ("kinship", (104, 25, 8544, 1068, 1074)),
        ("umls", (135, 46, 5216, 652, 661)),
    ],
)
def test_small_kgs(name, stats):
    kg = load_dataset(name)
    s = kg.stats()
    assert (s["entities"], s["relations"], *s["triples"].values()) == stats


def test_fedlu_c3():
    fed = load_dataset("fedlu-fb15k-237-c3")
    assert fed.num_clients == 3
    assert [s.graph.num_triples("train") for s in fed] == [44245, 12007, 191840]
    assert [s.graph.num_triples("unlearn") for s in fed] == [443, 121, 1919]
    assert fed.num_relations == 237
    # Every client triple maps back to the same names globally.
    s = fed[1]
    g = s.global_triples("train")[:5]
    loc = s.graph.triples("train")[:5]
    assert [fed.entity_names[i] for i in g[:, 0].tolist()] == [
        s.graph.entity_names[i] for i in loc[:, 0].tolist()
    ]


def test_fedlu_c10():
    fed = load_dataset("FedLU_C10")
    assert fed.num_clients == 10 and fed.num_entities <= 14541
    assert sum(s.graph.num_triples("train") for s in fed) > 0


def test_nell_995_counts_and_column_order():
    kg = load_dataset("nell-995")
    assert kg.stats()["triples"] == {"train": 149678, "valid": 543, "test": 3992}
    assert (kg.num_entities, kg.num_relations) == (75492, 200)
    # First line of test2id.txt is "13933 13932 27" (h t r): Louis Camilleri
    # leads Altria; read as h r t the relation id 13932 would not even exist.
    h, r, t = kg.triples("test")[0].tolist()
    assert kg.entity_names[h] == "concept_ceo_louis_c__camilleri"
    assert kg.relation_names[r] == "concept:personleadsorganization"
    assert kg.entity_names[t] == "concept_biotechcompany_altria_group"
    assert (h, r, t) == (13933, 27, 13932)
