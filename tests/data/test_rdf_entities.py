r"""RDF benchmark loader: a hand-made archive, bad inputs, and the real files."""

from __future__ import annotations

import gzip
import io
import tarfile

import pytest
import torch

from fedgraph.data.rdf_entities import RDF_DATASETS, build_rdf_graph, load_rdf

A = "http://www.aifb.uni-karlsruhe.de"
P = "http://swrc.ontoware.org/ontology#"
NT = f"""<{A}/Personen/viewPersonOWL/id1instance> <{P}publication> <{A}/Publikationen/viewPublikationOWL/id7instance> .
<{A}/Personen/viewPersonOWL/id2instance> <{P}publication> <{A}/Publikationen/viewPublikationOWL/id7instance> .
<{A}/Personen/viewPersonOWL/id3instance> <{P}name> "Ann" .
<{A}/Personen/viewPersonOWL/id1instance> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{P}Person> .
_:b0 <http://www.w3.org/2002/07/owl#onProperty> <{P}name> .
<{A}/Personen/viewPersonOWL/id2instance> <{P}name> "Bob"@en .
"""
TRAIN = f"person\tid\tlabel\n{A}/Personen/viewPersonOWL/id1instance\t1\tg1\n{A}/Personen/viewPersonOWL/id2instance\t2\tg2\n"
TEST = f"person\tid\tlabel\n{A}/Personen/viewPersonOWL/id3instance\t3\tg1\n"


def make_archive(path, nt=NT, train=TRAIN, test=TEST, truncate=None):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in (
            ("tiny_stripped.nt.gz", gzip.compress(nt.encode())),
            ("trainingSet.tsv", train.encode()),
            ("testSet.tsv", test.encode()),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    raw = buf.getvalue()
    path.write_bytes(raw[:truncate] if truncate else raw)
    return path


def test_tiny_archive(tmp_path):
    g = build_rdf_graph(make_archive(tmp_path / "tiny.tgz"), RDF_DATASETS["aifb"])
    # nodes: 3 persons, 1 publication, 2 literals, 1 class URI, 1 blank node, name URI
    assert g.num_nodes == 9 and g.num_edges == 6 and g.num_relations == 4
    assert g.node_names == sorted(g.node_names)
    assert g.category_counts() == {
        "Personen": 3,
        "Publikationen": 1,
        "SCHEMA": 2,
        "_BNode": 1,
        "_Literal": 2,
    }
    assert g.core_types == ["Personen", "Publikationen", "_Literal"]
    assert g.class_names == ["g1", "g2"]
    pid = {n: i for i, n in enumerate(g.node_names)}
    p1 = pid[f"<{A}/Personen/viewPersonOWL/id1instance>"]
    p3 = pid[f"<{A}/Personen/viewPersonOWL/id3instance>"]
    assert g.y[p1] == 0 and bool(g.train_mask[p1]) and bool(g.test_mask[p3])
    assert int(g.labelled_mask.sum()) == 3
    assert '"Bob"@en' in g.node_names and "_:b0" in g.node_names
    # The homogeneous view has each statement and its inverse (2r, 2r + 1).
    h = g.homogeneous()
    assert h.edge_index.size(1) == 12 and h.num_nodes == 9
    assert torch.equal(h.edge_index[:, 6:], g.edge_index.flip(0))
    assert torch.equal(h.edge_type[:6] + 1, h.edge_type[6:])
    # The typed view holds every node once, in the right category.
    d = g.data
    assert sum(d[t].num_nodes for t in d.node_types) == 9
    assert sum(d[e].edge_index.size(1) for e in d.edge_types) == 6
    assert torch.equal(
        torch.sort(torch.cat([d[t].node_id for t in d.node_types])).values,
        torch.arange(9),
    )


def test_deterministic_and_cached(tmp_path, monkeypatch):
    (tmp_path / "rdf").mkdir()
    path = make_archive(tmp_path / "rdf" / "aifb.tgz")
    a = build_rdf_graph(path, RDF_DATASETS["aifb"])
    b = build_rdf_graph(path, RDF_DATASETS["aifb"])
    assert a.node_names == b.node_names and torch.equal(a.edge_index, b.edge_index)
    with pytest.raises(ValueError, match="SHA-256"):  # not the published archive
        load_rdf("aifb", root=tmp_path)


def test_valid_split(tmp_path):
    g = build_rdf_graph(make_archive(tmp_path / "t.tgz"), RDF_DATASETS["aifb"])
    v = g.with_valid_split(0.5, seed=3)
    assert int(v.valid_mask.sum()) == 1 and int(v.train_mask.sum()) == 1
    assert not bool((v.valid_mask & v.train_mask).any())
    assert torch.equal(v.valid_mask, g.with_valid_split(0.5, seed=3).valid_mask)
    with pytest.raises(ValueError, match="valid_ratio"):
        g.with_valid_split(1.0)


def test_truncated_archive(tmp_path):
    path = make_archive(tmp_path / "t.tgz", truncate=300)
    with pytest.raises(ValueError, match="truncated or corrupt"):
        build_rdf_graph(path, RDF_DATASETS["aifb"])


def test_label_names_absent_entity(tmp_path):
    train = TRAIN + f"{A}/Personen/viewPersonOWL/id99instance\t9\tg1\n"
    path = make_archive(tmp_path / "t.tgz", train=train)
    with pytest.raises(
        ValueError, match=r"trainingSet.tsv' line 4: entity .*id99instance"
    ):
        build_rdf_graph(path, RDF_DATASETS["aifb"])


def test_malformed_ntriples_names_line(tmp_path):
    nt = NT + "<a> <b> this is not rdf .\n"
    with pytest.raises(ValueError, match=r"tiny_stripped.nt.gz' line 7"):
        build_rdf_graph(make_archive(tmp_path / "t.tgz", nt=nt), RDF_DATASETS["aifb"])


def test_unknown_and_missing(tmp_path):
    with pytest.raises(ValueError, match="Unknown RDF dataset"):
        load_rdf("cora", root=tmp_path)
    with pytest.raises(FileNotFoundError, match="https://data.dgl.ai/dataset/bgs.tgz"):
        load_rdf("bgs", root=tmp_path)


@pytest.mark.dataset
def test_aifb_real(data_root):
    g = load_rdf("aifb", root=data_root)
    s = g.stats()
    assert (s["nodes"], s["triples"], s["predicates"], s["classes"]) == (
        8285,
        29043,
        45,
        4,
    )
    assert s["labelled"] == {"train": 140, "valid": 0, "test": 36}
    assert g.core_types == [
        "Forschungsgebiete",
        "Forschungsgruppen",
        "Kooperationen",
        "Personen",
        "Projekte",
        "Publikationen",
        "_Literal",
    ]
    assert g.target_types == ["Personen"]
    assert g.homogeneous().edge_index.size(1) == 2 * 29043
    again = load_rdf("aifb", root=data_root)  # from the cache
    assert again.node_names == g.node_names and torch.equal(again.y, g.y)


@pytest.mark.dataset
def test_mutag_real(data_root):
    g = load_rdf("mutag", root=data_root, valid_ratio=0.2, seed=1)
    s = g.stats()
    assert (s["nodes"], s["triples"], s["predicates"], s["classes"]) == (
        23644,
        74227,
        23,
        2,
    )
    assert s["labelled"] == {"train": 218, "valid": 54, "test": 68}
    assert g.core_types == ["SCHEMA", "_Literal", "bond", "d", "hasStructure"]
