"""The engine reads no agent's response shape: adapters hand it a ``models.ToolResult``.

Claude Code's ``tool_response`` (``originalFile``, ``structuredPatch``, ``interrupted``…), Gemini CLI's
``returnDisplay`` (``originalContent``, ``isNewFile``) and the like are known to ``orchestrator/adapters/`` and the
reference loop (``orchestrator/agent/``) only. Checked on the syntax tree: any string constant in code (docstrings,
which may name them in prose, excepted) equal to one of those keys, anywhere else in the package, fails.
"""

from __future__ import annotations

import ast
from pathlib import Path

import orchestrator

PACKAGE = Path(orchestrator.__file__).parent
#: where agent-specific shapes belong
ADAPTER_DIRS = ("adapters", "agent")
#: keys of the agents' tool responses (Claude Code / Codex, Gemini CLI, jsdiff hunks inside structuredPatch)
AGENT_KEYS = frozenset({
    "tool_response", "originalFile", "structuredPatch", "oldStart", "oldLines", "newStart", "newLines",
    "interrupted", "isImage", "noOutputExpected", "userModified",
    "returnDisplay", "originalContent", "newContent", "isNewFile", "llmContent",
})


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring constants (module, class and function bodies' first expression)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _engine_files() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py"))
            if p.relative_to(PACKAGE).parts[0] not in ADAPTER_DIRS]


def agent_keys_in(path: Path) -> list[str]:
    """``line: key`` for each agent response key used as a string in the code of ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    return [f"{node.lineno}: {node.value}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in AGENT_KEYS
            and id(node) not in docs]


def test_the_engine_reads_no_agent_response_key() -> None:
    files = _engine_files()
    assert any(p.name == "pipeline.py" for p in files) and any(p.parent.name == "post" for p in files)
    found = {str(p.relative_to(PACKAGE)): hits for p in files if (hits := agent_keys_in(p))}
    assert found == {}, ("agent response keys outside orchestrator/adapters/ (translate them into a "
                         f"models.ToolResult in the adapter): {found}")


def test_the_check_sees_keys_in_code_but_not_in_docstrings(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('"""Reads ``originalFile``."""\n\ndef f(r):\n    """structuredPatch"""\n'
                      '    return r.get("originalFile"), r["isNewFile"], "orch: interrupted"\n')
    assert agent_keys_in(sample) == ["5: originalFile", "5: isNewFile"]
    assert agent_keys_in(PACKAGE / "adapters" / "claude_code.py")  # where they do belong
