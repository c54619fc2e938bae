"""One governance root (adapters/base.py ``governance_root``, the daemon, the hook client): the installed workspace
governs every call, never a ``.orchestration/`` an agent made nearer to its cwd."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator import hookclient
from orchestrator.daemon import server as daemon
from orchestrator.config import workspace
from orchestrator.adapters.base import governance_root, run_hook

SESSION = "ff186b18-6b37-4f8d-9234-24fb54551cf0"
NESTED_INTENTS = "active_intents:\n  - id: ALL\n    name: all\n    status: IN_PROGRESS\n    owned_scope: ['**']\n"


def _nested(ws: Path) -> Path:
    """A ``.orchestration/`` under the scope (as if an agent had made one), with an intent that owns everything."""
    nested = ws / "src" / "pkg"
    nested.mkdir(parents=True)
    workspace.init(nested)
    (nested / ".orchestration" / "active_intents.yaml").write_text(NESTED_INTENTS)
    return nested


def _events(ws: Path, cwd: Path) -> tuple[dict, dict]:
    select = {"hook_event_name": "PreToolUse", "tool_name": "mcp__orchestrator__select_active_intent",
              "session_id": SESSION, "cwd": str(ws), "tool_input": {"intent_id": "INT-1"}}
    write = {"hook_event_name": "PreToolUse", "tool_name": "Write", "session_id": SESSION, "cwd": str(cwd),
             "tool_input": {"file_path": str(cwd / "new.py"), "content": "x = 1\n"}}
    return select, write


@pytest.mark.parametrize("how", ["ORCH_ROOT", "CLAUDE_PROJECT_DIR"])
def test_a_nested_orchestration_never_governs_calls_made_inside_it(ws: Path, how: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    nested = _nested(ws)
    env = {"ORCH_ROOT": str(ws)} if how == "ORCH_ROOT" else {}
    if how == "CLAUDE_PROJECT_DIR":
        monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(ws))
    monkeypatch.delenv("ORCH_ROOT", raising=False)
    select, write = _events(ws, nested)
    assert governance_root(write, env) == ws
    assert run_hook("claude-code", json.dumps(select), env=env).stdout == ""
    # judged by the outer workspace: the session's INT-1 owns src/**, so the write is allowed there...
    assert run_hook("claude-code", json.dumps(write), env=env).stdout == ""
    # ...and nothing was read from or written to the nested one (its session store stays empty)
    assert not (nested / ".orchestration" / "run" / "sessions").exists()


def test_the_daemon_governs_its_own_root_whatever_the_event_says(ws: Path) -> None:
    nested = _nested(ws)
    select, write = _events(ws, nested)
    d = daemon.Daemon(ws, idle_timeout=60)
    for event in (select, write):
        answer = hookclient.decode_answer(d.handle_request(hookclient.encode_request("claude-code", {}, json.dumps(
            event).encode())))
        assert answer is not None and answer[:2] == (0, b""), answer
    assert not (nested / ".orchestration" / "run" / "sessions").exists()


@pytest.mark.parametrize("tool_input", [
    {"file_path": "src/x/.orchestration/active_intents.yaml", "content": "active_intents: []\n"},
    {"command": "mkdir -p src/x/.orchestration"},
    {"command": "cp -r .orchestration src/copy/.orchestration"},
])
def test_no_tool_may_create_a_nested_orchestration(ws: Path, tool_input: dict) -> None:
    select, _ = _events(ws, ws)
    env = {"ORCH_ROOT": str(ws)}
    run_hook("claude-code", json.dumps(select), env=env)
    tool = "Bash" if "command" in tool_input else "Write"
    if tool == "Write":
        tool_input = {**tool_input, "file_path": str(ws / tool_input["file_path"])}
    event = {"hook_event_name": "PreToolUse", "tool_name": tool, "session_id": SESSION, "cwd": str(ws),
             "tool_input": tool_input}
    out = json.loads(run_hook("claude-code", json.dumps(event), env=env).stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and '"governance-file"' in out["permissionDecisionReason"]


def test_the_client_and_the_boundary_know_the_same_project_variables() -> None:
    from orchestrator.adapters import base

    assert hookclient.PROJECT_VARS == ("ORCH_ROOT", *base.PROJECT_VARS)
