"""Issue 28: a mutating post-hook event is acted on only when a pre-hook of the same session allowed that call (its
capture, found by the call's id). Otherwise nothing is recorded, signed, restored or stamped, and the refusal is
logged. Through the real pipeline: Claude Code's events into ``run_hook``, a real workspace, the real ledger."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from orchestrator.state import sessions
from orchestrator.adapters.base import run_hook
from orchestrator.engine.pipeline import Governor

A = "aaaaaaaa-1111-4111-8111-aaaaaaaaaaaa"
B = "bbbbbbbb-2222-4222-8222-bbbbbbbbbbbb"


def hook(ws: Path, event: dict[str, Any]) -> Any:
    event = {"cwd": str(ws), "transcript_path": None, **event}
    return run_hook("claude-code", json.dumps(event), env={"ORCH_ROOT": str(ws), "ORCH_APPROVAL_CHANNEL": "deny"})


def write(ws: Path, name: str, session: str, tool_use_id: str, rel: str = "src/new.py") -> Any:
    event: dict[str, Any] = {"hook_event_name": name, "session_id": session, "tool_name": "Write",
                             "tool_use_id": tool_use_id, "tool_input": {"file_path": str(ws / rel), "content": "y\n"}}
    if name == "PostToolUse":
        event["tool_response"] = {"type": "create", "filePath": str(ws / rel), "originalFile": None}
    return hook(ws, event)


def ledger(ws: Path) -> str:
    path = ws / ".orchestration" / "agent_trace.jsonl"
    return path.read_text() if path.exists() else ""


def refused(ws: Path) -> list[dict[str, Any]]:
    path = ws / ".orchestration" / "run" / "refusals.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [e for e in map(json.loads, lines) if e.get("decision") == "refused"]


def test_a_post_that_no_pre_hook_allowed_is_refused(ws: Path) -> None:
    Governor(ws).select_intent("INT-001", A)
    (ws / "src" / "new.py").write_text("y\n")
    assert write(ws, "PostToolUse", A, "toolu_never_seen").exit_code == 0
    assert "toolu_never_seen" not in ledger(ws)
    (entry,) = refused(ws)
    assert entry["type"] == "post-unpaired" and entry["hook"] == "trace" and entry["tool_use_id"] == \
        "toolu_never_seen" and entry["session_id"] == A and entry["hint"]
    assert sessions.SessionStore(ws / ".orchestration" / "run").get(A)["reads"] == {}  # nothing stamped either


def test_a_post_naming_another_session_is_refused_and_leaves_that_sessions_call_alone(ws: Path) -> None:
    gov = Governor(ws)
    gov.select_intent("INT-001", A)
    gov.select_intent("INT-001", B)
    assert write(ws, "PreToolUse", A, "toolu_a").stdout == ""  # allowed: A's capture
    (ws / "src" / "new.py").write_text("y\n")
    assert write(ws, "PostToolUse", B, "toolu_a").exit_code == 0  # B claims A's call
    assert "toolu_a" not in ledger(ws)
    assert [e["type"] for e in refused(ws)] == ["post-unpaired"]
    # A's own post still finds its capture: the record is A's
    assert write(ws, "PostToolUse", A, "toolu_a").exit_code == 0
    record = json.loads(ledger(ws).splitlines()[-1])
    ns = record["metadata"]["dev.orchestrator"]
    assert ns["tool_use_id"] == "toolu_a" and ns["session_id"] == A and "unpaired" not in ns


def test_a_paired_post_is_recorded_as_before(ws: Path) -> None:
    Governor(ws).select_intent("INT-001", A)
    assert write(ws, "PreToolUse", A, "toolu_ok").stdout == ""
    (ws / "src" / "new.py").write_text("y\n")
    assert write(ws, "PostToolUse", A, "toolu_ok").exit_code == 0
    assert '"toolu_ok"' in ledger(ws) and refused(ws) == []


def test_cursors_after_file_edit_has_no_id_and_is_recorded_as_unpaired(ws: Path) -> None:
    Governor(ws).select_intent("INT-001", A)
    (ws / "src" / "app.py").write_text("x = 2\n")
    event = {"hook_event_name": "afterFileEdit", "conversation_id": A, "generation_id": "g1",
             "workspace_roots": [str(ws)], "file_path": str(ws / "src" / "app.py"),
             "edits": [{"old_string": "x = 1", "new_string": "x = 2"}]}
    assert run_hook("cursor", json.dumps(event), env={"ORCH_ROOT": str(ws)}).exit_code == 0
    ns = json.loads(ledger(ws).splitlines()[-1])["metadata"]["dev.orchestrator"]
    assert ns["unpaired"] is True and ns["files"][0]["path"] == "src/app.py"
