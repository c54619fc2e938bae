"""Cursor adapter on payloads from the published hooks reference."""
from __future__ import annotations

import json
from pathlib import Path

from orchestrator.adapters.base import run_hook
from orchestrator.engine.pipeline import Governor


def hook(event: dict, **env: str) -> dict:
    result = run_hook("cursor", json.dumps(event), env=env)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def error_of(answer: dict) -> dict:
    assert answer["permission"] == answer["decision"]
    return json.loads(answer["agent_message"][answer["agent_message"].index("{"):])


def select(payload) -> dict:
    mcp = {**payload("cursor", "beforeShellExecution"), "hook_event_name": "beforeMCPExecution",
           "tool_name": "select_active_intent", "tool_input": json.dumps({"intent_id": "INT-1"}),
           "command": "python -m orchestrator mcp"}
    return hook(mcp)


def test_pre_tool_use_write_needs_intent_then_scope(payload, ws: Path) -> None:
    answer = hook(payload("cursor", "preToolUse-Write"))
    assert answer["permission"] == "deny" and error_of(answer)["type"] == "intent-required"
    assert answer["user_message"].startswith("orchestrator: ")
    assert select(payload)["permission"] == "allow"
    assert Governor(ws).sessions.get("conv-123")["intent_id"] == "INT-1"
    assert hook(payload("cursor", "preToolUse-Write"))["permission"] == "allow"
    outside = payload("cursor", "preToolUse-Write", tool_input={"path": str(ws / "notes.txt"), "contents": "x"})
    assert error_of(hook(outside))["type"] == "scope-violation"


def test_before_shell_execution_asks_for_rm_rf(payload) -> None:
    select(payload)
    rm = payload("cursor", "beforeShellExecution", command="rm -rf src/old")
    answer = hook(rm, ORCH_APPROVAL_CHANNEL="agent-ask")
    assert answer["permission"] == "ask" and error_of(answer)["hook"] == "approval"
    ls = payload("cursor", "beforeShellExecution", command="ls -la")
    assert hook(ls)["permission"] == "allow"


def test_before_read_file_stamps_and_refuses_secrets(payload, ws: Path) -> None:
    (ws / ".env").write_text("API_KEY=redacted")
    answer = hook(payload("cursor", "beforeReadFile"))  # the documented payload reads .env: a secret
    assert answer["permission"] == "deny" and error_of(answer)["type"] == "secret-read"
    (ws / "notes.txt").write_text("hello")
    answer = hook(payload("cursor", "beforeReadFile", file_path=str(ws / "notes.txt"), content="hello"))
    assert answer["permission"] == "allow"
    assert "notes.txt" in Governor(ws).sessions.get("conv-123")["reads"]


def test_after_file_edit_and_session_start(payload, ws: Path) -> None:
    select(payload)
    assert hook(payload("cursor", "afterFileEdit")) == {}
    ctx = hook({**payload("cursor", "beforeShellExecution"), "hook_event_name": "sessionStart"})
    assert "INT-1" in ctx["additional_context"]


def test_unknown_mcp_tool_is_not_silently_allowed(payload) -> None:
    other = {**payload("cursor", "beforeShellExecution"), "hook_event_name": "beforeMCPExecution",
             "tool_name": "database_query", "tool_input": {"query": "DROP TABLE users"}}
    assert hook(other)["permission"] in ("deny", "ask")
