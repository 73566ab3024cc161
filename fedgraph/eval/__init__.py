r"""Evaluation: filtered ranking, mergeable metrics and the results writer."""

from fedgraph.eval.graph_rerank import GraphReranker
from fedgraph.eval.metrics import DIRECTIONS, KS, LinkPredState
from fedgraph.eval.ranking import TripleFilter, rank_triples, realistic_ranks
from fedgraph.eval.results import (
    library_versions,
    read_results,
    summarize,
    write_results,
)
from fedgraph.eval.text_ranking import encode_all_entities, rank_text_triples
from fedgraph.eval.unseen import check_unseen, count_unseen, drop_unseen, unseen_mask

__all__ = [
    "DIRECTIONS",
    "KS",
    "LinkPredState",
    "TripleFilter",
    "rank_triples",
    "realistic_ranks",
    "GraphReranker",
    "encode_all_entities",
    "rank_text_triples",
    "write_results",
    "library_versions",
    "read_results",
    "summarize",
    "unseen_mask",
    "count_unseen",
    "drop_unseen",
    "check_unseen",
]
