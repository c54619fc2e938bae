"""What the console reads: ledger tail, intents, sessions — without Textual."""

from __future__ import annotations

import json

from orchestrator.tui.data import ago, ledger_row, load_intents, load_ledger, load_sessions
from tests.approval_support import NOW, ledger_record, make_workspace, scene


def test_ledger_rows_newest_first_and_bad_lines_visible(tmp_path) -> None:
    ws = make_workspace(tmp_path)
    scene(ws, request=False)
    with ws.ledger_file.open("a") as fh:
        fh.write("{torn line\n")
    rows = load_ledger(ws, 3)
    assert rows[0].tool == "(unparseable line)"
    assert [(r.time, r.intent, r.tool, r.mutation, r.files) for r in rows[1:]] == [
        ("08:23:00", "INT-1", "Write", "INTENT_EVOLUTION", "src/util.py"),
        ("08:22:00", "INT-2", "Write", "INTENT_EVOLUTION", "docs/guide.md")]
    assert ledger_row(json.dumps(ledger_record(1, "a.py", "Edit", "I", "AST_REFACTOR", "s")).encode()).session == "s"


def test_intents_and_sessions(tmp_path) -> None:
    ws = make_workspace(tmp_path)
    scene(ws, request=False)
    rows, err = load_intents(ws)
    assert err is None and [(r.id, r.status) for r in rows] == [
        ("INT-1", "IN_PROGRESS"), ("INT-2", "IN_PROGRESS"), ("INT-3", "PENDING")]
    ws.intents_file.write_text("active_intents:\n  - id: X\n    name: x\n    status: NOPE\n")
    rows, err = load_intents(ws)
    assert rows == [] and err and "NOPE" in err
    sessions = load_sessions(ws, NOW)
    assert [(s.id, s.intent, s.agent, s.seen) for s in sessions] == [
        ("sess-a", "INT-1", "claude-code", "12s"), ("sess-b", "INT-2", "codex", "5m")]
    assert (ago(-3), ago(59), ago(3600 * 5), ago(86400 * 2)) == ("0s", "59s", "5h", "2d")
