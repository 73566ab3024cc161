r"""From ``fedgraph train`` to the round loop the arguments pass through at
most 12 functions, each once, only downward in the package layers
(``tests/test_layers.py``), and through the pipeline's runner
(:func:`fedgraph.runtime.pipeline_run.run_loop`): the Python stack is
captured when :func:`fedgraph.runtime.loop.run_federation` is first entered."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fedgraph.cli.main import main
from fedgraph.runtime.loop import run_federation

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_layers import ORDER  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "federated"))

pytestmark = pytest.mark.usefixtures("one_thread")

#: the most fedgraph functions between ``main`` and the round loop
MOST = 12


def _stack_at_loop(argv: list[str]) -> list[tuple[str, str]]:
    r"""``(module, function)`` of every fedgraph frame from ``main`` (first)
    to :func:`run_federation` (last) when ``main(argv)`` first enters it."""
    target = run_federation.__code__
    seen: list[list[tuple[str, str]]] = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code is target and not seen:
            stack = []
            while frame is not None:
                module = frame.f_globals.get("__name__", "")
                if module.startswith("fedgraph"):
                    stack.append((module, frame.f_code.co_name))
                frame = frame.f_back
            seen.append(stack[::-1])
            sys.setprofile(None)  # the rest of the run at full speed

    sys.setprofile(profile)
    try:
        assert main(argv) == 0
    finally:
        sys.setprofile(None)
    assert len(seen) == 1, "the round loop was never entered"
    stack = seen[0]
    assert stack[0] == ("fedgraph.cli.main", "main")
    assert stack[-1] == ("fedgraph.runtime.loop", "run_federation")
    return stack


def _layer(module: str) -> int | None:
    r"""The layer of a fedgraph module; :obj:`None` for a top-level helper
    module of no layer (``fedgraph.guard``'s lock decorator)."""
    package = module.split(".")[1] if module.count(".") else ""
    return ORDER.index(package) if package in ORDER else None


def _check_chain(stack: list[tuple[str, str]]) -> None:
    between = stack[1:-1]
    shown = " -> ".join(f"{m}.{f}" for m, f in stack)
    # the command runs the pipeline's runner, as `fedgraph.pipeline` does
    assert ("fedgraph.runtime.pipeline_run", "run_loop") in between, shown
    assert len(between) <= MOST, f"{len(between)} functions: {shown}"
    assert len(set(between)) == len(between), f"a function twice: {shown}"
    layers = [layer for m, _ in stack if (layer := _layer(m)) is not None]
    assert layers == sorted(layers, reverse=True), f"climbs back up: {shown}"


def _write_federation(root: Path) -> None:
    for c in range(2):
        d = root / f"client{c}"
        d.mkdir(parents=True)
        for split, ids in (("train", range(22)), ("valid", range(22, 26)),
                           ("test", range(26, 30))):  # fmt: skip
            lines = [f"e{i % 10}\tr{(i + c) % 3}\te{(3 * i + 1) % 10}" for i in ids]
            (d / f"{split}.txt").write_text("\n".join(lines) + "\n")


def test_kge_train_reaches_the_round_loop_in_at_most_12_functions(tmp_path):
    data = tmp_path / "fed"
    _write_federation(data)
    argv = ["train", str(data), "--algorithm", "fede", "--out", str(tmp_path / "run"),
            "--rounds", "1", "--local-epochs", "1", "--dim", "4", "--batch-size",
            "16", "--num-negatives", "2", "--quiet"]  # fmt: skip
    _check_chain(_stack_at_loop(argv))


def test_rgcn_train_reaches_the_round_loop_in_at_most_12_functions(tmp_path):
    from test_fedalign import toy_graph

    from fedgraph.partition.rdf_type import RDFTypePartitioner

    part = tmp_path / "toy-rdf"
    RDFTypePartitioner(2, num_types=2, seed=0)(toy_graph()).save(part)
    argv = ["train", str(part), "--model", "rgcn", "--algorithm", "fedalign",
            "--out", str(tmp_path / "run"), "--rounds", "1", "--local-epochs", "1",
            "--num-bases", "2", "--dim", "4", "--quiet"]  # fmt: skip
    _check_chain(_stack_at_loop(argv))


def test_text_train_reaches_the_round_loop_in_at_most_12_functions(tmp_path):
    pytest.importorskip("transformers")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
    from text_toy import save_tiny_model, write_toy_dbp5l

    data = write_toy_dbp5l(tmp_path / "dbp")
    model = save_tiny_model(tmp_path / "bert")
    argv = ["train", str(data), "--model", "text", "--encoder", str(model),
            "--algorithm", "fedmkgc", "--out", str(tmp_path / "run"), "--rounds",
            "1", "--eval-every", "1", "--batch-size", "6", "--max-length", "6",
            "--prefix-tokens", "2", "--quiet"]  # fmt: skip
    _check_chain(_stack_at_loop(argv))
