r"""Reference pages generated from the code: the CLI (from the ``argparse``
parsers of :mod:`fedgraph.cli`) and the registries (datasets, partitioners,
KGE models and losses, training regimes, federated algorithms and their
settings).

The documentation build calls :func:`write_generated_pages`, so these pages
cannot drift from the code.
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
from pathlib import Path

from fedgraph.data.io import atomic_write_text
from fedgraph.registry import Registry


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


def _kwargs_cell(kwargs: dict[str, object]) -> str:
    r"""A class's keyword arguments with their defaults, for a table cell."""
    if not kwargs:
        return "—"
    return ", ".join(f"`{k}={v!r}`" for k, v in kwargs.items()).replace("|", "\\|")


def partitioners_table() -> str:
    r"""Markdown: one row per partitioner of the registry, with its names,
    class, own arguments (``--partition-kwargs``) and first docstring line."""
    from fedgraph.partition import partitioners

    rows = [
        "| name (`--strategy`) | class | own arguments (`--partition-kwargs`) | what |",
        "|---|---|---|---|",
    ]
    for cls, entry in zip(partitioners, partitioners.describe(), strict=True):
        names = f"`{entry['name']}`"
        if entry["aliases"]:
            names += " (" + ", ".join(f"`{a}`" for a in entry["aliases"]) + ")"
        rows.append(
            f"| {names} | `{entry['class']}` | {_kwargs_cell(entry['kwargs'])} "
            f"| {_first_line(cls)} |"
        )
    return "\n".join(rows)


def kge_models_table() -> str:
    r"""Markdown: one row per KGE model of the registry, with its own
    hyperparameters (``--model-kwargs``) and first docstring line."""
    from fedgraph.models.kge import models

    rows = [
        "| name (`--model`) | class | own hyperparameters (`--model-kwargs`) | what |",
        "|---|---|---|---|",
    ]
    for cls, entry in zip(models, models.describe(), strict=True):
        rows.append(
            f"| `{entry['name']}` | `{entry['class']}` | "
            f"{_kwargs_cell(entry['kwargs'])} | {_first_line(cls)} |"
        )
    return "\n".join(rows)


def rgcn_algorithms_table() -> str:
    r"""Markdown: one row per R-GCN method of the algorithm registry, with
    its settings (``--set``) and summary."""
    from fedgraph.federated.algorithms import algorithms

    rows = [
        "| name (`--algorithm`) | settings (`--set`) | what |",
        "|---|---|---|",
    ]
    for name, alg in algorithms("rgcn").items():
        rows.append(f"| `{name}` | {_kwargs_cell(alg.defaults())} | {alg.summary} |")
    return "\n".join(rows)


def losses_table() -> str:
    r"""Markdown: one row per loss of the registry (``--loss``), with its
    other names, own arguments and first docstring line."""
    from fedgraph.models.losses import losses

    return _component_rows(losses, "loss (`--loss`)", "own arguments")


def samplers_table() -> str:
    r"""Markdown: one row per negative sampler of the registry
    (``--sampler``), with its other names, own arguments
    (``sampler_kwargs``) and first docstring line."""
    from fedgraph.models.samplers import samplers

    return _component_rows(
        samplers, "sampler (`--sampler`)", "own arguments (`sampler_kwargs`)"
    )


def regimes_table() -> str:
    r"""Markdown: one row per training regime of the registry
    (``--regime``), with its other names, arguments (``regime_kwargs``) and
    first docstring line."""
    from fedgraph.training.regimes import regimes

    return _component_rows(regimes, "name (`--regime`)", "arguments (`regime_kwargs`)")


def _component_rows(registry: Registry, name: str, kwargs: str) -> str:
    r"""The rows of :func:`losses_table`, :func:`samplers_table` and
    :func:`regimes_table`."""
    rows = [f"| {name} | class | {kwargs} | what |", "|---|---|---|---|"]
    for cls, entry in zip(registry, registry.describe(), strict=True):
        names = ", ".join(f"`{n}`" for n in (entry["name"], *entry["aliases"]))
        rows.append(
            f"| {names} | `{entry['class']}` | {_kwargs_cell(entry['kwargs'])} "
            f"| {_first_line(cls)} |"
        )
    return "\n".join(rows)


#: The registry tables the hand-written pages include
#: (```` ```{include} reference/tables/NAME.inc ``` ````), written by
#: :func:`write_generated_pages` at every documentation build: a new model,
#: partitioner or R-GCN method appears in them with no edit of the pages.
TABLES = {
    "partitioners": partitioners_table,
    "kge-models": kge_models_table,
    "rgcn-algorithms": rgcn_algorithms_table,
    "losses": losses_table,
    "samplers": samplers_table,
    "regimes": regimes_table,
}


def _partitioner_section() -> list[str]:
    r"""The partitioners' heading and table."""
    return [
        "",
        "## Partitioners (`fedgraph.partition.partitioners`)",
        "",
        "`resolve_partitioner(NAME, num_clients, seed=..., **kwargs)`, "
        "`fedgraph partition DATA --strategy NAME --partition-kwargs KEY=VALUE`.",
        "",
        partitioners_table(),
    ]


def _model_section() -> list[str]:
    r"""The KGE models', losses' and training regimes' headings and tables."""
    return [
        "",
        "## KGE models and losses (`fedgraph.models.models`, `fedgraph.models.losses`)",
        "",
        "`resolve_model(NAME, num_entities, num_relations, dim, **kwargs)`, "
        "`fedgraph train --model NAME --model-kwargs KEY=VALUE --loss NAME`.",
        "",
        kge_models_table(),
        "",
        losses_table(),
        "",
        "## Negative samplers (`fedgraph.models.samplers.samplers`)",
        "",
        "`resolve_sampler(NAME, num_entities, num_negatives, triples=..., "
        "**sampler_kwargs)`, `fedgraph train --sampler NAME --sampler-kwargs "
        "KEY=VALUE`.",
        "",
        samplers_table(),
        "",
        "## Training regimes (`fedgraph.training.regimes.regimes`)",
        "",
        "`resolve_regime(NAME, **regime_kwargs)`, `fedgraph train --regime NAME`.",
        "",
        regimes_table(),
    ]


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
        "`load_dataset(NAME)`, `fedgraph info NAME`, `fedgraph train NAME`.",
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
    r"""Writes ``cli.md``, ``registries.md`` and the :data:`TABLES` (as
    ``tables/NAME.inc``) into ``folder`` (only when their text changed, so a
    rebuild does not re-read unchanged pages)."""
    pages = [("cli.md", cli_page()), ("registries.md", registries_page())]
    pages += [(f"tables/{name}.inc", make() + "\n") for name, make in TABLES.items()]
    written = []
    for name, text in pages:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            atomic_write_text(path, text)
        written.append(path)
    return written
