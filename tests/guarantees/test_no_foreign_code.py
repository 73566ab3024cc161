r"""No foreign code on any load path.

A run folder, a checkpoint or a recorded upload may come from someone else,
so nothing fedgraph reads may run code: every ``torch.load`` reads with
``weights_only=True``, nothing unpickles without an allow-list, and nothing
evaluates text. :func:`test_the_package_loads_nothing_that_runs_code` holds
this over the source of the package (and the scripts beside it) with
:mod:`ast`; :func:`test_audit_of_a_run_folder_with_a_malicious_upload_runs_no_code`
is the finding it guards against: ``fedgraph audit`` used to unpickle a
run folder's recorded uploads with ``weights_only=False``.
"""

from __future__ import annotations

import ast
import pathlib
from pathlib import Path

import pytest
import torch

from fedgraph.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
#: the source that reads files users hand it
SCANNED = ("fedgraph", "benchmarks", "experiments", "examples", "scripts")

#: calls that run code from what they read, whatever their arguments
FORBIDDEN = {
    "pickle.load": "unpickles without an allow-list",
    "pickle.loads": "unpickles without an allow-list",
    "pickle.Unpickler": "unpickles without an allow-list (subclass it and "
    "override `find_class`)",
    "_pickle.load": "unpickles without an allow-list",
    "_pickle.loads": "unpickles without an allow-list",
    "dill.load": "unpickles",
    "dill.loads": "unpickles",
    "joblib.load": "unpickles",
    "marshal.load": "loads code objects",
    "marshal.loads": "loads code objects",
    "shelve.open": "unpickles",
    "yaml.unsafe_load": "constructs arbitrary objects",
    "yaml.full_load": "constructs arbitrary objects",
    "builtins.eval": "evaluates text",
    "builtins.exec": "runs text",
}
SAFE_YAML_LOADERS = {"yaml.SafeLoader", "yaml.CSafeLoader"}


def _aliases(tree: ast.Module) -> dict[str, str]:
    r"""Local name → dotted name it was imported as (``import x as y``,
    ``from x import y``); builtins map to ``builtins.NAME``."""
    names = {"eval": "builtins.eval", "exec": "builtins.exec"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    names[a.asname] = a.name
                else:
                    top = a.name.split(".")[0]
                    names[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    r"""The dotted name of ``node`` (``torch.load``, ``np.load`` as
    ``numpy.load``) after the module's imports, or :obj:`None`."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(parts)])


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_const(node: ast.expr | None, value: object) -> bool:
    return isinstance(node, ast.Constant) and node.value is value


def _call_finding(call: ast.Call, name: str, aliases: dict[str, str]) -> str | None:
    r"""Why ``call`` (to ``name``) may run code from what it reads, or
    :obj:`None`."""
    if name in FORBIDDEN:
        return f"{name}: {FORBIDDEN[name]}"
    if name in ("torch.load", "torch.serialization.load"):
        if not _is_const(_keyword(call, "weights_only"), True):
            return f"{name} without weights_only=True"
    if name == "numpy.load":
        allow = _keyword(call, "allow_pickle")
        if allow is not None and not _is_const(allow, False):
            return "numpy.load with allow_pickle"
    if name == "yaml.load":
        loader = _keyword(call, "Loader")
        if len(call.args) > 1:
            loader = call.args[1]
        if loader is None or _dotted(loader, aliases) not in SAFE_YAML_LOADERS:
            return "yaml.load without yaml.SafeLoader"
    return None


def _class_finding(cls: ast.ClassDef, aliases: dict[str, str]) -> str | None:
    r"""An unpickler class without an allow-list (no ``find_class``)."""
    bases = {_dotted(b, aliases) for b in cls.bases}
    if not bases & {"pickle.Unpickler", "_pickle.Unpickler"}:
        return None
    methods = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    if "find_class" in methods:
        return None
    return f"class {cls.name}: a pickle.Unpickler without find_class"


def findings(source: str, filename: str = "<source>") -> list[str]:
    r"""``"FILE:LINE: why"`` for every load in ``source`` that may run code."""
    tree = ast.parse(source, filename)
    aliases = _aliases(tree)
    out = []
    for node in ast.walk(tree):
        why = None
        if isinstance(node, ast.Call):
            name = _dotted(node.func, aliases)
            # a forbidden callable subclassed with an allow-list is checked
            # at its class; calling the base class itself is not
            why = None if name is None else _call_finding(node, name, aliases)
        elif isinstance(node, ast.ClassDef):
            why = _class_finding(node, aliases)
        if why:
            out.append(f"{filename}:{node.lineno}: {why}")
    return out


def _sources() -> list[Path]:
    files = []
    for folder in SCANNED:
        if (ROOT / folder).is_dir():
            files += sorted((ROOT / folder).rglob("*.py"))
    return files


def test_the_package_loads_nothing_that_runs_code():
    files = _sources()
    assert any(p.parts[-2:] == ("privacy", "record.py") for p in files)
    bad = []
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        bad += findings(path.read_text(encoding="utf-8"), rel)
    assert bad == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import torch\ntorch.load(p)", "torch.load without weights_only=True"),
        (
            "import torch\ntorch.load(p, weights_only=False)",
            "torch.load without weights_only=True",
        ),
        (
            "from torch import load as L\nL(p, map_location='cpu')",
            "torch.load without weights_only=True",
        ),
        (
            "import torch.serialization as s\ns.load(p, weights_only=flag)",
            "torch.serialization.load without weights_only=True",
        ),
        ("import pickle\npickle.load(f)", "pickle.load: unpickles without"),
        ("import pickle as pk\npk.loads(b)", "pickle.loads: unpickles without"),
        ("from pickle import loads\nloads(b)", "pickle.loads: unpickles without"),
        ("import pickle\npickle.Unpickler(f).load()", "pickle.Unpickler: unpickles"),
        (
            "import pickle\nclass U(pickle.Unpickler):\n    pass",
            "class U: a pickle.Unpickler without find_class",
        ),
        (
            "import numpy as np\nnp.load(p, allow_pickle=True)",
            "numpy.load with allow_pickle",
        ),
        ("import yaml\nyaml.load(t)", "yaml.load without yaml.SafeLoader"),
        (
            "import yaml\nyaml.load(t, Loader=yaml.Loader)",
            "yaml.load without yaml.SafeLoader",
        ),
        ("eval(text)", "builtins.eval: evaluates text"),
        ("exec(text)", "builtins.exec: runs text"),
        ("import marshal\nmarshal.loads(b)", "marshal.loads: loads code objects"),
    ],
)
def test_the_scan_finds_each_load_that_runs_code(source, expected):
    (finding,) = findings(source, "x.py")
    assert finding.startswith("x.py:") and expected in finding


@pytest.mark.parametrize(
    "source",
    [
        "import torch\ntorch.load(p, weights_only=True, map_location='cpu')",
        "import numpy as np\nnp.load(p)\nnp.load(p, allow_pickle=False)",
        "import yaml\nyaml.load(t, Loader=yaml.SafeLoader)\nyaml.safe_load(t)",
        "import ast\nast.literal_eval(text)",
        "import pickle\nclass U(pickle.Unpickler):\n"
        "    def find_class(self, m, n):\n        raise pickle.UnpicklingError(n)",
        "import re\nre.compile(p).match(s)\nmodel.eval()",
    ],
)
def test_the_scan_passes_loads_that_run_no_code(source):
    assert findings(source, "x.py") == []


class _WritesMarker:
    r"""A pickle whose loading writes a file: what a hostile upload holds."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (pathlib.Path.write_text, (self.marker, "code ran"))


def _write_federation(root: Path) -> None:
    r"""Two clients sharing three of their six entities; distinct triples
    (train: tail offset 1 + c per relation; valid: 3; test: 4)."""
    for c in range(2):
        d = root / f"client{c}"
        d.mkdir(parents=True)
        ents = [f"e{i}" for i in range(c * 3, c * 3 + 6)]
        splits = {
            "train": [(k, r, 1 + c) for r in range(2) for k in range(6)],
            "valid": [(k, 0, 3) for k in range(2)],
            "test": [(k, 1, 4) for k in range(2)],
        }
        for split, rows in splits.items():
            lines = [f"{ents[k]}\tr{r}\t{ents[(k + o) % 6]}" for k, r, o in rows]
            (d / f"{split}.txt").write_text("\n".join(lines) + "\n")


def _recorded_run(tmp_path: Path) -> Path:
    data, out = tmp_path / "fed", tmp_path / "run"
    _write_federation(data)
    argv = ["train", str(data), "--algorithm", "fede", "--out", str(out)]
    argv += ["--rounds", "1", "--local-epochs", "1", "--dim", "4"]
    argv += ["--batch-size", "8", "--num-negatives", "2", "--eval-every", "1"]
    assert main([*argv, "--record-uploads", "last", "--quiet"]) == 0
    return out


@pytest.mark.parametrize("name", ["round-0001.pt", "registration.pt"])
def test_audit_of_a_run_folder_with_a_malicious_upload_runs_no_code(
    tmp_path, capsys, name
):
    out = _recorded_run(tmp_path)
    upload = out / "uploads" / name
    assert upload.is_file()
    marker = tmp_path / "marker"
    legit = torch.load(upload, weights_only=True)
    # the recorded structure, with one object that runs code when unpickled
    hostile = {**legit, "round": _WritesMarker(marker)}
    if name == "registration.pt":
        hostile = {**legit, 0: _WritesMarker(marker)}
    torch.save(hostile, upload)
    capsys.readouterr()
    rc = main(["audit", str(out), "--attack", "membership"])
    err = capsys.readouterr().err
    assert not marker.exists()
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith("fedgraph audit: error: ")
    assert str(upload) in err
    assert "holds Python objects other than tensors and plain data" in err
    assert not (out / "audit-membership.json").exists()
