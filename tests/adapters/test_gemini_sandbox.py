"""Gemini CLI: a shell command the analyzer cannot vouch for is answered with a sandboxed
``hookSpecificOutput.tool_input``; the AfterTool that follows sees the wrapped command and records the original."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from orchestrator.adapters.base import run_hook
from orchestrator.sandbox import landlock, unwrap

SESSION = "a1b2c3d4-0000-4000-8000-000000000001"
needs_landlock = pytest.mark.skipif(landlock.abi() < 1, reason="this kernel has no Landlock")


def hook(event: dict, **env: str) -> dict:
    result = run_hook("gemini", json.dumps(event), env=env)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def select(payload) -> None:
    event = payload("gemini", "BeforeTool-write_file", tool_name="mcp_orchestrator_select_active_intent",
                    tool_input={"intent_id": "INT-1"},
                    mcp_context={"server_name": "orchestrator", "tool_name": "select_active_intent"})
    assert hook(event) == {}


def shell(payload, event: str, command: str, **tool_input):
    return payload("gemini", "BeforeTool-run_shell_command", hook_event_name=event,
                   tool_input={"command": command, "description": "run it", **tool_input})


def error_of(answer: dict) -> dict:
    assert answer["decision"] == "deny", answer
    return json.loads(answer["reason"][answer["reason"].index("{"):])


def _ledger(ws: Path) -> list[dict]:
    path = ws / ".orchestration" / "agent_trace.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


@needs_landlock
def test_runs_code_is_allowed_with_the_whole_tool_input_and_a_wrapped_command(payload, ws: Path) -> None:
    select(payload)
    answer = hook(shell(payload, "BeforeTool", "python3 ../tools/gen.py --out gen.py", dir_path="src"),
                  ORCH_APPROVAL_CHANNEL="deny")
    assert answer["decision"] == "allow" and "sandbox" in answer["reason"]
    out = answer["hookSpecificOutput"]
    assert out["hookEventName"] == "BeforeTool"
    tool_input = out["tool_input"]
    # Gemini rebuilds the invocation from this object alone: every field of the model's input is sent back
    assert set(tool_input) == {"command", "description", "dir_path"}
    assert (tool_input["description"], tool_input["dir_path"]) == ("run it", "src")
    assert unwrap(tool_input["command"]) == "python3 ../tools/gen.py --out gen.py"
    assert tool_input["command"].startswith(f"{ws / '.orchestration' / 'run' / 'sandbox' / 'orch-sandbox'} ")


@needs_landlock
def test_read_only_commands_are_wrapped_exempt_ones_and_destructive_ones_are_not(payload, ws: Path) -> None:
    select(payload)
    for command in ("ls src", "echo hi > src/out.txt", "git status", "git add -A"):
        answer = hook(shell(payload, "BeforeTool", command), ORCH_APPROVAL_CHANNEL="deny")
        assert unwrap(answer["hookSpecificOutput"]["tool_input"]["command"]) == command
    for command in ("cd src",):
        assert hook(shell(payload, "BeforeTool", command), ORCH_APPROVAL_CHANNEL="deny") == {}, command
    # destructive: still the approval channel's call (deny here), never wrapped
    assert error_of(hook(shell(payload, "BeforeTool", "rm -rf src"), ORCH_APPROVAL_CHANNEL="deny"))["type"] == \
        "approval-denied"


def test_without_the_sandbox_the_approval_channel_decides_as_before(payload, ws: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    select(payload)
    monkeypatch.setenv("ORCH_SANDBOX", "off")
    error = error_of(hook(shell(payload, "BeforeTool", "pytest"), ORCH_APPROVAL_CHANNEL="deny"))
    assert error["type"] == "approval-denied" and "not sandboxed: disabled by ORCH_SANDBOX=off" in \
        json.dumps(error), error
    assert hook(shell(payload, "BeforeTool", "pytest"), ORCH_APPROVAL_CHANNEL="allow") == {}  # a plain allow
    monkeypatch.delenv("ORCH_SANDBOX")
    (ws / ".orchestration" / "policy.yaml").write_text("version: 1\nsandbox:\n  enabled: false\n")
    error = error_of(hook(shell(payload, "BeforeTool", "pytest"), ORCH_APPROVAL_CHANNEL="deny"))
    assert "not sandboxed: disabled by policy" in json.dumps(error), error


def test_handle_with_sandbox_false_judges_as_a_host_that_cannot_rewrite(payload, ws: Path) -> None:
    from orchestrator.adapters import gemini
    from orchestrator.engine.pipeline import Governor

    gov = Governor(ws, approval_channel="deny")
    gov.select_intent("INT-1", SESSION)
    answer = json.loads(gemini.handle(shell(payload, "BeforeTool", "pytest"), gov, sandbox=False).stdout)
    assert error_of(answer)["type"] == "approval-denied"


def test_unwrapped_only_touches_our_own_wrapper(payload) -> None:
    from orchestrator.adapters.gemini import unwrapped

    plain = shell(payload, "AfterTool", "pytest -q")
    assert unwrapped(plain) == (plain, False)
    fake = shell(payload, "AfterTool", "python3 -I -S /tmp/landlock.py --orch-sandbox -w src -- rm -rf /")
    assert unwrapped(fake) == (fake, False)  # looks like a wrapper, is not ours
    other = payload("gemini", "AfterTool-write_file")
    assert unwrapped(other) == (other, False)


@needs_landlock
def test_after_tool_pairs_and_records_the_original_command(payload, ws: Path) -> None:
    select(payload)
    (ws / "tools").mkdir()
    (ws / "tools" / "gen.py").write_text("print('y = 2')\n")
    command = "python3 ../tools/gen.py > gen.py"
    answer = hook(shell(payload, "BeforeTool", command, dir_path="src"), ORCH_APPROVAL_CHANNEL="deny")
    ran_with = answer["hookSpecificOutput"]["tool_input"]
    # what Gemini's shell tool does with it: bash -c in dir_path
    proc = subprocess.run(["bash", "-c", ran_with["command"]], cwd=ws / "src", capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    after = shell(payload, "AfterTool", "", dir_path="src")
    after.update(tool_input=ran_with, timestamp="2026-11-22T03:00:09.000Z",
                 tool_response={"llmContent": "Output: (empty)", "returnDisplay": ""})
    assert hook(after) == {}
    records = _ledger(ws)
    text = json.dumps(records[-1])
    assert "--orch-sandbox" not in text  # nothing of the wrapper reaches the ledger
    meta = records[-1]["metadata"]["dev.orchestrator"]
    assert meta["tool_name"] == "run_shell_command"
    assert meta["scan"]["roots"] == [".pytest_cache", "node_modules/.cache", "src", "{tmp}"]  # BeforeTool's: sandboxed
    assert records[-1]["files"][0]["path"] == "src/gen.py" and (ws / "src" / "gen.py").read_text() == "y = 2\n"
    # the pre-image taken at BeforeTool (keyed on the original input) was found and consumed by AfterTool
    assert not list((ws / ".orchestration" / "run" / "preimages").glob("gemini-*"))


@needs_landlock
def test_the_wrapped_command_cannot_write_outside_the_scope(payload, ws: Path) -> None:
    select(payload)
    (ws / "src" / "evil.sh").write_text("echo hijack > ../README.md\n")
    answer = hook(shell(payload, "BeforeTool", "sh evil.sh", dir_path="src"), ORCH_APPROVAL_CHANNEL="deny")
    wrapped = answer["hookSpecificOutput"]["tool_input"]["command"]
    proc = subprocess.run(["bash", "-c", wrapped], cwd=ws / "src", capture_output=True, text=True)
    assert proc.returncode != 0 and "Permission denied" in proc.stderr, proc.stderr
    assert not (ws / "README.md").exists()
