r"""Evaluation: filtered ranking, mergeable metrics and the results writer."""

from fedgraph.eval.metrics import DIRECTIONS, KS, LinkPredState
from fedgraph.eval.ranking import TripleFilter, rank_triples, realistic_ranks
from fedgraph.eval.results import read_results, summarize, write_results

__all__ = [
    "DIRECTIONS",
    "KS",
    "LinkPredState",
    "TripleFilter",
    "rank_triples",
    "realistic_ranks",
    "write_results",
    "read_results",
    "summarize",
]
