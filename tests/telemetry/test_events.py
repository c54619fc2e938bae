"""Telemetry events as the pipeline spools them: one per decision, one per ledger record, nothing when off."""

from __future__ import annotations

import json
from pathlib import Path

from orchestrator.core.models import ToolResult
from orchestrator.engine.pipeline import Governor
from orchestrator.telemetry import events, spool
from orchestrator.engine.tools import to_call

ON = "telemetry:\n  enabled: true\n"


def _events(ws: Path) -> list[dict]:
    return list(spool.read_events(ws / ".orchestration" / "run"))


def test_off_by_default_spools_nothing(gov: Governor, ws: Path) -> None:
    gov.select_intent("INT-001", "s1")
    assert gov.pre(to_call("Write", {"file_path": "src/a.py"}, session_id="s1")).allowed
    assert not (ws / ".orchestration" / "run" / "telemetry").exists()


def test_decisions_and_records_are_spooled(ws: Path) -> None:
    (ws / ".orchestration" / "policy.yaml").write_text(ON + "approval:\n  channel: deny\n")
    gov = Governor(ws)
    gov.select_intent("INT-001", "s1")
    read = to_call("Read", {"file_path": "src/app.py"}, session_id="s1", agent="claude-code")
    assert gov.pre(read).allowed
    write = to_call("Write", {"file_path": "src/a.py", "content": "a = 1\n"}, session_id="s1", agent="claude-code",
                    tool_use_id="toolu_1")
    assert gov.pre(write).allowed
    (ws / "src" / "a.py").write_text("a = 1\n")
    rec = gov.post(write, ToolResult())
    assert rec is not None
    outside = to_call("Write", {"file_path": "docs/x.md"}, session_id="s1", agent="claude-code")
    assert gov.pre(outside).error["type"] == "scope-violation"
    rm = to_call("Bash", {"command": "rm -rf src"}, session_id="s1", agent="claude-code")
    assert gov.pre(rm).error["type"] == "approval-denied"

    evs = _events(ws)
    assert [(e["event"], e.get("decision"), e.get("type")) for e in evs] == [
        ("decision", "allow", None), ("decision", "allow", None), ("record", None, None),
        ("decision", "deny", "scope-violation"), ("decision", "deny", "approval-denied")]
    r, w, record, scope, approval = evs
    assert r["governed"] is False and r["kind"] == "read" and r["agent"] == "claude-code"
    assert w["governed"] is True and w["intent"] == "INT-001" and w["paths"] == ["src/a.py"]
    assert w["latency_ms"] > 0 and len(w["id"]) == 32 and w["sandboxed"] is False and w["tool_use_id"] == "toolu_1"
    assert record["id"] == record["record_id"] == rec["id"]
    assert record["hash"] == rec["metadata"]["dev.orchestrator"]["chain"]["hash"]
    assert record["files"] == ["src/a.py"] and record["lines_added"] == 1 and record["intent"] == "INT-001"
    assert record["mutation_class"] == rec["metadata"]["dev.orchestrator"]["mutation_class"]
    assert scope["hook"] == "scope" and scope["intent"] == "INT-001"
    assert approval["hook"] == "approval" and approval["approval"] == "denied"
    assert "command" not in approval  # command text only with include_commands


def test_include_commands(ws: Path) -> None:
    (ws / ".orchestration" / "policy.yaml").write_text(ON + "  include_commands: true\napproval:\n  channel: deny\n")
    gov = Governor(ws)
    gov.select_intent("INT-001", "s1")
    gov.pre(to_call("Bash", {"command": "rm -rf src"}, session_id="s1"))
    assert _events(ws)[-1]["command"] == "rm -rf src"


def test_dry_runs_spool_nothing(ws: Path) -> None:
    (ws / ".orchestration" / "policy.yaml").write_text(ON)
    gov = Governor(ws)
    gov.record_refusals = False  # orch check / orch explain
    gov.pre(to_call("Write", {"file_path": "docs/x.md"}, session_id="s1"))
    assert _events(ws) == []


def test_record_event_from_a_ledger_line() -> None:
    rec = {"id": "849abf26", "timestamp": "2026-11-22T03:30:26.522281Z", "vcs": {"type": "git", "revision": "b49a"},
           "files": [{"path": "src/app.py"}],
           "metadata": {"dev.orchestrator": {
               "intent_id": "INT-1", "mutation_class": "INTENT_EVOLUTION", "session_id": "s", "agent": "codex",
               "tool_name": "Edit", "tool_use_id": "call_1", "files": [{"path": "src/app.py", "added": 2, "removed": 1},
                                              {"path": "src/b.py", "added": 3, "removed": 0}],
               "chain": {"prev": "sha256:00", "hash": "sha256:60"}}}}
    ev = events.record(rec)
    assert ev == {"v": 1, "id": "849abf26", "ts": 1795318226.522281, "event": "record", "record_id": "849abf26",
                  "hash": "sha256:60", "intent": "INT-1", "session": "s", "agent": "codex", "tool": "Edit",
                  "tool_use_id": "call_1",
                  "mutation_class": "INTENT_EVOLUTION", "files": ["src/app.py", "src/b.py"], "file_count": 2,
                  "lines_added": 5, "lines_removed": 1, "revision": "b49a"}
    assert json.loads(events.encode(ev)) == ev
