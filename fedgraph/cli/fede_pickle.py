r"""``python -m fedgraph.cli.fede_pickle FILE --out DIR``: converts a
partition file published with FedE (``.pkl``) to a fedgraph partition folder
(:func:`fedgraph.partition.fede_pickle.load_fede_pickle`)::

    python -m fedgraph.cli.fede_pickle FB15k237-Fed3.pkl --out data/fb15k-237-fed3-published
    fedgraph train data/fb15k-237-fed3-published --protocol fede ...
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from fedgraph.cli.main import Parser
from fedgraph.cli.options import positive


def build_parser() -> Parser:
    p = Parser(
        prog="python -m fedgraph.cli.fede_pickle",
        description="Converts a FedE partition file (.pkl) to a fedgraph "
        "partition folder.",
    )
    p.add_argument("file", type=Path, help="FedE's pickled partition")
    p.add_argument("--out", required=True, type=Path, help="the folder to write")
    p.add_argument(
        "--num-entities",
        type=positive,
        default=None,
        help="the number of entities of the whole KG (default: the largest id + 1)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace OUT")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    from fedgraph.partition import save_partition
    from fedgraph.partition.fede_pickle import load_fede_pickle

    try:
        fed = load_fede_pickle(a.file, a.num_entities)
        save_partition(fed, a.out, overwrite=a.overwrite)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{fed!r} -> {a.out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
