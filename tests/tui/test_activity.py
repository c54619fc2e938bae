"""The Activity view (key `v`) driven with Textual's Pilot over a real workspace: ledger records, the refusal log and
a pending approval request on disk; what it shows is what `orch trace stats` prints (orchestrator.views.activity)."""

from __future__ import annotations

import json

import pytest
from rich.text import Text
from textual.widgets import Static

from orchestrator import ledger
from orchestrator.views import activity
from orchestrator.tui.activity import ActivityScreen
from orchestrator.tui.app import ApprovalApp, MainScreen
from tests.approval_support import NOW, ledger_record, make_workspace, scene
from tests.waiting import until

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def refusals(ws, *entries: tuple[str, str, str, str, str]) -> None:
    """Refusal-log lines (orchestrator/state/refusals.py's format) at fixed times within the window."""
    ws.run_dir.mkdir(parents=True, exist_ok=True)
    with open(ws.run_dir / "refusals.jsonl", "a", encoding="utf-8") as f:
        for ts, decision, hook, typ, path in entries:
            f.write(json.dumps({"ts": ts, "decision": decision, "session_id": "sess-a", "agent": "claude-code",
                                "tool": "Edit", "type": typ, "hook": hook, "path": path, "intent": "INT-1"}) + "\n")


def shown(app: ApprovalApp) -> str:
    body = app.screen.query_one("#activity-body", Static).content
    return body.plain if isinstance(body, Text) else str(body)


async def test_v_opens_the_activity_view_with_charts_hot_spots_and_waiting_approvals(tmp_path) -> None:
    ws = make_workspace(tmp_path)
    scene(ws)  # 3 records (INT-1 twice, INT-2) at 08:21-08:23, a request waiting since NOW - 30 s
    refusals(ws, ("2025-11-22T07:10:00Z", "deny", "scope", "scope-violation", "src/secret.py"),
             ("2025-11-22T08:00:00Z", "deny", "scope", "scope-violation", "src/secret.py"),
             ("2025-11-21T20:00:00Z", "ask", "gatekeeper", "destructive", "build"),
             ("2025-11-01T00:00:00Z", "deny", "intentignore", "protected", "old.txt"))  # outside the 7 days
    app = ApprovalApp(ws, clock=lambda: NOW, watch=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, ActivityScreen) and app.screen.activity is not None,
                    what="the activity to load")
        act = app.screen.activity
        assert act is not None
        assert {k: sum(v) for k, v in act.records_per_intent.items()} == {"INT-1": 2, "INT-2": 1}
        assert act.records_per_intent["INT-1"][-1] == 2  # the current hour is the last column
        assert act.hot_hooks == [("scope", 2), ("gatekeeper", 1)] and act.hot_paths[0] == ("src/secret.py", 2)
        assert [a["summary"] for a in act.approvals] == ["rm -rf build"] and act.approvals[0]["waiting_seconds"] == 30
        text = shown(app)
        assert text == "\n".join(activity.render(act)) + "\n"  # the same text `orch trace stats` prints
        intent_row = next(line for line in text.splitlines() if line.strip().startswith("INT-1"))
        assert intent_row.split()[1][-1] == "█" and intent_row.split()[-1] == "2"  # a sparkline, then the total
        assert "claude-code deny" in text and "claude-code ask" in text and "intentignore" not in text
        assert "Approvals waiting: 1 (oldest 30s)" in text
        ws.ledger_file.open("a").write(json.dumps(ledger_record(4, "src/new.py", "Edit", "INT-3",
                                                                 "INTENT_EVOLUTION", "sess-c")) + "\n")
        await pilot.press("ctrl+r")
        await until(pilot, lambda: "INT-3" in shown(app), what="the reload to show the new record")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, MainScreen), what="back to the console")


async def test_an_empty_workspace_says_so(tmp_path) -> None:
    ws = make_workspace(tmp_path)
    app = ApprovalApp(ws, clock=lambda: NOW, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, ActivityScreen) and app.screen.activity is not None,
                    what="the activity to load")
        text = shown(app)
        assert "Records per intent: none in the window" in text and "Approvals waiting: none" in text
        assert "nothing refused" in text
        assert ledger.NS not in text
