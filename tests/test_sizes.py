"""No module of orchestrator/ over 600 lines, no function over 80 (issue 16: "the house by concern").

A module that grows past the limit holds more than one concern: split it by concern (``classify_py/`` by rule
family, ``post/preimage.py`` out of ``post/trace.py``), not by line count. A function past the limit is split into
named steps. No exceptions list. ``orchestrator/data/`` is excluded: the demo project and templates there are
data copied into workspaces, not orchestrator's code (mypy excludes it for the same reason).
"""

from __future__ import annotations

import ast
from pathlib import Path

import orchestrator

PACKAGE = Path(orchestrator.__file__).parent
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80


def _sources() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if "data" not in p.relative_to(PACKAGE).parts[:1]]


def _too_long(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    rel = path.relative_to(PACKAGE.parent) if path.is_relative_to(PACKAGE.parent) else path
    out = []
    lines = len(text.splitlines())
    if lines > MAX_MODULE_LINES:
        out.append(f"{rel}: {lines} lines (module limit {MAX_MODULE_LINES})")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # from the `def` line to the last line of the body (decorators not counted), docstring included
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                out.append(f"{rel}:{node.lineno} {node.name}: {length} lines (function limit {MAX_FUNCTION_LINES})")
    return out


def test_no_module_or_function_over_the_limits() -> None:
    found = [msg for path in _sources() for msg in _too_long(path)]
    assert found == []


def test_the_check_sees_long_modules_and_functions(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    src = tmp_path / "long.py"
    src.write_text("def f():\n" + body + "\n" + "\n" * MAX_MODULE_LINES, encoding="utf-8")
    found = _too_long(src)
    assert len(found) == 2 and "module limit" in found[0] and "f: 81 lines" in found[1]
    assert _sources()  # the real package is scanned
