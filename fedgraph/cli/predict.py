r"""``fedgraph predict RUN --head NAME --relation NAME [--k 10] [--client N]``:
the top-k answers of a trained run, by name.

``RUN`` is a folder that :meth:`fedgraph.PipelineResult.save` wrote, or a
``fedgraph train`` run of a federated KGE algorithm (its best round's
models, rebuilt on the dataset it recorded).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from fedgraph.cli.options import non_negative, positive

#: how an error of the library names an argument -> its option
OPTIONS = {
    "`head`": "`--head`",
    "`tail`": "`--tail`",
    "`relation`": "`--relation`",
    "`entity`": "`--entity`",
    "`client`": "`--client`",
    "`k`": "`--k`",
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "predict",
        help="top-k answers of a trained run, by entity and relation name",
        description=(
            "Asks a trained run for the k best tails of (HEAD, RELATION, ?) or "
            "heads of (?, RELATION, TAIL), scored against every entity of one "
            "client's model and filtered (the known train and valid triples left "
            "out) unless --unfiltered; an R-GCN run gives the class probabilities "
            "of --entity. RUN: a folder PipelineResult.save wrote, or a "
            "`fedgraph train` run of a federated KGE algorithm."
        ),
    )
    p.add_argument("run", metavar="RUN", type=Path, help="the run folder")
    side = p.add_mutually_exclusive_group(required=True)
    side.add_argument("--head", help="the head entity: predict tails")
    side.add_argument("--tail", help="the tail entity: predict heads")
    side.add_argument("--entity", help="R-GCN: the entity to classify")
    p.add_argument("--relation", help="the relation (KGE runs)")
    p.add_argument("--k", type=positive, default=10, help="answers shown (default: 10)")
    p.add_argument(
        "--client",
        type=non_negative,
        default=None,
        help="the client whose model answers (needed when the run has one "
        "model per client)",
    )
    p.add_argument(
        "--unfiltered",
        action="store_true",
        help="keep the known train and valid triples among the answers",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def load_run(folder: Path) -> Any:
    r"""The :class:`~fedgraph.PipelineResult` of ``folder``."""
    from fedgraph.runtime.pipeline_result import (
        MODELS,
        PipelineResult,
        from_train_run,
    )

    if not folder.is_dir():
        raise FileNotFoundError(f"`RUN` {folder} is not a folder")
    if (folder / MODELS).is_file():
        return PipelineResult.load(folder)
    if (folder / "progress.json").is_file():
        return from_train_run(folder)
    raise FileNotFoundError(
        f"`RUN` {folder} holds neither {MODELS} (PipelineResult.save) nor "
        "progress.json (`fedgraph train`)"
    )


def run(args: argparse.Namespace) -> int:
    result = load_run(args.run)
    try:
        answers = result.predict(
            head=args.head,
            relation=args.relation,
            tail=args.tail,
            entity=args.entity,
            k=args.k,
            filtered=not args.unfiltered,
            client=args.client,
        )
    except ValueError as exc:
        message = str(exc)
        for name, option in OPTIONS.items():
            message = message.replace(name, option)
        raise ValueError(message) from None
    if args.json:
        print(json.dumps([a._asdict() for a in answers], indent=1))
        return 0
    for rank, a in enumerate(answers, 1):
        print(f"{rank:>3}  {a.score:>10.4f}  {a.name}")
    return 0
