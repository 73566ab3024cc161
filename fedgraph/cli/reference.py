r"""Reference pages generated from the code: the CLI (from the ``argparse``
parsers of :mod:`fedgraph.cli`) and the registries (datasets, partitioners,
KGE models and losses, federated algorithms and their settings).

The documentation build calls :func:`write_generated_pages`, so these pages
cannot drift from the code.
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
from pathlib import Path

from fedgraph.report._io import atomic_write_text


def _rst_to_md(text: str) -> str:
    r"""The reST inline markup of fedgraph's docstrings as Markdown: links,
    literals, math and cross-references."""
    text = re.sub(r"`\"?([^`<]+?)\"?\s*<([^>]+)>`_", r"[\1](\2)", text)
    text = re.sub(r":math:`([^`]+)`", r"$\1$", text)
    text = re.sub(r":\w+:`~?(?:[\w.]+\.)?([^`]+)`", r"`\1`", text)
    return text.replace("``", "`")


def _first_line(obj: object) -> str:
    doc = inspect.getdoc(obj) or ""
    para = doc.split("\n\n")[0].replace("\n", " ").strip().rstrip(":")
    return _rst_to_md(para).replace("|", "\\|")


def cli_page() -> str:
    r"""Markdown: ``fedgraph --help`` and every sub-command's help text."""
    from fedgraph.cli.main import COMMANDS, build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "90"  # argparse wraps at the terminal width
    try:
        parser = build_parser()
        sub = next(
            a for a in parser._actions if isinstance(a, argparse._SubParsersAction)
        )
        parts = [
            "# Command line",
            "",
            "Every command prints this text with `--help`. Bad input (a missing "
            "file, an unknown name, a malformed value) ends with a one-line error "
            "naming it and exit status 2.",
            "",
            "```text",
            parser.format_help().rstrip(),
            "```",
        ]
        for name in COMMANDS:
            parts += [
                "",
                f"## `fedgraph {name}`",
                "",
                "```text",
                sub.choices[name].format_help().rstrip(),
                "```",
            ]
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    return "\n".join(parts) + "\n"


def _names(cls: type, aliases: dict[str, type]) -> str:
    names = [k for k, v in aliases.items() if v is cls]
    return ", ".join(f"`{n}`" for n in names)


def _dataset_rows() -> list[str]:
    r"""The datasets table's rows."""
    from fedgraph.data import datasets

    out: list[str] = []
    for cls in datasets:
        al = ", ".join(f"`{a}`" for a in cls.aliases)
        out.append(
            f"| `{cls.name}` | {al} | {cls.kind} | `{cls.__module__}.{cls.__name__}` "
            f"| {_first_line(cls)} |"
        )
    return out


def _partitioner_section() -> list[str]:
    r"""The partitioners' heading and table."""
    from fedgraph.partition import aliases, partitioners

    out: list[str] = []
    out += [
        "",
        "## Partitioners (`fedgraph.partition.partitioners`)",
        "",
        "`resolve_partitioner(NAME, num_clients, seed=...)`, "
        "`fedgraph partition DATA --strategy NAME`.",
        "",
        "| strategy names | class | what |",
        "|---|---|---|",
    ]
    for cls in partitioners:
        out.append(
            f"| {_names(cls, aliases)} | `{cls.__name__}` | {_first_line(cls)} |"
        )
    return out


def _model_section() -> list[str]:
    r"""The KGE models' and losses' heading and table."""
    from fedgraph.models import losses, models

    out: list[str] = []
    out += [
        "",
        "## KGE models and losses (`fedgraph.models.models`, `fedgraph.models.losses`)",
        "",
        "`resolve_model(NAME, ...)`, `fedgraph train --model NAME --loss NAME`.",
        "",
        "| kind | class | what |",
        "|---|---|---|",
    ]
    for kind, reg in (("model", models), ("loss", losses)):
        for cls in reg:
            out.append(f"| {kind} | `{cls.__name__}` | {_first_line(cls)} |")
    return out


def registries_page() -> str:
    r"""Markdown: one table per registry, read from the registries themselves."""
    from fedgraph.federated.algorithms import docs_table

    out = [
        "# Datasets, partitioners, models and algorithms",
        "",
        "These tables are generated from fedgraph's registries when the "
        "documentation is built. A name is matched ignoring case, `-` and `_`.",
        "",
        "## Datasets (`fedgraph.data.datasets`)",
        "",
        "`load_dataset(NAME)`, `fedgraph info NAME`, `fedgraph train --data NAME`.",
        "",
        "| name | aliases | kind | class | what |",
        "|---|---|---|---|---|",
    ]
    out += _dataset_rows()
    out += _partitioner_section()
    out += _model_section()
    out += [
        "",
        "## Federated algorithms (`fedgraph.federated.algorithms`)",
        "",
        "`fedgraph train --algorithm NAME` (R-GCN ones with `--model rgcn`), "
        "`fedgraph algorithms`. An algorithm's own settings are passed as "
        "`--set KEY=VALUE`. `independent` and `centralized` are the two KGE "
        "baselines (no federation).",
        "",
        docs_table(),
    ]
    return "\n".join(out) + "\n"


def write_generated_pages(folder: Path) -> list[Path]:
    r"""Writes ``cli.md`` and ``registries.md`` into ``folder`` (only when
    their text changed, so a rebuild does not re-read unchanged pages)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in (("cli.md", cli_page()), ("registries.md", registries_page())):
        path = folder / name
        if not path.exists() or path.read_text() != text:
            atomic_write_text(path, text)
        written.append(path)
    return written
