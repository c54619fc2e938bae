"""Codex CLI adapter on payloads built from Codex's published hook schemas."""
from __future__ import annotations

import json
from pathlib import Path

from orchestrator.adapters.base import run_hook
from orchestrator.engine.pipeline import Governor

SESSION = "019a2c1e-7d1b-7a40-b9a5-2f1d3c0e8a11"


def pre(result) -> tuple[str, dict]:
    assert result.exit_code == 0, result.stderr
    if not result.stdout:
        return "allow", {}
    out = json.loads(result.stdout)["hookSpecificOutput"]
    if out["permissionDecision"] == "allow":
        return "allow", {}  # with updatedInput: every shell command runs in the sandbox (issue 21)
    reason = out["permissionDecisionReason"]
    return out["permissionDecision"], json.loads(reason[reason.index("{"):])


def hook(event: dict, **env: str):
    return run_hook("codex", json.dumps(event), env=env)


def test_apply_patch_is_gated_by_intent_and_scope(payload, ws: Path) -> None:
    patch = payload("codex", "PreToolUse-apply_patch")
    decision, error = pre(hook(patch))
    assert decision == "deny" and error["type"] == "intent-required"
    select = {**patch, "tool_name": "mcp__orchestrator__select_active_intent", "tool_input": {"intent_id": "INT-1"}}
    assert pre(hook(select)) == ("allow", {})
    assert Governor(ws).sessions.get(SESSION)["intent_id"] == "INT-1"
    assert Governor(ws).sessions.get(SESSION)["agent"] == "codex"
    assert pre(hook(patch)) == ("allow", {})  # src/app.py and src/new.py are in scope
    outside = {**patch, "tool_input": {"command": "*** Begin Patch\n*** Add File: README.md\n+hi\n*** End Patch\n"}}
    decision, error = pre(hook(outside))
    assert decision == "deny" and error["type"] == "scope-violation" and error["path"] == "README.md"


def test_ask_becomes_deny_in_codex(payload) -> None:
    select = payload("codex", "PreToolUse-Bash", tool_name="mcp__orchestrator__select_active_intent",
                     tool_input={"intent_id": "INT-1"})
    assert pre(hook(select)) == ("allow", {})
    rm = payload("codex", "PreToolUse-Bash", tool_input={"command": "rm -rf src/old"})
    decision, error = pre(hook(rm, ORCH_APPROVAL_CHANNEL="agent-ask"))
    assert decision == "deny" and error["hook"] == "approval"
    # the documented `rm -rf build` is outside the intent's scope: refused before any approval is asked
    assert pre(hook(payload("codex", "PreToolUse-Bash")))[1]["type"] == "scope-violation"


def test_session_start_and_post_tool_use(payload) -> None:
    ctx = json.loads(hook(payload("codex", "SessionStart")).stdout)["hookSpecificOutput"]
    assert "INT-1" in ctx["additionalContext"]
    post = hook(payload("codex", "PostToolUse-apply_patch"))
    assert post.exit_code == 0 and post.stdout == ""



def test_exec_command_workdir_arrives_as_the_events_cwd(payload, ws: Path) -> None:
    """Codex 0.169.0 puts exec_command's workdir into the event's cwd (tool_input has only the command)."""
    select = payload("codex", "PreToolUse-Bash", tool_name="mcp__orchestrator__select_active_intent",
                     tool_input={"intent_id": "INT-1"})
    assert pre(hook(select)) == ("allow", {})
    inside = payload("codex", "PreToolUse-Bash", tool_input={"command": "echo z > other.py"}, cwd=str(ws / "src"))
    assert pre(hook(inside)) == ("allow", {})  # src/other.py
    escape = payload("codex", "PreToolUse-Bash", tool_input={"command": "echo h > ../README.md"},
                     cwd=str(ws / "src"))
    decision, error = pre(hook(escape))
    assert decision == "deny" and error["type"] == "scope-violation" and error["path"] == "README.md"
