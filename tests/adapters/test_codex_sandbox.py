"""Codex: a shell command the analyzer cannot vouch for is answered ``allow`` + ``updatedInput`` (Codex's only
accepted allow: codex-rs/hooks/src/engine/output_parser.rs), with a string ``command`` running the Landlock launcher;
PostToolUse unwraps it. Without the sandbox the command goes to approval, answered as a deny (Codex cannot ask)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from orchestrator.adapters.base import run_hook
from orchestrator.sandbox import landlock, options_of, unwrap

SESSION = "019a2c1e-7d1b-7a40-b9a5-2f1d3c0e8a11"
needs_landlock = pytest.mark.skipif(landlock.abi() < 1, reason="this kernel has no Landlock")


def hook(event: dict, **env: str):
    return run_hook("codex", json.dumps(event), env=env)


def select(payload) -> None:
    result = hook(payload("codex", "PreToolUse-Bash", tool_name="mcp__orchestrator__select_active_intent",
                          tool_input={"intent_id": "INT-1"}))
    assert (result.exit_code, result.stdout) == (0, ""), result.stderr


def bash(payload, command: object, event: str = "PreToolUse", **extra: object) -> dict:
    return payload("codex", "PreToolUse-Bash", hook_event_name=event, tool_input={"command": command, **extra})


def answer(result) -> dict:
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["hookSpecificOutput"]


@needs_landlock
def test_runs_code_is_allowed_with_updated_input_in_codex_format(payload, ws: Path) -> None:
    select(payload)
    out = answer(hook(bash(payload, "python3 tools/gen.py --out src/gen.py", timeout_ms=5000),
                      ORCH_APPROVAL_CHANNEL="deny"))
    # Codex accepts allow only with updatedInput, and updatedInput only with a string `command`
    assert out["hookEventName"] == "PreToolUse" and out["permissionDecision"] == "allow"
    assert out["permissionDecisionReason"].strip()
    updated = out["updatedInput"]
    assert isinstance(updated["command"], str) and updated["timeout_ms"] == 5000  # other fields kept
    assert unwrap(updated["command"]) == "python3 tools/gen.py --out src/gen.py"
    assert str(ws / "src") in options_of(updated["command"])


@needs_landlock
def test_argv_command_is_wrapped_as_a_string(payload, ws: Path) -> None:
    select(payload)
    out = answer(hook(bash(payload, ["bash", "-lc", "pytest -q"]), ORCH_APPROVAL_CHANNEL="deny"))
    assert out["permissionDecision"] == "allow"
    assert isinstance(out["updatedInput"]["command"], str)
    assert unwrap(out["updatedInput"]["command"]) == "pytest -q"


@needs_landlock
def test_exempt_commands_and_patches_get_no_answer(payload, ws: Path) -> None:
    """A bare ``allow`` is invalid in Codex: whatever runs unwrapped is allowed by saying nothing; every other shell
    command, read-only ones included, is wrapped (issue 21)."""
    select(payload)
    for command in ("cd src",):
        result = hook(bash(payload, command), ORCH_APPROVAL_CHANNEL="deny")
        assert (result.exit_code, result.stdout) == (0, ""), command
    for command in ("ls src", "echo hi > src/out.txt", "git status", "git add -A"):
        out = answer(hook(bash(payload, command), ORCH_APPROVAL_CHANNEL="deny"))
        assert unwrap(out["updatedInput"]["command"]) == command
    result = hook(payload("codex", "PreToolUse-apply_patch"), ORCH_APPROVAL_CHANNEL="deny")
    assert (result.exit_code, result.stdout) == (0, "")


@needs_landlock
def test_destructive_is_still_refused(payload, ws: Path) -> None:
    select(payload)
    out = answer(hook(bash(payload, "rm -rf src"), ORCH_APPROVAL_CHANNEL="deny"))
    assert out["permissionDecision"] == "deny" and "updatedInput" not in out


@pytest.mark.parametrize("how", ["env", "policy"])
def test_without_the_sandbox_it_falls_back_to_approval(payload, ws: Path, how: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """``ORCH_SANDBOX=off``, ``sandbox.enabled: false`` or no Landlock: nothing is wrapped, the approval channel
    decides, and its "ask" is a deny in Codex."""
    select(payload)
    env = {"ORCH_APPROVAL_CHANNEL": "agent-ask"}
    if how == "env":
        monkeypatch.setenv("ORCH_SANDBOX", "off")  # the hook process's environment
        why = "disabled by ORCH_SANDBOX=off"
    else:
        (ws / ".orchestration" / "policy.yaml").write_text("version: 1\nsandbox:\n  enabled: false\n")
        why = "disabled by policy"
    out = answer(hook(bash(payload, "pytest"), **env))
    assert out["permissionDecision"] == "deny" and "updatedInput" not in out
    assert f"not sandboxed: {why}" in out["permissionDecisionReason"]


@needs_landlock
def test_post_tool_use_unwraps_before_the_ledger(payload, ws: Path) -> None:
    """Codex's PostToolUse carries the command it ran (the launcher): the record is the original's."""
    select(payload)
    (ws / "tools").mkdir()
    (ws / "tools" / "gen.py").write_text("print('y = 2')\n")
    command = "python3 tools/gen.py > src/gen.py"
    wrapped = answer(hook(bash(payload, command), ORCH_APPROVAL_CHANNEL="deny"))["updatedInput"]["command"]
    proc = subprocess.run(["/bin/bash", "-c", wrapped], cwd=ws, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    post = bash(payload, wrapped, event="PostToolUse", tool_response="")
    result = hook(post)
    assert (result.exit_code, result.stdout) == (0, ""), result.stderr
    records = [json.loads(line) for line in (ws / ".orchestration" / "agent_trace.jsonl").read_text().splitlines()
               if line.strip()]
    text = json.dumps(records[-1])
    assert "--orch-sandbox" not in text and "landlock.py" not in text
    meta = records[-1]["metadata"]["dev.orchestrator"]
    assert meta["agent"] == "codex" and meta["tool_name"] == "Bash"
    assert [f["path"] for f in records[-1]["files"]] == ["src/gen.py"]
    assert (ws / "src" / "gen.py").read_text() == "y = 2\n"
