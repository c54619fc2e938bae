"""Claude Code: a Bash command the analyzer cannot vouch for is answered with a sandboxed ``updatedInput``; the
PostToolUse that follows sees the wrapped command and records the original."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from orchestrator.adapters.base import run_hook
from orchestrator.sandbox import landlock, options_of, unwrap

SESSION = "ff186b18-6b37-4f8d-9234-24fb54551cf0"
pytestmark = pytest.mark.skipif(landlock.abi() < 1, reason="this kernel has no Landlock")


def hook(event: dict, **env: str):
    return run_hook("claude-code", json.dumps(event), env=env)


def select(payload) -> None:
    hook(payload("claude-code", "PreToolUse-mcp-select_active_intent", session_id=SESSION,
                 tool_input={"intent_id": "INT-1"}))


def bash(payload, event: str, command: str, **extra):
    return payload("claude-code", f"{event}-Bash", session_id=SESSION,
                   tool_input={"command": command, "description": "run it", "timeout": 60000, **extra})


def test_runs_code_is_allowed_with_a_wrapped_command(payload, ws: Path) -> None:
    select(payload)
    result = hook(bash(payload, "PreToolUse", "python3 tools/gen.py --out src/gen.py"), ORCH_APPROVAL_CHANNEL="deny")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "allow"
    updated = out["updatedInput"]
    assert updated["description"] == "run it" and updated["timeout"] == 60000  # the other fields are kept
    assert unwrap(updated["command"]) == "python3 tools/gen.py --out src/gen.py"
    # the short launcher line (issue 21 item 8): the stub in the run dir, the spec's id, the model's command
    stub = ws / ".orchestration" / "run" / "sandbox" / "orch-sandbox"
    assert updated["command"].startswith(f"{stub} ")
    assert str(ws / "src") in options_of(updated["command"])


def test_read_only_analyzed_and_git_commands_are_wrapped_a_bare_cd_is_not(payload, ws: Path) -> None:
    select(payload)
    for command in ("ls src", "echo hi > src/out.txt", "git status", "git add -A"):
        result = hook(bash(payload, "PreToolUse", command), ORCH_APPROVAL_CHANNEL="deny")
        out = json.loads(result.stdout)["hookSpecificOutput"]
        assert out["permissionDecision"] == "allow" and unwrap(out["updatedInput"]["command"]) == command, command
    for command in ("cd src",):  # the one exemption (orchestrator.sandbox.exempt)
        result = hook(bash(payload, "PreToolUse", command), ORCH_APPROVAL_CHANNEL="deny")
        assert (result.exit_code, result.stdout) == (0, ""), command


def test_destructive_is_still_asked(payload, ws: Path) -> None:
    select(payload)
    result = hook(bash(payload, "PreToolUse", "rm -rf src"))
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_without_the_sandbox_it_asks_as_before(payload, ws: Path) -> None:
    select(payload)
    result = hook(bash(payload, "PreToolUse", "pytest"), ORCH_APPROVAL_CHANNEL="deny")
    out = json.loads(result.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "allow" and "updatedInput" in out
    (ws / ".orchestration" / "policy.yaml").write_text("version: 1\nsandbox:\n  enabled: false\n")
    result = hook(bash(payload, "PreToolUse", "pytest"))
    out = json.loads(result.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "ask" and "not sandboxed: disabled by policy" in out["permissionDecisionReason"]


def test_other_agents_are_not_wrapped_by_default(payload, ws: Path) -> None:
    """``claude_code.handle`` wraps only for Claude Code unless its caller passes ``sandbox=True`` (the Codex adapter
    does: tests/adapters/test_codex_sandbox.py)."""
    from orchestrator.adapters import claude_code
    from orchestrator.engine.pipeline import Governor

    gov = Governor(ws, approval_channel="deny")
    gov.select_intent("INT-1", SESSION)
    event = bash(payload, "PreToolUse", "pytest")
    result = claude_code.handle(event, gov, agent="codex", ask=False)
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_post_tool_use_records_the_original_command(payload, ws: Path) -> None:
    select(payload)
    (ws / "tools").mkdir()
    (ws / "tools" / "gen.py").write_text("print('y = 2')\n")
    command = "python3 tools/gen.py > src/gen.py"
    pre = hook(bash(payload, "PreToolUse", command), ORCH_APPROVAL_CHANNEL="deny")
    wrapped = json.loads(pre.stdout)["hookSpecificOutput"]["updatedInput"]["command"]
    proc = subprocess.run(["/bin/bash", "-c", wrapped], cwd=ws, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    post = bash(payload, "PostToolUse", wrapped)
    post["tool_input"]["command"] = wrapped
    assert hook(post).exit_code == 0
    records = [json.loads(line) for line in (ws / ".orchestration" / "agent_trace.jsonl").read_text().splitlines()
               if line.strip()]
    text = json.dumps(records[-1])
    assert "--orch-sandbox" not in text
    assert "src/gen.py" in text and (ws / "src" / "gen.py").read_text() == "y = 2\n"
