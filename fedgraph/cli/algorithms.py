r"""``fedgraph algorithms``: the registered federated algorithms and their
settings (the table of ``docs/federated.md``, generated from the registry)."""

from __future__ import annotations

import argparse
import json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "algorithms",
        help="list the registered federated algorithms and their settings",
        description=(
            "Prints every registered federated algorithm with its family and "
            "its own settings (default, allowed values, meaning) as a Markdown "
            "table; `fedgraph train --set KEY=VALUE` and the Flower run config "
            "(`extra.KEY`, `set`) take these settings."
        ),
    )
    p.add_argument("--family", default=None, help="only this family (kge, rgcn, text)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def rows(family: str | None = None) -> list[dict[str, object]]:
    r"""One ``{"name", "family", "summary", "settings"}`` per algorithm."""
    from fedgraph.federated.algorithms import algorithms, allowed

    return [
        {
            "name": a.name,
            "family": a.family,
            "summary": a.summary,
            "settings": [
                {
                    "name": f.name,
                    "default": f.default,
                    "allowed": allowed(f),
                    "help": f.metadata["help"],
                }
                for f in a.fields()
            ],
        }
        for a in algorithms(family).values()
    ]


def run(args: argparse.Namespace) -> int:
    from fedgraph.federated.algorithms import FAMILIES, docs_table

    if args.family is not None and args.family not in FAMILIES:
        raise ValueError(f"`--family` must be one of {FAMILIES} (got {args.family!r})")
    if args.json:
        print(json.dumps(rows(args.family), indent=2))
    else:
        print(docs_table(args.family))
    return 0
