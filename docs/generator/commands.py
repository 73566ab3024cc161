r"""The commands the results files record, written for a page."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fedgraph.report.files import load_json


def recorded_command(doc: dict[str, Any]) -> str:
    r"""The command a results file records (a run's ``settings.command``, or
    a benchmark script's top-level ``command``), with the machine's data folder
    written ``$FEDGRAPH_DATA``, a folder in the system's temporary folder
    written ``runs/`` and its last name, and ``fedgraph train``'s dataset as
    its ``DATASET`` argument (runs recorded while ``--data DATASET`` was
    accepted too record that spelling)."""
    cmd = str((doc.get("settings") or {}).get("command") or doc.get("command") or "")
    cmd = re.sub(r"^(fedgraph train\b.*?) --data ", r"\1 ", cmd)
    cmd = re.sub(r"\S*/shared/datasets", "$FEDGRAPH_DATA", cmd)
    cmd = re.sub(r"/tmp/(?:[^\s/]+/)*([^\s/]+)", r"runs/\1", cmd)
    return re.sub(r"\.devdata/", "$FEDGRAPH_DATA/fedlu-fb15k-237/", cmd)


def recorded_commands(doc: dict[str, Any]) -> list[str]:
    r"""The commands a results file records: its run's, or for a privacy
    benchmark's file (``{"results": ..., "audits": ...}``, see
    :mod:`fedgraph.report.privacy`) the run's and then each audit's."""
    if "results" not in doc or "audits" not in doc:
        return [c for c in [recorded_command(doc)] if c]
    cmds = [recorded_command(doc["results"])]
    cmds += [recorded_command({"settings": a}) for a in doc["audits"].values()]
    return [c for c in cmds if c]


def commands_list(results: Path, names: Sequence[str]) -> str:
    r"""Markdown: one bullet per results file with the commands it records."""
    lines = []
    for name in dict.fromkeys(names):
        doc = load_json(results / name)
        if doc is None:
            continue
        cmds = "; ".join(f"`{c}`" for c in recorded_commands(doc))
        lines.append(f"- `{name}`: {cmds or 'not recorded'}")
    return "\n".join(lines)
