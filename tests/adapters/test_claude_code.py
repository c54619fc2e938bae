"""The Claude Code adapter on real captured payloads, in a real workspace, through the fail-closed boundary."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.adapters.base import run_hook
from orchestrator.adapters.claude_code import call_from
from orchestrator.engine.pipeline import Governor

SESSION = "ff186b18-6b37-4f8d-9234-24fb54551cf0"


def hook(event: dict, **env: str):
    return run_hook("claude-code", json.dumps(event), env=env)


def decision_of(result) -> tuple[str, dict]:
    """(permissionDecision, structured error) of a PreToolUse answer; ("allow", {}) for an empty answer."""
    assert result.exit_code == 0, result.stderr
    if not result.stdout:
        return "allow", {}
    out = json.loads(result.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    if out["permissionDecision"] == "allow":
        assert "updatedInput" in out  # a shell command wrapped in the sandbox (issue 21)
        return "allow", {}
    reason = out["permissionDecisionReason"]
    return out["permissionDecision"], json.loads(reason[reason.index("{"):])


def select(payload, intent: str = "INT-1", session: str = SESSION):
    event = payload("claude-code", "PreToolUse-mcp-select_active_intent", session_id=session,
                    tool_input={"intent_id": intent})
    return hook(event)


def test_session_start_gives_mandate_and_in_progress_intents(payload) -> None:
    result = hook(payload("claude-code", "SessionStart"))
    ctx = json.loads(result.stdout)["hookSpecificOutput"]
    assert ctx["hookEventName"] == "SessionStart"
    assert "mcp__orchestrator__select_active_intent" in ctx["additionalContext"]
    assert "INT-1: app work (owned_scope: src/**)" in ctx["additionalContext"]
    assert "INT-2" not in ctx["additionalContext"]  # PENDING intents are not offered


def test_user_prompt_submit_reminds_of_the_selection(payload) -> None:
    before = json.loads(hook(payload("claude-code", "UserPromptSubmit")).stdout)["hookSpecificOutput"]
    assert "No intent selected yet" in before["additionalContext"]
    select(payload)
    after = json.loads(hook(payload("claude-code", "UserPromptSubmit")).stdout)["hookSpecificOutput"]
    assert after["additionalContext"].startswith("orchestrator: this session works on intent INT-1")


def test_write_before_selection_is_denied_with_structured_error(payload, ws: Path) -> None:
    decision, error = decision_of(hook(payload("claude-code", "PreToolUse-Write")))
    assert decision == "deny"
    assert error["type"] == "intent-required" and error["available"] == ["INT-1"]
    assert error["hint"]


def test_selection_handshake_validates_and_records_per_session(payload, ws: Path) -> None:
    decision, error = decision_of(select(payload, "INT-404"))
    assert decision == "deny" and error["type"] == "intent-invalid" and error["available"] == ["INT-1"]
    decision, error = decision_of(select(payload, "INT-2"))
    assert decision == "deny" and error["status"] == "PENDING"
    assert decision_of(select(payload, "INT-1")) == ("allow", {})
    assert Governor(ws).sessions.get(SESSION)["intent_id"] == "INT-1"
    assert Governor(ws).sessions.get("another-session")["intent_id"] is None
    # the other session is still refused
    other = payload("claude-code", "PreToolUse-Write", session_id="another-session")
    assert decision_of(hook(other))[1]["type"] == "intent-required"


def test_scope_and_governance_files_after_selection(payload, ws: Path) -> None:
    select(payload)
    assert decision_of(hook(payload("claude-code", "PreToolUse-Write"))) == ("allow", {})
    out_of_scope = payload("claude-code", "PreToolUse-Write",
                           tool_input={"file_path": str(ws / "README.md"), "content": "x"})
    decision, error = decision_of(hook(out_of_scope))
    assert decision == "deny" and error["type"] == "scope-violation" and error["path"] == "README.md"
    governance = payload("claude-code", "PreToolUse-Write",
                         tool_input={"file_path": str(ws / ".orchestration/active_intents.yaml"), "content": "x"})
    decision, error = decision_of(hook(governance))
    assert decision == "deny" and error["hook"] == "selfguard"


def test_read_stamp_makes_a_later_edit_stale(payload, ws: Path) -> None:
    select(payload)
    assert hook(payload("claude-code", "PostToolUse-Read")).exit_code == 0
    stamps = Governor(ws).sessions.get(SESSION)["reads"]
    assert list(stamps) == ["src/app.py"]
    assert decision_of(hook(payload("claude-code", "PreToolUse-Edit"))) == ("allow", {})
    (ws / "src/app.py").write_text("x = 5\nprint(x)\n")  # another writer
    decision, error = decision_of(hook(payload("claude-code", "PreToolUse-Edit")))
    assert decision == "deny" and error["type"] == "stale-file" and error["path"] == "src/app.py"


@pytest.mark.parametrize("channel,expected", [("agent-ask", "ask"), ("deny", "deny")])
def test_destructive_bash_needs_approval(payload, channel: str, expected: str) -> None:
    select(payload)
    event = payload("claude-code", "PreToolUse-Bash", tool_input={"command": "rm -rf src"})
    decision, error = decision_of(hook(event, ORCH_APPROVAL_CHANNEL=channel))
    assert decision == expected and error["hook"] == "approval"


def test_read_only_bash_and_meta_tools_pass_without_intent(payload) -> None:
    for name in ("PreToolUse-Glob", "PreToolUse-Grep", "PreToolUse-Read"):
        assert decision_of(hook(payload("claude-code", name))) == ("allow", {})
    ls = payload("claude-code", "PreToolUse-Bash", tool_input={"command": "ls src"})
    assert decision_of(hook(ls)) == ("allow", {})


def test_subagent_calls_are_governed_and_attributed(payload) -> None:
    event = payload("claude-code", "PreToolUse-Write", agent_id="agent-7", agent_type="general-purpose")
    assert call_from(event).agent_id == "agent-7"
    assert decision_of(hook(event))[1]["type"] == "intent-required"


@pytest.mark.parametrize("raw", ["", "not json", "[1, 2]", json.dumps({"hook_event_name": "PreToolUse"})])
def test_malformed_input_blocks_with_exit_2(raw: str, ws: Path, monkeypatch) -> None:
    monkeypatch.chdir(ws)
    result = run_hook("claude-code", raw)
    assert result.exit_code == 2 and "blocked" in result.stderr


def test_missing_workspace_blocks_but_stop_does_not_loop(payload, tmp_path: Path, monkeypatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    for var in ("ORCH_ROOT", "CLAUDE_PROJECT_DIR"):
        monkeypatch.delenv(var, raising=False)
    event = payload("claude-code", "PreToolUse-Write", cwd=str(elsewhere))
    result = run_hook("claude-code", json.dumps(event))
    assert result.exit_code == 2 and "no .orchestration/ workspace" in result.stderr
    stop = run_hook("claude-code", json.dumps(payload("claude-code", "Stop", cwd=str(elsewhere))))
    assert stop.exit_code == 0 and "workspace" in stop.stderr  # reported, but exit 2 would make Claude continue


def test_broken_intents_file_denies_mutations(payload, ws: Path) -> None:
    (ws / ".orchestration/active_intents.yaml").write_text("active_intents: [oops")
    select_result = select(payload)
    assert decision_of(select_result)[0] == "deny"
    decision, error = decision_of(hook(payload("claude-code", "PreToolUse-Write")))
    assert decision == "deny" and error["type"] == "config-error"


def test_orch_hook_process_end_to_end(payload, ws: Path) -> None:
    """The real `orch hook claude-code` process: JSON in, JSON out, exit 0; garbage in, exit 2 (never 1)."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    cmd = [sys.executable, "-m", "orchestrator", "hook", "claude-code"]
    proc = subprocess.run(cmd, input=json.dumps(payload("claude-code", "PreToolUse-Write")), capture_output=True,
                          text=True, env=env, cwd=ws, timeout=60)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    bad = subprocess.run(cmd, input="{", capture_output=True, text=True, env=env, cwd=ws, timeout=60)
    assert bad.returncode == 2 and bad.stdout == ""


def test_model_is_read_from_the_transcript(tmp_path: Path) -> None:
    from orchestrator.adapters.claude_code import model_from_transcript

    transcript = tmp_path / "t.jsonl"
    lines = [
        {"type": "assistant", "message": {"model": "claude-a", "content": [{"type": "tool_use", "id": "t1"}]}},
        {"type": "user", "message": {"content": "x"}},
        {"type": "assistant", "message": {"model": "<synthetic>", "content": []}},
        {"type": "assistant", "message": {"model": "claude-b", "content": [{"type": "tool_use", "id": "t2"}]}},
    ]
    transcript.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
    assert model_from_transcript(str(transcript), "t1") == "claude-a"
    assert model_from_transcript(str(transcript), "t2") == "claude-b"
    assert model_from_transcript(str(transcript), "unknown") == "claude-b"
    assert model_from_transcript(str(tmp_path / "missing.jsonl"), "t1") is None
    assert model_from_transcript(None, "t1") is None


def test_tool_response_becomes_the_engines_tool_result(payload) -> None:
    """What the engine is told of Claude Code's tool_response (the engine reads none of its keys itself)."""
    from orchestrator.adapters.claude_code import tool_result
    from orchestrator.core.diffing import Hunk
    from orchestrator.core.models import ToolResult

    edit = payload("claude-code", "PostToolUse-Edit")["tool_response"]
    assert tool_result(edit) == ToolResult(original="x = 1\nprint(x)\n")  # hunks: unused when the pre-image is known
    assert tool_result(payload("claude-code", "PostToolUse-Write")["tool_response"]) == ToolResult(created=True)
    assert tool_result({"type": "update", "originalFile": None}) == ToolResult()  # left out (too large), not created
    assert tool_result({"type": "create", "originalFile": "old"}) == ToolResult(created=True, original="old")
    patch_only = {"structuredPatch": edit["structuredPatch"]}
    assert tool_result(patch_only) == ToolResult(hunks=[Hunk(1, 1, 1, 2)])
    assert tool_result({"structuredPatch": []}) == ToolResult()
    assert tool_result(payload("claude-code", "PostToolUse-Bash")["tool_response"]) == ToolResult()
    assert tool_result({"stdout": "", "interrupted": True}).failed
    assert not tool_result({"stdout": "partial", "interrupted": True}).failed
    for failed in ({"error": "boom"}, {"is_error": True}, {"success": False}):
        assert tool_result({**failed, "originalFile": "x"}) == ToolResult.failure()
    assert tool_result({"originalFile": 5}) == ToolResult()  # malformed: nothing known (was a crash)
    for other in ("Success. Updated the following files", None, [1]):  # Codex's apply_patch answers with text
        assert tool_result(other) == ToolResult()


def test_structured_patch_hunks() -> None:
    from orchestrator.adapters.claude_code import hunks_from_structured_patch
    from orchestrator.core.diffing import Hunk, changed_ranges

    patch = [{"oldStart": 1, "oldLines": 2, "newStart": 1, "newLines": 3,
              "lines": ["-x = 1", "+x = 2", "+y = 3", " print(x)"]}]
    assert hunks_from_structured_patch(patch) == [Hunk(1, 1, 1, 2)]
    assert changed_ranges("x = 1\nprint(x)\n", "x = 2\ny = 3\nprint(x)\n")[1] == [Hunk(1, 1, 1, 2)]
    patch = [{"oldStart": 3, "newStart": 3, "lines": [" a", "-b", " c", "+d", "\\ No newline at end of file"]}]
    assert hunks_from_structured_patch(patch) == [Hunk(4, 1, 3, 0), Hunk(5, 0, 5, 1)]


def test_post_tool_use_without_a_capture_records_from_the_tool_result(payload, ws: Path) -> None:
    """The PostToolUse hook alone (its PreToolUse never ran): originalFile gives the exact ranges."""
    select(payload)
    (ws / "src" / "app.py").write_text("x = 2\ny = 3\nprint(x)\n")
    assert hook(payload("claude-code", "PostToolUse-Edit")).exit_code == 0
    rec = json.loads((ws / ".orchestration" / "agent_trace.jsonl").read_text().splitlines()[-1])
    assert [(r["start_line"], r["end_line"]) for r in rec["files"][0]["conversations"][0]["ranges"]] == [(1, 2)]
    assert rec["metadata"]["dev.orchestrator"]["files"][0]["before"] == \
        "sha256:" + __import__("hashlib").sha256(b"x = 1\nprint(x)\n").hexdigest()


@pytest.mark.parametrize("patch", [[{"oldStart": "one", "lines": ["-x = 1"]}], [None], [{"lines": [1, 2]}]],
                         ids=["start-not-a-number", "hunk-not-an-object", "line-not-text"])
def test_a_malformed_structured_patch_costs_only_the_fallback_not_the_record(payload, ws: Path, patch) -> None:
    """``structuredPatch`` is a fallback (ranges when no pre-image is known at all): a malformed one leaves it out,
    and the record comes from the snapshot the PreToolUse took, as it did before the adapter translated responses.
    Before: the hook answered "malformed hook event" and the change went unrecorded."""
    select(payload)
    pre = payload("claude-code", "PreToolUse-Edit")
    assert decision_of(hook(pre))[0] == "allow"
    (ws / "src" / "app.py").write_text("x = 2\ny = 3\nprint(x)\n")
    post = payload("claude-code", "PostToolUse-Edit", tool_use_id=pre["tool_use_id"])
    post["tool_response"] = {k: v for k, v in post["tool_response"].items() if k != "originalFile"}
    post["tool_response"]["structuredPatch"] = patch
    result = hook(post)
    assert result.exit_code == 0 and not result.stderr, result.stderr
    rec = json.loads((ws / ".orchestration" / "agent_trace.jsonl").read_text().splitlines()[-1])
    assert rec["metadata"]["dev.orchestrator"]["files"][0]["before"] == \
        "sha256:" + __import__("hashlib").sha256(b"x = 1\nprint(x)\n").hexdigest()
    from orchestrator.adapters.claude_code import tool_result

    assert tool_result(post["tool_response"]).hunks is None


def test_an_original_file_left_out_is_not_a_created_file(payload, ws: Path) -> None:
    """Claude Code leaves ``originalFile`` out (``null``) of an Edit's response for a subagent, an older session or a
    large file, and of a Write's ``type: "update"`` when the old content is too large (its own schema,
    tests/e2e/node_modules/@anthropic-ai/claude-code/sdk-tools.d.ts: "null for new files, or when the previous
    content was too large to include"). ``null`` then says nothing about the file before the call: without a
    capture, the record must not claim the existing file was created (before: op "create", no sha_before)."""
    assert select(payload).exit_code == 0
    pre = payload("claude-code", "PreToolUse-Edit", agent_id="a1", agent_type="general-purpose",
                  tool_use_id="toolu_0005")
    assert hook(pre).exit_code == 0  # the capture: the engine's own pre-image decides
    (ws / "src" / "app.py").write_text("x = 2\ny = 3\nprint(x)\n")
    post = payload("claude-code", "PostToolUse-Edit", agent_id="a1", agent_type="general-purpose")
    post["tool_response"]["originalFile"] = None  # left out "for_subagent"
    assert hook(post).exit_code == 0
    change = json.loads((ws / ".orchestration" / "agent_trace.jsonl").read_text().splitlines()[-1])
    meta = change["metadata"]["dev.orchestrator"]["files"][0]
    assert meta["op"] == "modify", meta
    assert [(r["start_line"], r["end_line"]) for r in change["files"][0]["conversations"][0]["ranges"]] == [(1, 2)]

    from orchestrator.adapters.claude_code import tool_result
    from orchestrator.core.models import ToolResult

    too_large = {"type": "update", "originalFile": None, "structuredPatch": []}
    assert tool_result(too_large) == ToolResult()  # nothing known: the engine's snapshot decides
    assert tool_result({"type": "create", "originalFile": None}) == ToolResult(created=True)
