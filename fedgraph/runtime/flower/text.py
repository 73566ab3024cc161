r"""FedMKGC on Flower: the text family (``fedmkgc``, ``fedmkgcparallel``,
``independent``) as a ``ServerApp``/``ClientApp`` pair.

The apps drive the simulation's objects: the strategy of
:func:`~fedgraph.federated.text.setup.build_text_strategy` and one
:class:`~fedgraph.federated.text.client.FedMKGCClient` per SuperNode, built
by :func:`~fedgraph.federated.text.setup.build_fedmkgc_clients` from the
node's own language KG (``partition-id`` K plays the K-th of ``languages``),
through the same round loop as ``fedgraph train --model text``: validation
MRR every ``eval-every`` rounds, early stopping, the best round tested. A run
gives the numbers of that command on the same data and language model.

``[tool.flwr.app.components]``::

    serverapp = "fedgraph.runtime.flower.text:server_app"
    clientapp = "fedgraph.runtime.flower.text:client_app"

The server opens no client data: the number of clients comes from the
alignment step (:mod:`~fedgraph.runtime.flower.alignment`, each node reports
how many languages the run has), and FedMKGC's :math:`w_0` is the public
pre-trained language model ``encoder``, which the server loads itself (the
``independent`` baseline needs none on the server). Relation prefixes,
triples and entity texts stay on the nodes.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fedgraph.federated.algorithms import get
from fedgraph.federated.base import Client, Strategy
from fedgraph.federated.text.setup import (
    MKGCSettings,
    build_fedmkgc_clients,
    build_text_strategy,
    default_encoder,
    load_text_model,
)
from fedgraph.runtime.flower.alignment import PARTITION_ID, AlignedRun, Alignment
from fedgraph.runtime.flower.client_app import make_client_app
from fedgraph.runtime.flower.config import (
    check_checkpoint_settings,
    check_failure_settings,
    field_keys,
    partition_id,
    read_flat_run_config,
)
from fedgraph.runtime.flower.server_app import make_server_app

#: The :class:`TextRunSettings` field with a run-config key of its own (the
#: option of ``fedgraph train --model text --prefix-tokens``). Every other
#: field's key is its name kebab-cased
#: (:func:`~fedgraph.runtime.flower.config.field_keys`).
KEY_ALIASES = {"num_prefix_tokens": "prefix-tokens"}

#: :class:`~fedgraph.federated.text.setup.MKGCSettings` fields set by the run config.
SETTINGS = (
    "lr", "batch_size", "local_epochs", "max_steps", "max_length", "num_prefix_tokens",
    "margin", "temperature", "rerank_alpha", "rerank_hops", "eval_batch_size",
    "seed", "valid_max_triples", "test_max_triples",
)  # fmt: skip


@dataclass
class TextRunSettings:
    r"""A FedMKGC run as the Flower apps see it (defaults: the paper's
    settings, those of ``fedgraph train --model text``).

    Args:
        data (str): a multilingual dataset name (``dbp-5l``, under ``root``)
            or a folder in the DBP-5L layout, readable by every SuperNode
            (never by the server).
        algorithm (str): ``fedmkgc``, ``fedmkgcparallel`` or ``independent``
            (the registry's ``text`` family).
        languages (str): the clients' languages, separated by spaces or
            commas; node ``partition-id`` K plays the K-th (empty: every
            language of ``data``, in its order).
        root (str): data root of a dataset name (empty: ``FEDGRAPH_DATA``).
        encoder (str): the language model, a Hugging Face model folder or
            Hub name readable by the server and every node (empty:
            :func:`~fedgraph.federated.text.setup.default_encoder`).
        num_rounds, fraction, eval_every, patience: the round loop
            (default: :obj:`50`, :obj:`1.0`, :obj:`5`, :obj:`3`).
        lr, batch_size, local_epochs, max_steps, max_length, num_prefix_tokens: the
            :class:`~fedgraph.federated.text.setup.MKGCSettings` (key
            ``prefix-tokens`` for ``num_prefix_tokens``).
        margin, temperature, rerank_alpha, rerank_hops, eval_batch_size: the same.
        seed, valid_max_triples, test_max_triples: the same.
        out (str): folder for ``results.json``/``server.pt`` (empty: none).
        threads (int): ``torch.set_num_threads`` (``0``: leave it).
        reply_timeout, connect_timeout, num_clients, min_available_nodes: as
            in :class:`~fedgraph.runtime.flower.FlowerRunSettings`.
        min_fit_nodes, accept_failures, client_mods: the same.
        wait_for_failed, pull_backoff, compact_messages: the same.
        checkpoint_dir, resume, run_name: checkpoints on the server and every
            node, and resuming from them, as in
            :class:`~fedgraph.runtime.flower.FlowerRunSettings`.
    """

    data: str
    algorithm: str
    languages: str = ""
    root: str = ""
    encoder: str = ""
    num_rounds: int = 50
    fraction: float = 1.0
    eval_every: int = 5
    patience: int = 3
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
    seed: int = 0
    valid_max_triples: int = 0
    test_max_triples: int = 0
    out: str = ""
    threads: int = 0
    reply_timeout: float = 0.0
    connect_timeout: float = 120.0
    num_clients: int = 0
    min_available_nodes: int = 0
    min_fit_nodes: int = 0
    accept_failures: bool = False
    wait_for_failed: float = 0.0
    pull_backoff: float = 0.0
    compact_messages: bool = False
    client_mods: str = ""
    checkpoint_dir: str = ""
    resume: bool = False
    run_name: str = ""

    @classmethod
    def from_run_config(cls, run_config: Mapping[str, Any]) -> TextRunSettings:
        r"""Parses a Flower ``context.run_config``; unknown keys, wrong types,
        an unknown ``algorithm`` or a bad value raise a :class:`ValueError`
        that names the key."""
        values = read_flat_run_config(cls, run_config, KEYS, "FedMKGC")
        try:  # the registry's text family, names normalised there
            values["algorithm"] = get(values["algorithm"], "text").name
        except ValueError as exc:
            raise ValueError(f"Run-config key `algorithm`: {exc}") from None
        out = cls(**values)
        out.validate()
        return out

    def validate(self) -> None:
        r"""Checks the values early (before any SuperNode is asked)."""
        for key in ("num-rounds", "eval-every", "lr", "batch-size", "local-epochs",
                    "max-length", "prefix-tokens", "eval-batch-size"):  # fmt: skip
            if getattr(self, KEYS[key]) <= 0:
                raise ValueError(
                    f"Run-config key `{key}` must be positive "
                    f"(got {getattr(self, KEYS[key])})"
                )
        for key in ("patience", "max-steps", "rerank-alpha", "rerank-hops", "threads",
                    "num-clients", "temperature", "valid-max-triples",
                    "test-max-triples"):  # fmt: skip
            if getattr(self, KEYS[key]) < 0:
                raise ValueError(
                    f"Run-config key `{key}` must be non-negative "
                    f"(got {getattr(self, KEYS[key])})"
                )
        if not 0 < self.fraction <= 1:
            raise ValueError(
                f"Run-config key `fraction` must lie in (0, 1] (got {self.fraction})"
            )
        if self.algorithm == "fedmkgc" and self.fraction != 1.0:
            raise ValueError(
                "Run-config key `fraction` must be 1.0 for fedmkgc (one client "
                "per round in an agreed order)"
            )
        langs = self.language_list()
        if len(set(langs)) != len(langs):
            raise ValueError(
                f"Run-config key `languages` must name distinct languages (got "
                f"{self.languages!r})"
            )
        check_checkpoint_settings(self)
        check_failure_settings(self)

    def language_list(self) -> list[str]:
        r"""``languages`` as a list (empty: every language of ``data``)."""
        return self.languages.replace(",", " ").split()

    def encoder_name(self) -> str:
        r"""``encoder``, or the default language model."""
        return self.encoder or default_encoder()

    def mkgc_settings(self) -> MKGCSettings:
        r"""The clients' :class:`~fedgraph.federated.text.setup.MKGCSettings`."""
        return MKGCSettings(**{k: getattr(self, k) for k in SETTINGS})

    def loop_kwargs(self) -> dict[str, Any]:
        r"""The round loop of ``fedgraph train --model text``."""
        return {
            "num_rounds": self.num_rounds,
            "fraction": self.fraction,
            "eval_every": self.eval_every,
            "patience": self.patience,
            "monitor": "mrr",
            "seed": self.seed,
            "test": True,
        }

    def to_dict(self) -> dict[str, Any]:
        r"""A JSON-able copy (``results.json`` ``settings``)."""
        return dataclasses.asdict(self)


#: run-config key → :class:`TextRunSettings` field: every field.
KEYS = field_keys(TextRunSettings, KEY_ALIASES)


@functools.lru_cache(maxsize=4)
def node_languages(data: str, languages: str, root: str) -> tuple[str, ...]:
    r"""The run's languages in client order, as a node reads them (the
    ``languages`` key, or every language of ``data``)."""
    from fedgraph.runtime.fedmkgc_runner import dataset_languages

    given = languages.replace(",", " ").split()
    if given:
        return tuple(given)
    what = "Run-config key `data`"
    return tuple(dataset_languages(data, root or None, what))


@functools.lru_cache(maxsize=2)
def load_language_graph(data: str, language: str, root: str) -> Any:
    r"""One language's KG of ``data`` (relations compacted), read once per
    process."""
    from fedgraph.runtime.fedmkgc_runner import load_language_graphs

    what = ("Run-config key `data`", "Run-config key `languages`")
    graphs = load_language_graphs(data, [language], root or None, what=what)
    return graphs[language]


@functools.lru_cache(maxsize=1)
def load_encoder(name: str) -> tuple[Any, Any]:
    r"""The language model and tokenizer ``name``, read once per process
    (the clients deep-copy the model)."""
    return load_text_model(name, "Run-config key `encoder`")


def describe_text_node(cfg: TextRunSettings, node_config: Any) -> dict[str, Any]:
    r"""A FedMKGC node's alignment reply: its ``partition-id`` and the
    number of clients (languages) of the run."""
    langs = node_languages(cfg.data, cfg.languages, cfg.root)
    return {
        PARTITION_ID: partition_id(node_config, len(langs)),
        "num-clients": len(langs),
    }


#: The FedMKGC apps' alignment step.
TEXT_ALIGNMENT = Alignment(describe_text_node)


def build_text_server(
    cfg: TextRunSettings, aligned: AlignedRun | None = None
) -> tuple[Strategy, int]:
    r"""The strategy of ``cfg.algorithm`` (FedMKGC's :math:`w_0` from the
    language model ``encoder``) and the number of clients (from the
    alignment step, else ``num-clients``). The server opens no data."""
    num_clients = aligned.num_clients if aligned is not None else cfg.num_clients
    if num_clients < 1:
        raise ValueError(
            "The FedMKGC server learns the number of clients in the alignment "
            "step; without one, set run-config key `num-clients`"
        )
    encoder = None
    if cfg.algorithm != "independent":  # nothing is shared: no model needed
        encoder, _ = load_encoder(cfg.encoder_name())
    return build_text_strategy(cfg.algorithm, encoder, cfg.mkgc_settings()), num_clients


def build_text_client(cfg: TextRunSettings, node_config: Any) -> tuple[Client, int]:
    r"""This node's :class:`~fedgraph.federated.text.client.FedMKGCClient`:
    the language ``partition-id`` of the run's ``languages``, with the
    simulation's seeds for that client id."""
    langs = node_languages(cfg.data, cfg.languages, cfg.root)
    cid = partition_id(node_config, len(langs))
    graph = load_language_graph(cfg.data, langs[cid], cfg.root)
    encoder, tokenizer = load_encoder(cfg.encoder_name())
    clients = build_fedmkgc_clients(
        [graph], encoder, tokenizer, cfg.mkgc_settings(), client_ids=[cid]
    )
    return clients[cid], cid


def clear_caches() -> None:
    r"""Forgets the data and models read by this process (tests)."""
    for cached in (node_languages, load_language_graph, load_encoder):
        cached.cache_clear()


#: ``[tool.flwr.app.components] serverapp = "fedgraph.runtime.flower.text:server_app"``.
server_app = make_server_app(
    build_text_server, TextRunSettings.from_run_config, TEXT_ALIGNMENT
)

#: ``[tool.flwr.app.components] clientapp = "fedgraph.runtime.flower.text:client_app"``.
client_app = make_client_app(
    build_text_client, TextRunSettings.from_run_config, TEXT_ALIGNMENT
)

__all__ = [
    "TextRunSettings",
    "KEYS",
    "KEY_ALIASES",
    "build_text_server",
    "build_text_client",
    "describe_text_node",
    "TEXT_ALIGNMENT",
    "clear_caches",
    "server_app",
    "client_app",
]
