r"""Filtered ranking for the text bi-encoder (FedMKGC's prediction rule).

Every entity text is encoded once; each batch of queries is then one matrix
product against all ``[N, H]`` entity embeddings, plus the optional graph
re-ranking bonus (:class:`~fedgraph.eval.GraphReranker`). Known true answers
other than the target are masked by index and ties get the realistic rank,
as in :func:`~fedgraph.eval.rank_triples`.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from fedgraph.eval.graph_rerank import GraphReranker
from fedgraph.eval.metrics import DIRECTIONS, LinkPredState
from fedgraph.eval.ranking import TripleFilter, realistic_ranks
from fedgraph.models.text.bi_encoder import BiEncoder
from fedgraph.models.text.tokens import EntityTokens
from fedgraph.progress import advance


@torch.no_grad()
def encode_all_entities(
    model: BiEncoder, tokens: EntityTokens, *, batch_size: int = 256
) -> Tensor:
    r"""``[N, H]`` unit embeddings of every entity of ``tokens`` (eval mode,
    ``batch_size`` texts at a time)."""
    if batch_size < 1:
        raise ValueError(f"`batch_size` must be positive (got {batch_size})")
    was_training = model.training
    model.eval()
    out = []
    for start in range(0, len(tokens), batch_size):
        ids, mask = tokens[torch.arange(start, min(start + batch_size, len(tokens)))]
        out.append(model.encode_entities(ids, mask).float())
    model.train(was_training)
    return torch.cat(out, 0)


@torch.no_grad()
def rank_text_triples(
    model: BiEncoder,
    tokens: EntityTokens,
    triples: Tensor,
    *,
    filter: TripleFilter | None = None,
    reranker: GraphReranker | None = None,
    directions: Sequence[str] = DIRECTIONS,
    batch_size: int = 256,
    entity_embeddings: Tensor | None = None,
    state: LinkPredState | None = None,
) -> LinkPredState:
    r"""Filtered ranks of the true tail of :math:`(h, r, ?)` and the true
    head of :math:`(?, r, t)` (asked as :math:`(t, r^{-1}, ?)`) among *all*
    entities of ``tokens``, by

    .. math::
        s(q, e) = \mathbf{e}_q^\top \mathbf{e}_e
        + \alpha\, \mathbb{I}\big(e \in \mathcal{E}^k(\text{query entity})\big)

    (the second term only with ``reranker``).

    Args:
        model (BiEncoder): the model (evaluated in eval mode).
        tokens (EntityTokens): the text of every candidate entity.
        triples (Tensor): ``[n, 3]`` ``(h, r, t)`` test triples, relation ids
            in ``[0, R)``.
        filter (TripleFilter, optional): known true triples to mask (other
            than the target); :obj:`None` gives raw ranks.
        reranker (GraphReranker, optional): the k-hop bonus.
        directions (Sequence[str], optional): ``"head"`` and/or ``"tail"``.
        batch_size (int, optional): queries (and entity texts) per batch.
            (default: :obj:`256`)
        entity_embeddings (Tensor, optional): ``[N, H]`` precomputed
            :func:`encode_all_entities` (computed when :obj:`None`).
        state (LinkPredState, optional): a state to add to.

    Returns:
        LinkPredState: the updated (or a new) state.
    """
    state = LinkPredState() if state is None else state
    triples = torch.as_tensor(triples, dtype=torch.long)
    for direction in directions:
        if direction not in DIRECTIONS:
            raise ValueError(
                f"`directions` items must be in {DIRECTIONS} (got {direction!r})"
            )
    if triples.numel() == 0:
        return state
    if entity_embeddings is None:
        entity_embeddings = encode_all_entities(model, tokens, batch_size=batch_size)
    if entity_embeddings.size(0) != len(tokens):
        raise ValueError(
            f"`entity_embeddings` has {entity_embeddings.size(0)} rows but "
            f"`tokens` has {len(tokens)} entities"
        )
    was_training = model.training
    model.eval()
    num_rel = model.num_relations
    for direction in directions:
        for start in range(0, triples.size(0), batch_size):
            h, r, t = triples[start : start + batch_size].unbind(1)
            if direction == "tail":
                anchor, query_rel, target = h, r, t
            else:
                anchor, query_rel, target = t, r + num_rel, h
            ids, mask = tokens[anchor]
            queries = model.encode_queries(query_rel, ids, mask).float()
            scores = BiEncoder.score(queries, entity_embeddings)
            if reranker is not None and reranker.enabled:
                scores = scores + reranker.bonus(anchor)
            rows = torch.arange(scores.size(0))
            if filter is not None:
                own = scores[rows, target].clone()
                f_row, f_ent = filter.true_answers(anchor, r, direction)
                scores[f_row, f_ent] = float("-inf")
                scores[rows, target] = own
            state.update(realistic_ranks(scores, target), direction)
            advance(h.numel())  # the open progress bar, if any
    model.train(was_training)
    return state


__all__ = ["encode_all_entities", "rank_text_triples"]
