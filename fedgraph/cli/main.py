r"""The ``fedgraph`` command line.

Each sub-command lives in its own module of :mod:`fedgraph.cli` exposing
``register(subparsers)``, which adds its parser and sets ``func`` (a callable
taking the parsed ``argparse.Namespace`` and returning an exit code). The list
below is the registry.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import shlex
import sys
import warnings
from collections.abc import Sequence
from typing import NoReturn

from fedgraph import __version__
from fedgraph.errors import RunFailed
from fedgraph.progress import progress_bar

# The registry of sub-command modules, in the order ``fedgraph --help`` shows.
COMMANDS: list[str] = [
    "partition",
    "stats",
    "train",
    "predict",
    "datasets",
    "info",
    "unlearn",
    "fuse",
    "algorithms",
    "audit",
    "report",
    "flower-run",
]


class Parser(argparse.ArgumentParser):
    r"""An ``ArgumentParser`` whose errors are one line (``fedgraph train:
    error: argument --batch-size: must be a positive integer (got 0)``),
    exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="fedgraph",
        description="Federated learning on knowledge graphs and RDF graphs.",
        epilog="Exit codes: 0 success, 2 bad input, 1 failure.",
    )
    parser.add_argument("--version", action="version", version=__version__)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name in COMMANDS:
        importlib.import_module(f"fedgraph.cli.{name.replace('-', '_')}").register(sub)
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
    show = warnings.showwarning
    warnings.showwarning = _one_line_warning
    quiet = bool(getattr(args, "quiet", False))
    log = logging.getLogger("fedgraph")
    level = log.level
    notes = _notes(quiet)
    try:
        # a bar that moves with every batch and ranked query of the command
        # (``train`` opens its own, per round)
        with progress_bar(
            args.command, unit="step", enabled=args.command in BARS and not quiet
        ):
            return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError, FileExistsError, KeyError) as exc:
        # User errors: one clear line, no traceback.
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"fedgraph {args.command}: error: {msg}", file=sys.stderr)
        return 2
    except PermissionError as exc:  # a folder the user cannot write
        print(f"fedgraph {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except (RunFailed, OSError) as exc:
        # The run itself failed (it diverged, the disk is full): one line, 1.
        print(f"fedgraph {args.command}: failed: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"fedgraph {args.command}: interrupted", file=sys.stderr)
        return 130
    finally:
        warnings.showwarning = show
        log.removeHandler(notes)
        log.setLevel(level)


#: commands whose whole run is one progress bar
BARS = ("fuse", "unlearn", "stats")


def _notes(quiet: bool) -> logging.Handler:
    r"""Shows the library's notes (``logging.getLogger("fedgraph")`` at
    ``INFO``, e.g. that kernels are being compiled) as ``fedgraph: …`` lines
    on stderr, unless ``quiet``; returns the handler to remove."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("fedgraph: %(message)s"))
    handler.setLevel(logging.WARNING if quiet else logging.INFO)
    log = logging.getLogger("fedgraph")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    return handler


def _one_line_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: object = None,
    line: str | None = None,
) -> None:
    # a user reads "fedgraph: warning: ...", not a source line
    print(f"fedgraph: warning: {message}", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
