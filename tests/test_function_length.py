r"""No library function is longer than :data:`LIMIT` lines.

A function's length is counted from its ``def`` line to its last line,
without its docstring (documentation is not what makes a function hard to
read). Read with :mod:`ast`, over every module of ``fedgraph/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "fedgraph"
LIMIT = 60

#: ``"path/to/module.py:function"`` allowed over the limit this round, with why.
ALLOWED: dict[str, str] = {}


def _length(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    total = node.end_lineno - node.lineno + 1
    first = node.body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        total -= first.end_lineno - first.lineno + 1
    return total


def long_functions(root: Path = ROOT, limit: int = LIMIT) -> dict[str, int]:
    r"""``"module.py:name"`` → length of every function over ``limit``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = _length(node)
                if n > limit:
                    out[f"{rel}:{node.name}"] = n
    return out


def test_no_library_function_over_the_limit():
    found = long_functions()
    new = {k: n for k, n in found.items() if k not in ALLOWED}
    assert not new, f"functions over {LIMIT} lines (split them into steps): {new}"


def test_the_allow_list_holds_only_long_functions():
    stale = set(ALLOWED) - set(long_functions())
    assert not stale, f"no longer over {LIMIT} lines, drop from ALLOWED: {stale}"


def test_the_count_skips_docstrings_and_catches_long_bodies(tmp_path):
    doc = '    """' + "\n" * 70 + '    """\n'
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT))
    (tmp_path / "m.py").write_text(
        f"def documented():\n{doc}    return 1\n\n"
        f"def at_limit():\n{body[: -len('    x59 = 59') - 1]}\n"
        f"def over():\n{body}    return x0\n"
    )
    assert long_functions(tmp_path) == {"m.py:over": LIMIT + 2}
