r"""The registered RDF datasets: registry, info stats and the download path."""

from __future__ import annotations

import hashlib

import pytest
from test_rdf_entities import make_archive

from fedgraph.data import AIFB, datasets, load_dataset
from fedgraph.data.dataset import RemoteFile
from fedgraph.data.rdf_graph import RDFGraph


def test_registered():
    names = [d.name for d in datasets]
    assert {"aifb", "mutag", "bgs", "am"} <= set(names)
    assert (
        AIFB.kind == "rdf"
        and AIFB.remote_files[0].url == "https://data.dgl.ai/dataset/aifb.tgz"
    )


def test_download_from_file_url(tmp_path):
    src = make_archive(tmp_path / "src.tgz")
    sha = hashlib.sha256(src.read_bytes()).hexdigest()

    class Tiny(AIFB):
        name = "tiny-aifb"
        remote_files = (RemoteFile("aifb.tgz", src.as_uri(), sha),)

    ds = Tiny(root=tmp_path / "data")
    g = ds.get()
    assert isinstance(g, RDFGraph) and g.num_nodes == 9
    assert (tmp_path / "data" / "rdf" / "aifb.tgz").is_file()
    assert ds.stats()["triples"] == 6
    again = Tiny(root=tmp_path / "data")  # from the processed cache
    assert again.get().node_names == g.node_names

    class Bad(AIFB):
        name = "bad-aifb"
        remote_files = (RemoteFile("aifb.tgz", src.as_uri(), "0" * 64),)

    with pytest.raises(FileNotFoundError, match="FEDGRAPH_DATA"):
        Bad(root=tmp_path / "other")


@pytest.mark.dataset
def test_load_dataset_aifb(data_root):
    g = load_dataset("AIFB", root=data_root)
    assert isinstance(g, RDFGraph)
    assert (g.num_nodes, g.num_edges, g.num_relations, g.num_classes) == (
        8285,
        29043,
        45,
        4,
    )
