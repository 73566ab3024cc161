r"""Datasets, loaders and the dataset registry.

``datasets`` below is THE registry (PyG style: an explicit list): ``fedgraph
datasets`` lists it, :func:`load_dataset` resolves names against it. To add
a dataset, write a :class:`KGDataset` subclass (``name``, ``folder``,
``remote_files``, ``process``) and add one entry to the list.
"""

from __future__ import annotations

from fedgraph.data.dataset import DatasetNotFoundError, KGDataset, RemoteFile
from fedgraph.data.dbp5l import DBP5L, read_dbp5l
from fedgraph.data.entity_text import dbpedia_title, entity_titles
from fedgraph.data.fb15k_237 import FB15k_237
from fedgraph.data.federated import load_federated_folder
from fedgraph.data.fedlu import (
    FedLU_C3,
    FedLU_C5,
    FedLU_C10,
    FedLU_R3,
    FedLU_R5,
    FedLU_R10,
)
from fedgraph.data.io import DataFormatError
from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.data.load import load_dataset, load_folder, resolve_dataset
from fedgraph.data.multilingual import MultilingualKG
from fedgraph.data.nell_995 import NELL995
from fedgraph.data.openke import read_openke_folder
from fedgraph.data.rdf_datasets import AIFB, AM, BGS, MUTAG
from fedgraph.data.small_kgs import UMLS, Kinship, Nations
from fedgraph.data.triples import read_triple_files, read_triple_folder

#: The dataset registry, in the order ``fedgraph datasets`` shows.
datasets: list[type[KGDataset]] = [
    FB15k_237,
    Nations,
    Kinship,
    UMLS,
    NELL995,
    DBP5L,
    FedLU_C3,
    FedLU_C5,
    FedLU_C10,
    FedLU_R3,
    FedLU_R5,
    FedLU_R10,
    # RDF entity-classification benchmarks: add their classes here.
    AIFB,
    MUTAG,
    BGS,
    AM,
]

__all__ = [
    "datasets",
    "KGDataset",
    "RemoteFile",
    "DatasetNotFoundError",
    "DataFormatError",
    "KnowledgeGraph",
    "load_dataset",
    "load_folder",
    "resolve_dataset",
    "load_federated_folder",
    "read_triple_files",
    "read_triple_folder",
    "FB15k_237",
    "Nations",
    "Kinship",
    "UMLS",
    "NELL995",
    "DBP5L",
    "MultilingualKG",
    "read_dbp5l",
    "dbpedia_title",
    "entity_titles",
    "read_openke_folder",
    "FedLU_C3",
    "FedLU_C5",
    "FedLU_C10",
    "FedLU_R3",
    "FedLU_R5",
    "FedLU_R10",
    "AIFB",
    "MUTAG",
    "BGS",
    "AM",
]
