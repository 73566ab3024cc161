r"""The ``fedgraph`` command line.

Each sub-command lives in its own module of :mod:`fedgraph.cli` exposing
``register(subparsers)``, which adds its parser and sets ``func`` (a callable
taking the parsed ``argparse.Namespace`` and returning an exit code). The list
below is the registry.
"""

from __future__ import annotations

import argparse
import importlib
import shlex
import sys
from collections.abc import Sequence

from fedgraph import __version__

# The registry of sub-command modules, in the order ``fedgraph --help`` shows.
COMMANDS: list[str] = [
    "partition",
    "stats",
    "train",
    "datasets",
    "info",
    "unlearn",
    "fuse",
    "report",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fedgraph",
        description="Federated learning on knowledge graphs and RDF graphs.",
    )
    parser.add_argument("--version", action="version", version=__version__)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"fedgraph.cli.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    # the command as typed, recorded in results (``main(argv)`` from Python
    # records ``argv``, not the interpreter's command line)
    args.command_line = "fedgraph " + " ".join(shlex.quote(a) for a in argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError, KeyError) as exc:
        # User errors: one clear line, no traceback.
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"fedgraph {args.command}: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
