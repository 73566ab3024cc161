r"""The scoring-only knowledge-graph embedding base class."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

import torch
from torch import Tensor, nn

from fedgraph.models.memory import check_kge_memory
from fedgraph.validate import check_integer, check_number

HEAD_BATCH = "head-batch"
TAIL_BATCH = "tail-batch"
MODES = (HEAD_BATCH, TAIL_BATCH)


class KGEModel(nn.Module, ABC):
    r"""Base class of the knowledge-graph embedding models: they only *score*.

    Loss, negative sampling, training and evaluation are separate objects
    (:mod:`fedgraph.models.losses`, :mod:`fedgraph.models.samplers`,
    :mod:`fedgraph.eval.ranking`), as in PyKEEN. Scores follow the RotatE /
    FedE / FedLU code convention: *larger is more plausible*, and the distance
    models return :math:`\gamma - d(h, r, t)`.

    Entity and relation tables are two separate :class:`torch.nn.Embedding`
    (:attr:`entity_embedding`, :attr:`relation_embedding`): a federated client
    reads or overwrites entity rows by index (``model.entity_embedding.weight``)
    and keeps its relation table private. Both are initialised uniformly in
    :math:`[-\rho, \rho]` with the embedding range
    :math:`\rho = (\gamma + \epsilon) / d` of the RotatE code that FedE and
    FedLU reuse.

    Why not :class:`torch_geometric.nn.kge.KGEModel`: PyG's base couples the
    model to its ``loss`` (negative sampling inside the model), ``loader`` and
    ``test`` (tails only, unfiltered, one Python loop per triple), and only
    scores one ``(h, r, t)`` per row. fedgraph needs scores against *all* (or a
    given subset of) candidate entities in one matrix product / distance call,
    shared negatives, both corruption modes and the papers' :math:`\gamma` and
    embedding-range conventions; so only the PyG interface spirit (separate
    ``node_emb``/``rel_emb`` tables, ``reset_parameters``, ``__repr__``) is kept.

    Subclasses implement :meth:`interaction` (broadcast over leading dims) and
    may override :meth:`score_tails` / :meth:`score_heads` with a faster
    candidate-matrix form (matmul, :func:`torch.cdist`).

    Args:
        num_entities (int): number of entities.
        num_relations (int): number of relations.
        hidden_channels (int): the embedding dimension :math:`d` (complex
            models store :math:`2d` reals per entity).
        gamma (float, optional): the margin :math:`\gamma`. (default: :obj:`9.0`,
            the value FedLU's code uses for TransE)
        epsilon (float, optional): :math:`\epsilon` of the embedding range.
            (default: :obj:`2.0`)

    Raises:
        TypeError: a size that is not an integer (``10.7``) or a margin that
            is not a number.
        ValueError: a size below 1, a negative or non-finite ``gamma`` or
            ``epsilon``, or tables larger than the memory available
            (:func:`~fedgraph.models.memory.check_kge_memory`).
    """

    #: Real numbers per entity / relation dimension (2 for complex models).
    entity_factor: int = 1
    relation_factor: int = 1

    def __init__(
        self,
        num_entities: int,
        num_relations: int,
        hidden_channels: int,
        *,
        gamma: float = 9.0,
        epsilon: float = 2.0,
    ) -> None:
        super().__init__()
        self.num_entities = check_integer(num_entities, "num_entities")
        self.num_relations = check_integer(num_relations, "num_relations")
        self.hidden_channels = check_integer(hidden_channels, "hidden_channels")
        self.gamma = check_number(gamma, "gamma", low=0.0, strict=False)
        self.epsilon = check_number(epsilon, "epsilon", low=0.0, strict=False)
        if self.gamma + self.epsilon == 0:
            raise ValueError(
                "`gamma` + `epsilon` must be positive: it sets the embedding range "
                f"(got gamma={gamma!r}, epsilon={epsilon!r})"
            )
        check_kge_memory(  # the tables below, before they are allocated
            [(self.num_entities, self.num_relations)],
            self.hidden_channels,
            model=self,
            copies=1,
        )
        self.embedding_range = (self.gamma + self.epsilon) / self.hidden_channels
        self.entity_embedding = nn.Embedding(
            self.num_entities, self.hidden_channels * self.entity_factor
        )
        self.relation_embedding = nn.Embedding(
            self.num_relations, self.hidden_channels * self.relation_factor
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        r"""Uniform :math:`[-\rho, \rho]` initialisation of both tables."""
        rho = self.embedding_range
        nn.init.uniform_(self.entity_embedding.weight, -rho, rho)
        nn.init.uniform_(self.relation_embedding.weight, -rho, rho)

    # ------------------------------------------------------------ to override
    @abstractmethod
    def interaction(self, head: Tensor, rel: Tensor, tail: Tensor) -> Tensor:
        r"""Scores embeddings that broadcast against each other.

        Args:
            head (Tensor): ``[..., d_e]`` head embeddings.
            rel (Tensor): ``[..., d_r]`` relation embeddings.
            tail (Tensor): ``[..., d_e]`` tail embeddings.

        Returns:
            Tensor: ``[...]`` scores (broadcast shape without the last dim).
        """

    def score_tails(self, head: Tensor, rel: Tensor, cand: Tensor) -> Tensor:
        r"""``[B, C]`` scores of ``(head[b], rel[b], cand[c])``.

        Args:
            head (Tensor): ``[B, d_e]``. rel (Tensor): ``[B, d_r]``.
            cand (Tensor): ``[C, d_e]`` candidate tail embeddings.
        """
        return self.interaction(head[:, None], rel[:, None], cand[None])

    def score_heads(self, rel: Tensor, tail: Tensor, cand: Tensor) -> Tensor:
        r"""``[B, C]`` scores of ``(cand[c], rel[b], tail[b])``."""
        return self.interaction(cand[None], rel[:, None], tail[:, None])

    def score_tails_grouped(self, head: Tensor, rel: Tensor, cand: Tensor) -> Tensor:
        r"""``[G, B, C]`` scores of ``(head[g, b], rel[g, b], cand[g, c])``:
        :meth:`score_tails` of ``G`` independent groups (e.g. clients, each
        with its own shared negatives) at once.

        Args:
            head (Tensor): ``[G, B, d_e]``. rel (Tensor): ``[G, B, d_r]``.
            cand (Tensor): ``[G, C, d_e]`` each group's candidate tails.

        The default scores the groups one by one; models with a batched
        candidate-matrix form (TransE) override it.
        """
        return torch.stack(
            [self.score_tails(h, r, c) for h, r, c in zip(head, rel, cand, strict=True)]
        )

    def score_heads_grouped(self, rel: Tensor, tail: Tensor, cand: Tensor) -> Tensor:
        r"""``[G, B, C]`` scores of ``(cand[g, c], rel[g, b], tail[g, b])``
        (see :meth:`score_tails_grouped`)."""
        return torch.stack(
            [self.score_heads(r, t, c) for r, t, c in zip(rel, tail, cand, strict=True)]
        )

    @property
    def device(self) -> torch.device:
        r"""The device of the model's tables (where index tensors must be)."""
        return self.entity_embedding.weight.device

    # ---------------------------------------------------------- index-level API
    def _entities(self, index: Tensor | None) -> Tensor:
        w = self.entity_embedding.weight
        return w if index is None else w[index]

    def score_hrt(self, head: Tensor, rel: Tensor, tail: Tensor) -> Tensor:
        r"""Scores of ``[B]`` triples given as ``[B]`` head, relation and tail ids."""
        e, r = self.entity_embedding, self.relation_embedding
        return self.interaction(e(head), r(rel), e(tail))

    def score_t(
        self, head: Tensor, rel: Tensor, candidates: Tensor | None = None
    ) -> Tensor:
        r"""``[B, C]`` scores of every candidate tail (all entities if
        ``candidates`` is :obj:`None`, else the ``[C]`` given entity ids)."""
        return self.score_tails(
            self.entity_embedding(head),
            self.relation_embedding(rel),
            self._entities(candidates),
        )

    def score_h(
        self, rel: Tensor, tail: Tensor, candidates: Tensor | None = None
    ) -> Tensor:
        r"""``[B, C]`` scores of every candidate head (see :meth:`score_t`)."""
        return self.score_heads(
            self.relation_embedding(rel),
            self.entity_embedding(tail),
            self._entities(candidates),
        )

    def score_negatives(
        self, positive: Tensor, negative: Tensor, mode: str = TAIL_BATCH
    ) -> Tensor:
        r"""``[B, K]`` scores of corrupted triples.

        Args:
            positive (Tensor): ``[B, 3]`` positive ``(h, r, t)`` triples.
            negative (Tensor): entity ids replacing the head or the tail:
                ``[B, K]`` (per positive) or ``[K]`` (shared by the batch).
            mode (str, optional): ``"head-batch"`` (replace heads) or
                ``"tail-batch"`` (replace tails). (default: ``"tail-batch"``)
        """
        return self.score_batch(positive, negative, mode)[1]

    def score_batch(
        self,
        positive: Tensor,
        negative: Tensor,
        mode: str = TAIL_BATCH,
        dropout: Callable[[Tensor, Tensor], tuple[Tensor, Tensor]] | None = None,
    ) -> tuple[Tensor, Tensor]:
        r"""``([B], [B, K])`` scores of the positives and of their corruptions
        (see :meth:`score_negatives`), gathering each table *once*: one
        ``index_select`` per table, hence one dense gradient per table in the
        backward pass instead of one per lookup (the training hot path).

        ``dropout`` (a training regime's) maps the gathered entity rows (the
        heads, the tails, then the negatives) and relation rows to the rows
        scored; a negative shared by the batch is one row, hence one mask."""
        if mode not in MODES:
            raise ValueError(f"`mode` must be one of {MODES} (got {mode!r})")
        b = positive.size(0)
        if negative.dim() > 2 or (negative.dim() == 2 and negative.size(0) != b):
            raise ValueError(
                "`negative` must be [K] or [B, K] with B = len(positive) "
                f"(got {tuple(negative.shape)} for B={b})"
            )
        if negative.dim() == 2 and self.gathers_negatives() and dropout is None:
            ent = self.entity_embedding(torch.cat([positive[:, 0], positive[:, 2]]))
            head, tail = ent[:b], ent[b:]
            rel = self.relation_embedding(positive[:, 1])
            return (
                self.interaction(head, rel, tail),
                self.score_gathered(head, rel, tail, negative, mode),
            )
        idx = torch.cat([positive[:, 0], positive[:, 2], negative.reshape(-1)])
        ent = self.entity_embedding(idx)
        rel = self.relation_embedding(positive[:, 1])
        if dropout is not None:
            ent, rel = dropout(ent, rel)
        head, tail = ent[:b], ent[b : 2 * b]
        neg = ent[2 * b :].view(*negative.shape, -1)
        pos_score = self.interaction(head, rel, tail)
        if negative.dim() == 1:  # shared negatives: candidate-matrix scoring
            if mode == TAIL_BATCH:
                return pos_score, self.score_tails(head, rel, neg)
            return pos_score, self.score_heads(rel, tail, neg)
        if mode == TAIL_BATCH:
            return pos_score, self.interaction(head[:, None], rel[:, None], neg)
        return pos_score, self.interaction(neg, rel[:, None], tail[:, None])

    def gathers_negatives(self) -> bool:
        r"""Whether :meth:`score_gathered` scores ``[B, K]`` negatives (else
        :meth:`score_batch` gathers their rows). (default: :obj:`False`)"""
        return False

    def score_gathered(
        self, head: Tensor, rel: Tensor, tail: Tensor, negative: Tensor, mode: str
    ) -> Tensor:
        r"""``[B, K]`` scores of per-positive negatives ``negative`` computed
        from the entity table without gathering its ``B × K`` rows; used
        when :meth:`gathers_negatives` is true."""
        raise NotImplementedError(
            f"{type(self).__name__} has no gathered negative scoring"
        )

    def forward(self, head: Tensor, rel: Tensor, tail: Tensor) -> Tensor:
        r"""Alias of :meth:`score_hrt` (PyG-style ``model(h, r, t)``)."""
        return self.score_hrt(head, rel, tail)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}({self.num_entities}, "
            f"num_relations={self.num_relations}, "
            f"hidden_channels={self.hidden_channels}, gamma={self.gamma})"
        )


def candidate_chunks(
    num_queries: int, cand: Tensor, budget: int = 2**24
) -> list[slice]:
    r"""Row slices of ``cand`` (``[C, d]``) such that a ``B × chunk × d``
    intermediate has at most ``budget`` elements (``B`` = ``num_queries``)."""
    step = max(1, budget // max(1, num_queries * cand.size(-1)))
    return [slice(i, i + step) for i in range(0, cand.size(0), step)]


def chunked_candidates(
    fn, query: tuple[Tensor, ...], cand: Tensor, budget: int = 2**24
) -> Tensor:
    r"""Applies ``fn(*query_chunk, cand_chunk)`` over candidate chunks so that at
    most ``budget`` ``B × C × d`` elements exist at once; concatenates ``[B, C]``."""
    chunks = candidate_chunks(query[0].size(0), cand, budget)
    if len(chunks) <= 1:
        return fn(*query, cand)
    return torch.cat([fn(*query, cand[s]) for s in chunks], dim=1)


class NormBasedModel(KGEModel):
    r"""Base class of the models whose score is a margin minus a distance,
    :math:`\gamma - \|\cdot\|_p` (:class:`~fedgraph.models.TransE`,
    :class:`~fedgraph.models.kge.pairre.PairRE`); each subclass implements
    :meth:`~KGEModel.interaction` with its own distance.

    It takes the arguments of :class:`KGEModel` (sizes, ``gamma``,
    ``epsilon``) and one more, the norm :math:`p`, checked before any table
    is allocated and stored as the float :attr:`p_norm`.

    Args:
        p_norm (float, optional): the norm :math:`p` of the distance, 1 or
            2. (default: :obj:`1.0`)

    Raises:
        ValueError: a ``p_norm`` other than 1 or 2, besides the errors of
            :class:`KGEModel`.
    """

    def __init__(
        self,
        num_entities: int,
        num_relations: int,
        hidden_channels: int,
        *,
        gamma: float = 9.0,
        epsilon: float = 2.0,
        p_norm: float = 1.0,
    ) -> None:
        if p_norm not in (1, 2):
            raise ValueError(f"`p_norm` must be 1 or 2 (got {p_norm})")
        self.p_norm = float(p_norm)
        super().__init__(
            num_entities, num_relations, hidden_channels, gamma=gamma, epsilon=epsilon
        )


__all__ = [
    "KGEModel",
    "NormBasedModel",
    "HEAD_BATCH",
    "TAIL_BATCH",
    "MODES",
    "candidate_chunks",
    "chunked_candidates",
]
