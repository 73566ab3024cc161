r"""Named link-prediction evaluation protocols: which directions are ranked,
among which candidates, with which filter, scoring which model, and how
clients are weighted.

Two federated KGE papers evaluate differently, and their numbers are only
comparable under their own protocol:

.. list-table::
   :header-rows: 1

   * - name
     - directions
     - candidates
     - filter
     - model scored (federated)
     - centralized validation
   * - ``fedlu`` (default)
     - head and tail
     - the client's entities
     - the client's train + valid + test
     - the client's own entity table
     - pooled
   * - ``fede``
     - tail only
     - the client's training entities
     - the client's train + valid + test
     - the server's aggregated entity rows
     - per client

Both weight clients by their number of test triples (with one direction,
queries = test triples) and resolve ties with the realistic rank (FedE's
and FedLU's code rank ties in arbitrary ``argsort`` order).

*Centralized validation* is how the Centralized baseline (FedE's *Entire*)
picks its best epoch: ``"pooled"`` ranks the union's validation triples among
all the union's entities (FedLU's ``global.py``); ``"per-client"`` ranks each
client's validation triples as its test triples are ranked (the client's
candidates and filter) and pools the ranks (FedE's ``evaluate_multi``). The
test pass is per client under both.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import Tensor

from fedgraph.data.knowledge_graph import KnowledgeGraph

#: the candidate sets a protocol can name
CANDIDATE_SETS = ("entities", "train-entities")
#: the tables a protocol scores with: each client's own (FedLU) or the
#: server's global rows (FedE) (``fedgraph train --evaluate-with``)
MODELS_SCORED = ("local", "global")


@dataclass(frozen=True)
class EvalProtocol:
    r"""One evaluation setting, recorded with every result.

    Args:
        name (str): the protocol's name.
        directions (tuple[str, ...]): ranked directions (``"head"``,
            ``"tail"``).
        candidates (str): ``"entities"`` (every entity of the client) or
            ``"train-entities"`` (those in the client's training triples).
        filter_splits (tuple[str, ...]): the client's splits whose triples
            are filtered.
        model_scored (str): ``"local"`` (each client's own entity table) or
            ``"global"`` (the server's aggregated rows), for federated runs.
        weighting (str): how client metrics are combined.
        ties (str): how tied scores are ranked.
        centralized_validation (str): ``"pooled"`` or ``"per-client"``: the
            validation of the Centralized baseline (see above).
        reference (str): where the protocol comes from.
    """

    name: str
    directions: tuple[str, ...]
    candidates: str
    filter_splits: tuple[str, ...] = ("train", "valid", "test")
    model_scored: str = "local"
    weighting: str = "test triples (pooled queries)"
    ties: str = "realistic rank"
    centralized_validation: str = "pooled"
    reference: str = ""

    def __post_init__(self) -> None:
        if self.candidates not in CANDIDATE_SETS:
            raise ValueError(
                f"`candidates` must be one of {CANDIDATE_SETS} (got {self.candidates!r})"
            )
        if self.model_scored not in MODELS_SCORED:
            raise ValueError(
                f"`model_scored` must be one of {MODELS_SCORED} (got "
                f"{self.model_scored!r})"
            )
        if self.centralized_validation not in ("pooled", "per-client"):
            raise ValueError(
                "`centralized_validation` must be 'pooled' or 'per-client' "
                f"(got {self.centralized_validation!r})"
            )

    def excluded_ids(self, graph: KnowledgeGraph) -> Tensor | None:
        r"""The ``[E]`` entity ids of ``graph`` outside the candidate set
        (:obj:`None`: none), for :func:`~fedgraph.eval.rank_triples`'s
        ``exclude``: masked like filtered answers, except when one is the
        target itself, as FedE's code masks the entities outside a client's
        training triples."""
        if self.candidates == "entities":
            return None
        seen = torch.zeros(graph.num_entities, dtype=torch.bool)
        seen[train_entities(graph)] = True
        return (~seen).nonzero().view(-1)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["directions"] = list(self.directions)
        d["filter_splits"] = list(self.filter_splits)
        return d


def train_entities(graph: KnowledgeGraph) -> Tensor:
    r"""``[C]`` sorted ids of the entities in ``graph``'s training triples."""
    t = graph.triples("train")
    seen = torch.zeros(graph.num_entities, dtype=torch.bool)
    seen[t[:, 0]] = True
    seen[t[:, 2]] = True
    return seen.nonzero().view(-1)


#: the registered protocols (``--protocol`` of ``fedgraph train``)
protocols: dict[str, EvalProtocol] = {
    "fedlu": EvalProtocol(
        "fedlu",
        directions=("head", "tail"),
        candidates="entities",
        model_scored="local",
        reference="FedLU (Zhu et al., WWW 2023) and its code",
    ),
    "fede": EvalProtocol(
        "fede",
        directions=("tail",),
        candidates="train-entities",
        model_scored="global",
        centralized_validation="per-client",
        reference="FedE (Chen et al., IJCKG 2021) and its code",
    ),
}


def resolve_protocol(name: str | EvalProtocol) -> EvalProtocol:
    r"""The protocol named ``name`` (case, ``-`` and ``_`` ignored)."""
    if isinstance(name, EvalProtocol):
        return name
    key = str(name).lower().replace("-", "").replace("_", "")
    if key not in protocols:
        raise ValueError(
            f"Could not resolve '{name}' among choices {sorted(protocols)}"
        )
    return protocols[key]


__all__ = [
    "EvalProtocol",
    "protocols",
    "resolve_protocol",
    "train_entities",
    "CANDIDATE_SETS",
    "MODELS_SCORED",
]
