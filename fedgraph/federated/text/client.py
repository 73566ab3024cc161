r"""The FedMKGC client: one language's KG training a local language model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.eval.graph_rerank import GraphReranker
from fedgraph.eval.metrics import DIRECTIONS, LinkPredState
from fedgraph.eval.ranking import TripleFilter
from fedgraph.eval.text_ranking import encode_all_entities, rank_text_triples
from fedgraph.federated.base import Client
from fedgraph.federated.payload import Payload, PayloadError
from fedgraph.models.text.bi_encoder import ENCODER, BiEncoder, add_inverse_triples
from fedgraph.models.text.loss import InfoNCELoss
from fedgraph.models.text.tokens import EntityTokens
from fedgraph.models.text.training import train_bi_encoder_epoch

#: Config key of the local epochs per round (shared with the RGCN clients).
LOCAL_EPOCHS = "local-epochs"
#: Offset of a client's dropout seed from its ``seed``.
DROPOUT_SEED = 7919
#: Offset of the seed of a client's evaluation sample (``max_eval_triples``).
EVAL_SAMPLE_SEED = 104729


def _check_arguments(
    graph: KnowledgeGraph,
    model: BiEncoder,
    tokens: EntityTokens,
    lr: float,
    batch_size: int,
    local_epochs: int,
    max_steps: int,
    directions: Sequence[str],
    max_eval_triples: Mapping[str, int],
) -> None:
    r"""A text client's arguments must be in range and fit each other."""
    if lr <= 0:
        raise ValueError(f"`lr` must be positive (got {lr})")
    if batch_size < 1:
        raise ValueError(f"`batch_size` must be positive (got {batch_size})")
    if local_epochs < 0:
        raise ValueError(f"`local_epochs` must be non-negative (got {local_epochs})")
    if max_steps < 0:
        raise ValueError(f"`max_steps` must be non-negative (got {max_steps})")
    if len(tokens) != graph.num_entities:
        raise ValueError(
            f"`tokens` holds {len(tokens)} entity texts but `graph` has "
            f"{graph.num_entities} entities"
        )
    if graph.num_relations > model.num_relations:
        raise ValueError(
            f"`graph` has {graph.num_relations} relations but `model` only "
            f"{model.num_relations}"
        )
    for d in directions:
        if d not in DIRECTIONS:
            raise ValueError(f"`directions` items must be in {DIRECTIONS} (got {d!r})")
    for split, cap in max_eval_triples.items():
        if split not in graph.split_names:
            raise ValueError(
                f"`max_eval_triples` keys must be splits of `graph` "
                f"{graph.split_names} (got '{split}')"
            )
        if cap < 0:
            raise ValueError(
                f"`max_eval_triples['{split}']` must be non-negative (got {cap})"
            )


class FedMKGCClient(Client):
    r"""One FedMKGC party: a language's KG and its local
    :class:`~fedgraph.models.text.BiEncoder` (client side of Algorithm 1).

    :meth:`fit` copies the received language-model weights :math:`w_t` into
    the local model (with no arrays received it goes on from its own: the
    Independent baseline), trains ``local-epochs`` epochs of
    :func:`~fedgraph.models.text.train_bi_encoder_epoch` with Adam over the
    language model *and* its relation prefixes on the training triples and
    their inverses, and replies with the language model
    (:meth:`BiEncoder.shared_arrays`) only; the relation prefixes, the
    triples and the entity texts never leave the client.
    ``num_examples`` = the number of training examples (triples + inverses).
    The dropout masks of training come from the client's own random stream
    (seeded by ``seed``, kept in :meth:`state_dict`), not from torch's
    global one, so a client trains to the same weights wherever it runs: in
    the simulation, on a Flower node rebuilt for every message, or resumed.

    :meth:`evaluate` loads any received weights (the global model), then
    ranks the true tail and head of each triple of ``config["split"]``
    among all entities of the client's KG, filtered by its train + valid +
    test triples, with the :class:`~fedgraph.eval.GraphReranker` bonus on
    its training graph (:func:`~fedgraph.eval.rank_text_triples`); a split
    capped by ``max_eval_triples`` is ranked on a fixed random sample of its
    triples, the same at every evaluation. The entity embeddings are kept
    between evaluations while the language model is unchanged (no training,
    no different weights received or loaded since), so a test right after a
    validation encodes no entity text again. Its
    metrics are mergeable: :class:`~fedgraph.eval.LinkPredState` sums
    (``"head/rr"``, …) and the flat ``count``/``mrr_sum``/``hits@k_sum``
    that :func:`~fedgraph.federated.merge_metric_sums` reads, plus
    ``n_triples`` (the triples ranked) and ``n_split_triples`` (the split's).

    Args:
        graph (KnowledgeGraph): the client's KG (relation ids
            ``< model.num_relations``).
        model (BiEncoder): the client's model (its own copy).
        tokens (EntityTokens): the text of each entity of ``graph``.
        lr (float, optional): Adam learning rate. (default: :obj:`5e-5`)
        batch_size (int, optional): training batch (in-batch negatives).
            (default: :obj:`384`)
        local_epochs (int, optional): used when the config has no
            ``local-epochs``. (default: :obj:`1`)
        max_steps (int, optional): at most this many optimiser steps per
            :meth:`fit`, counted over its epochs; an epoch cut short takes
            the first batches of its shuffled order. ``0``: no cap.
            (default: :obj:`0`)
        margin (float, optional): :math:`\gamma`. (default: :obj:`0.02`)
        temperature (float, optional): :math:`\tau`. (default: :obj:`0.05`)
        rerank_alpha (float, optional): :math:`\alpha`; ``0`` disables
            re-ranking. (default: :obj:`0.01`)
        rerank_hops (int, optional): :math:`k`. (default: :obj:`5`)
        directions (Sequence[str], optional): ranked directions.
            (default: :obj:`("head", "tail")`)
        eval_batch_size (int, optional): (default: :obj:`256`)
        reset_optimizer (bool, optional): a fresh Adam every :meth:`fit`
            (the received weights replace the local ones); ``False`` keeps
            the moments across rounds. (default: :obj:`True`)
        seed (int, optional): seeds the batch order, the dropout masks and
            the evaluation samples. (default: :obj:`0`)
        max_eval_triples (Mapping[str, int], optional): split name
            (e.g. ``"valid"``, ``"test"``) → at most this many of its triples are
            ranked, a random sample drawn once from ``seed`` (sorted, so in
            the split's order); ``0`` or a split not named: every triple.
            (default: :obj:`None`)
    """

    def __init__(
        self,
        graph: KnowledgeGraph,
        model: BiEncoder,
        tokens: EntityTokens,
        *,
        lr: float = 5e-5,
        batch_size: int = 384,
        local_epochs: int = 1,
        max_steps: int = 0,
        margin: float = 0.02,
        temperature: float = 0.05,
        rerank_alpha: float = 0.01,
        rerank_hops: int = 5,
        directions: Sequence[str] = DIRECTIONS,
        eval_batch_size: int = 256,
        reset_optimizer: bool = True,
        seed: int = 0,
        max_eval_triples: Mapping[str, int] | None = None,
    ) -> None:
        caps = dict(max_eval_triples or {})
        _check_arguments(
            graph,
            model,
            tokens,
            lr,
            batch_size,
            local_epochs,
            max_steps,
            directions,
            caps,
        )
        self.graph, self.model, self.tokens = graph, model, tokens
        self.lr = float(lr)
        self.batch_size = int(batch_size)
        self.local_epochs = int(local_epochs)
        self.max_steps = int(max_steps)
        self.loss = InfoNCELoss(margin=margin, temperature=temperature)
        self.directions = tuple(directions)
        self.eval_batch_size = int(eval_batch_size)
        self.reset_optimizer = bool(reset_optimizer)
        self.examples = add_inverse_triples(graph.triples("train"), model.num_relations)
        self.filter = TripleFilter(
            graph.all_triples(), graph.num_entities, graph.num_relations
        )
        self.reranker = GraphReranker(
            graph.edge_index("train"),
            graph.num_entities,
            alpha=rerank_alpha,
            num_hops=rerank_hops,
        )
        self.generator = torch.Generator().manual_seed(int(seed))
        # torch's global RNG state while this client trains (dropout)
        self.dropout_state = (
            torch.Generator().manual_seed(int(seed) + DROPOUT_SEED).get_state()
        )
        self.optimizer = self._adam()
        self._use_evaluation(caps, int(seed))

    def _use_evaluation(self, caps: Mapping[str, int], seed: int) -> None:
        r"""The evaluation samples of the capped splits and an empty entity
        embedding cache."""
        # (language-model version, its entity embeddings): the version moves
        # whenever the language model may have changed
        self._lm_version = 0
        self._entity_cache: tuple[int, torch.Tensor] | None = None
        self.max_eval_triples = {s: int(n) for s, n in caps.items() if n}
        sampler = torch.Generator().manual_seed(seed + EVAL_SAMPLE_SEED)
        #: split → the indices of its triples that are ranked (capped splits)
        self.eval_rows: dict[str, torch.Tensor] = {}
        for s, n in sorted(self.max_eval_triples.items()):
            size = self.graph.triples(s).size(0)
            if size > n:
                drawn = torch.randperm(size, generator=sampler)[:n]
                self.eval_rows[s] = drawn.sort().values

    def _adam(self) -> torch.optim.Adam:
        return torch.optim.Adam(self.model.parameters(), lr=self.lr)

    def _load(self, payload: Payload) -> None:
        if not payload.arrays:
            return
        if self._holds(payload.arrays):  # e.g. the global model sent again
            return
        try:
            self.model.load_shared_arrays(payload.arrays)
        except (KeyError, ValueError) as err:
            raise PayloadError(f"{self.graph.name or 'client'}: {err}") from err
        self._lm_version += 1

    def _holds(self, arrays: Mapping[str, torch.Tensor]) -> bool:
        r"""Whether the language model's parameters equal ``arrays`` (the
        same keys, shapes and values)."""
        params = {ENCODER + k: p for k, p in self.model.encoder.named_parameters()}
        return params.keys() == arrays.keys() and all(
            p.shape == arrays[k].shape and torch.equal(p.detach(), arrays[k].to(p))
            for k, p in params.items()
        )

    def _entity_embeddings(self) -> torch.Tensor:
        r"""Every entity's embedding under the current language model,
        encoded again only when the model may have changed."""
        cached = self._entity_cache
        if cached is None or cached[0] != self._lm_version:
            emb = encode_all_entities(
                self.model, self.tokens, batch_size=self.eval_batch_size
            )
            cached = self._entity_cache = (self._lm_version, emb)
        return cached[1]

    # ---------------------------------------------------------------- API
    def fit(self, payload: Payload) -> Payload:
        self._load(payload)
        epochs = int(payload.config.get(LOCAL_EPOCHS, self.local_epochs))
        self._lm_version += 1  # trained below
        if self.reset_optimizer:
            self.optimizer = self._adam()
        total, steps = 0.0, 0
        with torch.random.fork_rng(devices=[]):  # the client's own dropout stream
            torch.set_rng_state(self.dropout_state)
            for _ in range(epochs):
                left = self.max_steps - steps if self.max_steps else None
                if left == 0:
                    break
                s, n = train_bi_encoder_epoch(
                    self.model,
                    self.examples,
                    self.tokens,
                    optimizer=self.optimizer,
                    loss=self.loss,
                    batch_size=self.batch_size,
                    generator=self.generator,
                    max_steps=left,
                )
                total, steps = total + s, steps + n
            self.dropout_state = torch.get_rng_state()
        # Independent training (nothing received) shares nothing back.
        shared = self.model.shared_arrays() if payload.arrays else {}
        return Payload(
            arrays=shared,
            metrics={"count": steps, "loss_sum": total},
            num_examples=int(self.examples.size(0)),
        )

    def ranked_triples(self, split: str) -> torch.Tensor:
        r"""The triples of ``split`` that an evaluation ranks: all of them,
        or the sample of a capped split (:attr:`eval_rows`)."""
        if split not in self.graph.split_names:
            raise ValueError(
                f"`split` must be one of {self.graph.split_names} (got '{split}')"
            )
        triples = self.graph.triples(split)
        rows = self.eval_rows.get(split)
        return triples if rows is None else triples[rows]

    def rank(self, split: str, state: LinkPredState | None = None) -> LinkPredState:
        r"""The filtered ranks of :meth:`ranked_triples` of ``split`` under
        the client's model, as :meth:`evaluate` computes them, added to
        ``state`` (a new one by default; a subclass may keep the ranks)."""
        return self._rank(self.ranked_triples(split), state)

    def _rank(
        self, triples: torch.Tensor, state: LinkPredState | None = None
    ) -> LinkPredState:
        return rank_text_triples(
            self.model,
            self.tokens,
            triples,
            filter=self.filter,
            reranker=self.reranker,
            directions=self.directions,
            batch_size=self.eval_batch_size,
            entity_embeddings=self._entity_embeddings(),
            state=state,
        )

    def evaluate(self, payload: Payload) -> Payload:
        self._load(payload)
        split = str(payload.config.get("split", "valid"))
        triples = self.ranked_triples(split)
        state = self._rank(triples)
        both = {
            k: sum(state.sums[d][k] for d in DIRECTIONS) for k in state.sums["tail"]
        }
        flat = {
            "count": state.num_queries,
            "mrr_sum": both["rr"],
            "mr_sum": both["rank"],
        }
        flat.update({f"hits@{k}_sum": both[f"hits@{k}"] for k in state.ks})
        return Payload(
            metrics={
                **state.to_dict(),
                **flat,
                "n_triples": int(triples.size(0)),
                "n_split_triples": self.graph.num_triples(split),
            },
            num_examples=int(triples.size(0)),
        )

    def state_dict(self) -> dict[str, Any]:
        return {
            "model": {k: v.clone() for k, v in self.model.state_dict().items()},
            "optimizer": self.optimizer.state_dict(),
            "generator": self.generator.get_state(),
            "dropout": self.dropout_state.clone(),
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.model.load_state_dict(state["model"])
        self._lm_version += 1
        self.optimizer = self._adam()
        self.optimizer.load_state_dict(state["optimizer"])
        self.generator.set_state(state["generator"])
        if "dropout" in state:  # states saved before the client kept its own
            self.dropout_state = state["dropout"].clone()

    def __repr__(self) -> str:
        return (
            f"FedMKGCClient(graph={self.graph.name!r}, model={self.model!r}, "
            f"local_epochs={self.local_epochs}, max_steps={self.max_steps}, "
            f"batch_size={self.batch_size}, lr={self.lr})"
        )


__all__ = ["FedMKGCClient", "LOCAL_EPOCHS"]
