"""Gemini CLI adapter on payloads from the published hooks reference."""
from __future__ import annotations

import json
from pathlib import Path

from orchestrator.adapters.base import run_hook
from orchestrator.pipeline import Governor

SESSION = "a1b2c3d4-0000-4000-8000-000000000001"


def hook(event: dict, **env: str) -> dict:
    result = run_hook("gemini", json.dumps(event), env=env)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def error_of(answer: dict) -> dict:
    assert answer["decision"] == "deny"
    return json.loads(answer["reason"][answer["reason"].index("{"):])


def test_before_tool_gates_write_file_replace_and_shell(payload, ws: Path) -> None:
    assert error_of(hook(payload("gemini", "BeforeTool-write_file")))["type"] == "intent-required"
    select = payload("gemini", "BeforeTool-write_file", tool_name="mcp__orchestrator__select_active_intent",
                     tool_input={"intent_id": "INT-1"})
    assert hook(select) == {}
    assert Governor(ws).sessions.get(SESSION)["intent_id"] == "INT-1"
    assert hook(payload("gemini", "BeforeTool-write_file")) == {}
    assert hook(payload("gemini", "BeforeTool-replace")) == {}
    shell = hook(payload("gemini", "BeforeTool-run_shell_command", tool_input={"command": "rm -rf src/old"}),
                 ORCH_APPROVAL_CHANNEL="agent-ask")
    assert error_of(shell)["hook"] == "approval"  # no "ask" in Gemini: denied with the reason
    outside = payload("gemini", "BeforeTool-write_file", tool_input={"file_path": str(ws / "x.txt"), "content": ""})
    assert error_of(hook(outside))["type"] == "scope-violation"


def test_read_file_stamps_and_session_start(payload, ws: Path) -> None:
    read = payload("gemini", "AfterTool-write_file", tool_name="read_file",
                   tool_input={"file_path": str(ws / "src/app.py")}, tool_response={"llmContent": "x = 1"})
    assert hook(read) == {}
    assert list(Governor(ws).sessions.get(SESSION)["reads"]) == ["src/app.py"]
    ctx = hook(payload("gemini", "SessionStart"))["hookSpecificOutput"]["additionalContext"]
    assert "INT-1" in ctx and "select_active_intent" in ctx
