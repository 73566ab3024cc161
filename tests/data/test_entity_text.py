import pytest
import torch

from fedgraph.data import KnowledgeGraph, dbpedia_title, entity_titles


@pytest.mark.parametrize(
    "uri, title",
    [
        ("http://dbpedia.org/resource/1._FC_Magdeburg", "1. FC Magdeburg"),
        (
            "http://dbpedia.org/resource/Who's_Afraid_of_Virginia_Woolf%3F_(film)",
            "Who's Afraid of Virginia Woolf? (film)",
        ),
        ("http://dbpedia.org/resource/AC/DC", "AC/DC"),
        ("http://dbpedia.org/resource/50/50_(2011_film)", "50/50 (2011 film)"),
        ("http://el.dbpedia.org/resource/Αθήνα", "Αθήνα"),
        ("http://el.dbpedia.org/resource/%CE%91%CE%B8%CE%AE%CE%BD%CE%B1", "Αθήνα"),
        ("http://ja.dbpedia.org/resource/(500)日のサマー", "(500)日のサマー"),
        ("http://example.org/ontology#Some_Thing", "Some Thing"),
        ("Plain_title", "Plain title"),
    ],
)
def test_dbpedia_title(uri, title):
    assert dbpedia_title(uri) == title


def test_entity_titles_follow_entity_ids():
    g = KnowledgeGraph(
        {"train": torch.tensor([[0, 0, 1]])},
        num_entities=2,
        num_relations=1,
        entity_names=[
            "http://dbpedia.org/resource/A_b",
            "http://dbpedia.org/resource/C",
        ],
    )
    assert entity_titles(g) == ["A b", "C"]
    with pytest.raises(ValueError, match="entity_names"):
        entity_titles(KnowledgeGraph({"train": g.triples()}, 2, 1))


@pytest.mark.dataset
def test_dbp5l_titles_are_non_empty_and_decoded(data_root):
    from fedgraph.data import read_dbp5l

    mkg = read_dbp5l(data_root / "dbp-5l", languages=("el", "en"))
    el, en = entity_titles(mkg["el"]), entity_titles(mkg["en"])
    assert len(el) == 5231 and len(en) == 13996
    assert el[1] == "1. ΦΚ Μαγδεβούργο" and en[0] == "500 Days of Summer"
    assert all(t and "_" not in t and "%3F" not in t for t in el + en)
