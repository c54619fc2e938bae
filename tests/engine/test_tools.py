from __future__ import annotations

import pytest

from orchestrator.core.models import Kind
from orchestrator.engine.tools import lookup, patch_paths, to_call


@pytest.mark.parametrize(
    ("tool", "tool_input", "kind", "paths"),
    [
        # Claude Code
        ("Read", {"file_path": "/r/a.py"}, Kind.READ, ["/r/a.py"]),
        ("Write", {"file_path": "a.py", "content": "x"}, Kind.WRITE, ["a.py"]),
        ("Edit", {"file_path": "a.py", "old_string": "a", "new_string": "b"}, Kind.EDIT, ["a.py"]),
        ("MultiEdit", {"file_path": "a.py", "edits": []}, Kind.EDIT, ["a.py"]),
        ("NotebookEdit", {"notebook_path": "n.ipynb"}, Kind.EDIT, ["n.ipynb"]),
        ("Glob", {"pattern": "**"}, Kind.META, []),
        ("Grep", {"pattern": "x"}, Kind.META, []),
        ("Task", {"prompt": "x"}, Kind.META, []),
        ("TodoWrite", {"todos": []}, Kind.META, []),
        ("WebFetch", {"url": "u"}, Kind.META, []),
        ("mcp__orchestrator__select_active_intent", {"intent_id": "A"}, Kind.META, []),
        # Gemini CLI
        ("read_file", {"absolute_path": "/r/a"}, Kind.READ, ["/r/a"]),
        ("write_file", {"file_path": "a"}, Kind.WRITE, ["a"]),
        ("replace", {"file_path": "a", "old_string": "x"}, Kind.EDIT, ["a"]),
        # Cline / Roo
        ("write_to_file", {"path": "a"}, Kind.WRITE, ["a"]),
        ("apply_diff", {"path": "a", "diff": "..."}, Kind.EDIT, ["a"]),
        ("replace_in_file", {"path": "a"}, Kind.EDIT, ["a"]),
        # seed loop
        ("edit_file", {"path": "a"}, Kind.EDIT, ["a"]),
        ("list_files", {"path": "."}, Kind.META, []),
        ("check_logs", {}, Kind.META, []),
    ],
)
def test_registry(tool: str, tool_input: dict, kind: Kind, paths: list[str]) -> None:
    call = to_call(tool, tool_input, session_id="s")
    assert call.kind is kind
    assert call.paths == paths
    assert call.session_id == "s"


@pytest.mark.parametrize("tool", ["Bash", "run_shell_command", "execute_command", "run_command", "shell"])
def test_exec_tools_carry_the_command(tool: str) -> None:
    call = to_call(tool, {"command": "ls -la"})
    assert call.kind is Kind.EXEC and call.command == "ls -la"


def test_codex_argv_is_unwrapped() -> None:
    assert to_call("shell", {"command": ["bash", "-lc", "rm -rf x"]}).command == "rm -rf x"
    assert to_call("shell", {"command": ["ls", "a b"]}).command == "ls 'a b'"


def test_apply_patch_targets() -> None:
    patch = ("*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n*** Add File: src/new.py\n+z\n"
             "*** Delete File: old.py\n*** Update File: b.py\n*** Move to: c.py\n*** End Patch\n")
    assert patch_paths(patch) == ["src/a.py", "src/new.py", "old.py", "b.py", "c.py"]
    assert to_call("apply_patch", {"command": patch}).paths == ["src/a.py", "src/new.py", "old.py", "b.py", "c.py"]


def test_unknown_tools_are_never_safe() -> None:
    call = to_call("mcp__github__create_file", {"path": "x.py", "content": "y"})
    assert call.kind is Kind.UNKNOWN and call.kind.mutating
    assert call.paths == ["x.py"]
    assert lookup("frobnicate") is None


def test_policy_override() -> None:
    assert lookup("mcp__github__get_issue", {"mcp__github__get_issue": "read"})[0] is Kind.READ
    assert to_call("Write", {"file_path": "a"}, overrides={"Write": "read"}).kind is Kind.READ


def test_malformed_input_is_tolerated() -> None:
    call = to_call("Write", None)  # type: ignore[arg-type]
    assert call.kind is Kind.WRITE and call.paths == []
