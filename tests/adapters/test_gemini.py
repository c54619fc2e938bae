"""Gemini CLI adapter on payloads from the published hooks reference."""
from __future__ import annotations

import json
from pathlib import Path

from orchestrator.adapters.base import run_hook
from orchestrator.engine.pipeline import Governor

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


# --- as Gemini CLI 0.61.0 actually sends them (captured in tests/e2e/test_gemini_cli.py) ---------------------------
def _select_event(payload, **overrides):
    fields = {"tool_name": "mcp_orchestrator_select_active_intent", "tool_input": {"intent_id": "INT-1"},
              "mcp_context": {"server_name": "orchestrator", "tool_name": "select_active_intent"}}
    return payload("gemini", "BeforeTool-write_file", **{**fields, **overrides})


def test_mcp_single_underscore_name_is_the_handshake(payload, ws: Path) -> None:
    assert hook(_select_event(payload)) == {}
    assert Governor(ws).sessions.get(SESSION)["intent_id"] == "INT-1"
    assert Governor(ws).sessions.get("default").get("intent_id") is None
    after = _select_event(payload, hook_event_name="AfterTool", tool_response={"llmContent": "ok"})
    assert hook(after) == {}  # the handshake's AfterTool records nothing
    assert not (ws / ".orchestration" / "agent_trace.jsonl").exists() or \
        not (ws / ".orchestration" / "agent_trace.jsonl").read_text().strip()


def test_mcp_context_identifies_the_select_tool_and_other_orchestrator_tools_are_meta(payload, ws: Path) -> None:
    renamed = _select_event(payload, tool_name="mcp_orch_alias_select_active_intent")
    assert hook(renamed) == {}  # recognised by mcp_context
    listing = payload("gemini", "BeforeTool-write_file", tool_name="mcp_orchestrator_list_intents", tool_input={})
    assert hook(listing) == {}  # a handshake tool, not a mutation (allowed before and after selection)


def test_shell_dir_path_is_the_commands_cwd(payload, ws: Path) -> None:
    assert hook(_select_event(payload)) == {}
    inside = payload("gemini", "BeforeTool-run_shell_command",
                     tool_input={"command": "echo a > b.py", "dir_path": "src"})
    assert allowed(hook(inside))  # src/b.py: in scope (wrapped in the sandbox)
    escape = payload("gemini", "BeforeTool-run_shell_command",
                     tool_input={"command": "echo a > ../README.md", "dir_path": "src"})
    assert error_of(hook(escape))["type"] == "scope-violation"


def allowed(answer: dict) -> bool:
    """A BeforeTool answer that lets the call run: ``{}``, or ``allow`` with the command wrapped in the sandbox."""
    return answer == {} or (answer.get("decision") == "allow" and "tool_input" in answer["hookSpecificOutput"])


def _write_then_after(payload, ws: Path, rel: str, content: str, display: object, stamp: str) -> None:
    before = payload("gemini", "BeforeTool-write_file", tool_input={"file_path": rel, "content": content})
    assert hook(before) == {}
    (ws / rel).write_text(content)
    after = payload("gemini", "AfterTool-write_file", tool_input={"file_path": rel, "content": content},
                    timestamp=stamp, tool_response={"llmContent": "ok", "returnDisplay": display})
    assert hook(after) == {}


def _ledger(ws: Path) -> list[dict]:
    path = ws / ".orchestration" / "agent_trace.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_pre_images_pair_without_tool_use_id_and_identical_calls_both_record(payload, ws: Path) -> None:
    assert hook(_select_event(payload)) == {}
    for n, stamp in enumerate(("2026-11-22T03:00:03.000Z", "2026-11-22T03:00:04.000Z"), start=1):
        before = payload("gemini", "BeforeTool-run_shell_command",
                         tool_input={"command": "echo w >> app.py", "dir_path": "src"})
        assert allowed(hook(before))
        with open(ws / "src/app.py", "a") as fh:
            fh.write("w\n")
        after = payload("gemini", "AfterTool-write_file", tool_name="run_shell_command",
                        tool_input={"command": "echo w >> app.py", "dir_path": "src"}, timestamp=stamp,
                        tool_response={"llmContent": "Output: (empty)", "returnDisplay": ""})
        assert hook(after) == {}
    records = _ledger(ws)
    ranges = [(r["start_line"], r["end_line"]) for rec in records for f in rec["files"]
              for c in f["conversations"] for r in c["ranges"]]
    assert ranges == [(3, 3), (4, 4)]  # each append against its own pre-image, not the whole file
    assert not list((ws / ".orchestration" / "run" / "preimages").glob("gemini-*"))


def test_original_content_is_the_pre_image_and_is_new_file_a_create(payload, ws: Path) -> None:
    assert hook(_select_event(payload)) == {}
    _write_then_after(payload, ws, "src/new.py", "a = 1\n",
                      {"originalContent": "", "newContent": "a = 1\n", "isNewFile": True}, "t1")
    # a rewrite whose pre-image only Gemini knows: the capture is gone, originalContent still gives the ranges
    (ws / ".orchestration" / "run" / "preimages").mkdir(parents=True, exist_ok=True)
    before = payload("gemini", "BeforeTool-write_file",
                     tool_input={"file_path": "src/app.py", "content": "x = 1\nprint(y)\n"})
    assert hook(before) == {}
    for stale in (ws / ".orchestration" / "run" / "preimages").glob("gemini-*"):
        stale.unlink()
    (ws / "src/app.py").write_text("x = 1\nprint(y)\n")
    after = payload("gemini", "AfterTool-write_file", tool_input={"file_path": "src/app.py",
                                                                  "content": "x = 1\nprint(y)\n"},
                    timestamp="t2", tool_response={"llmContent": "ok", "returnDisplay": {
                        "originalContent": "x = 1\nprint(x)\n", "isNewFile": False}})
    assert hook(after) == {}
    new, app = _ledger(ws)
    assert new["metadata"]["dev.orchestrator"]["files"][0]["op"] == "create"
    assert [(r["start_line"], r["end_line"]) for r in app["files"][0]["conversations"][0]["ranges"]] == [(2, 2)]


def test_model_id_from_the_transcript(payload, ws: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_text('{"sessionId":"s"}\n{"$set":{"messages":[{"type":"gemini","model":"gemini-2.5-pro"}]}}\n')
    assert hook(_select_event(payload)) == {}
    _write_then_after(payload, ws, "src/m.py", "m = 1\n", {"originalContent": None, "isNewFile": True}, "t3")
    rec = _ledger(ws)[-1]
    assert rec["files"][0]["conversations"][0]["contributor"].get("model_id") is None  # fixture's path: no file
    before = payload("gemini", "BeforeTool-write_file", tool_input={"file_path": "src/n.py", "content": "n\n"})
    assert hook(before) == {}
    (ws / "src/n.py").write_text("n\n")
    after = payload("gemini", "AfterTool-write_file", tool_input={"file_path": "src/n.py", "content": "n\n"},
                    transcript_path=str(transcript), timestamp="t4", tool_response={"llmContent": "ok"})
    assert hook(after) == {}
    assert _ledger(ws)[-1]["files"][0]["conversations"][0]["contributor"]["model_id"] == "gemini-2.5-pro"


def test_session_start_sweeps_stale_pre_images_and_names_the_gemini_tool(payload, ws: Path) -> None:
    import os
    import time

    folder = ws / ".orchestration" / "run" / "preimages"
    folder.mkdir(parents=True, exist_ok=True)
    old, fresh, other = folder / "gemini-old.json", folder / "gemini-fresh.json", folder / "toolu_x.json"
    for p in (old, fresh, other):
        p.write_text("{}")
    past = time.time() - 7200
    os.utime(old, (past, past))
    os.utime(other, (past, past))
    ctx = hook(payload("gemini", "SessionStart"))["hookSpecificOutput"]["additionalContext"]
    assert "mcp_orchestrator_select_active_intent" in ctx and "mcp__orchestrator__" not in ctx
    assert not old.exists() and fresh.exists() and other.exists()  # only Gemini's, only stale ones


def test_after_tool_response_becomes_the_engines_tool_result(payload) -> None:
    """What the engine is told of AfterTool's tool_response (the engine reads none of its keys itself)."""
    from orchestrator.adapters.gemini import tool_result
    from orchestrator.core.models import ToolResult

    assert tool_result(payload("gemini", "AfterTool-write_file")["tool_response"]) == ToolResult()  # text display
    display = {"fileDiff": "…", "fileName": "app.py", "newContent": "x = 2\n"}
    assert tool_result({"returnDisplay": {**display, "originalContent": "x = 1\n", "isNewFile": False}}) == \
        ToolResult(original="x = 1\n")
    assert tool_result({"returnDisplay": {**display, "originalContent": "", "isNewFile": True}}) == \
        ToolResult(created=True)  # "" with isNewFile: it did not exist, it was not empty
    assert tool_result({"returnDisplay": {"originalContent": None}}) == ToolResult(created=True)
    assert tool_result({"returnDisplay": {"originalContent": 5}}) == ToolResult()
    assert tool_result({"llmContent": "no", "error": {"message": "x"},
                        "returnDisplay": {"originalContent": "x"}}) == ToolResult.failure()
    assert tool_result("weird") == ToolResult() and tool_result(None) == ToolResult()
