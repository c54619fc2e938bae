"""orchestrator/views/activity.py: the Activity summary (records and decisions over time, hot spots, approvals waiting)
over real workspaces; the index and the scan give the same numbers."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from orchestrator import ledger
from orchestrator.views import activity
from orchestrator.ledger import index, query
from orchestrator.config.workspace import Workspace
from tests.conftest import make_workspace
from tests.ledger.test_index import odd_lines, record

NOW = datetime(2026, 11, 25, 18, 30, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def seal_key_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    w = Workspace.at(make_workspace(tmp_path / "repo"))
    for i in range(48):  # one record every 5 hours, back from NOW: 10 days, three intents, two agents
        ts = datetime.fromtimestamp(NOW.timestamp() - i * 5 * 3600, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        ledger.append(w.ledger_file, record(i, intent=f"INT-{i % 3}", agent=("claude-code", "codex")[i % 2], ts=ts),
                      fsync=False)
    odd_lines(w.ledger_file)
    return w


def test_the_window_is_cut_in_whole_hours_ending_with_the_current_hour() -> None:
    win = activity._Window("7d", NOW)
    assert (win.size, win.n) == (8, 22) and win.labels()[-1] == "2026-11-25T11:00Z"
    assert win.of_hour("2026-11-25T18") == 21 and win.of_hour("2026-11-25T19") is None
    assert win.of_hour("2026-11-18T10") is None and win.of_hour("late") is None
    assert activity._Window("2h", NOW).size == 1 and activity._Window("2h", NOW).n == 3


def test_records_per_intent_and_agent_from_index_and_scan_agree(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    scanned = activity.collect(ws, now=NOW, use_index=False)
    monkeypatch.setattr(index, "MIN_BYTES", 0)
    served = activity.collect(ws, now=NOW)
    assert index.index_path(ws.ledger_file).exists()  # the index answered
    assert served.to_dict() == scanned.to_dict()
    # the window starts at 2026-11-18T11:00Z (22 columns of 8 h ending with 18:00-19:00)
    inside = [r for _, r in ledger.iter_records(ws.ledger_file)
              if isinstance(r.get("timestamp"), str) and "2026-11-18T11" <= r["timestamp"][:13] <= "2026-11-25T18"]
    assert sum(sum(v) for v in served.records_per_agent.values()) == len(inside) > 36
    assert set(served.records_per_intent) == {"INT-0", "INT-1", "INT-2", "INT-é"}  # INT-é: an odd line
    for flt in (query.Filters(intent="INT-1"), query.Filters(since="2026-11-24"), query.Filters(tool="edit")):
        assert activity.collect(ws, now=NOW, filters=flt).to_dict() == \
            activity.collect(ws, now=NOW, filters=flt, use_index=False).to_dict()
    one = activity.collect(ws, now=NOW, filters=query.Filters(intent="INT-1"))
    assert list(one.records_per_intent) == ["INT-1"]


def test_decisions_come_from_the_refusal_log_until_telemetry_spools_them(ws: Workspace) -> None:
    ws.run_dir.mkdir(parents=True, exist_ok=True)
    lines = [{"ts": "2026-11-25T17:00:00Z", "decision": "deny", "agent": "codex", "hook": "scope",
              "type": "scope-violation", "path": "a.py", "intent": "INT-1", "session_id": "s"},
             {"ts": "garbage", "decision": "deny"},
             {"ts": "2026-11-25T18:10:00Z", "decision": "ask", "agent": "codex", "hook": "gatekeeper",
              "type": "destructive", "targets": ["build"], "intent": "INT-2", "session_id": "s"}]
    (ws.run_dir / "refusals.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines) + "not json\n")
    act = activity.collect(ws, now=NOW)
    assert act.decision_source.startswith("refusal log")
    assert {d: sum(v) for d, v in act.decisions_per_agent["codex"].items()} == {"deny": 1, "ask": 1}
    assert act.hot_hooks == [("scope", 1), ("gatekeeper", 1)] and ("build", 1) in act.hot_paths
    assert activity.collect(ws, now=NOW, filters=query.Filters(intent="INT-2")).hot_hooks == [("gatekeeper", 1)]


def test_telemetry_spool_decisions_include_allows(ws: Workspace) -> None:
    from orchestrator.telemetry import spool
    events = [{"v": 1, "id": f"e{i}", "ts": NOW.timestamp() - i * 60, "event": "decision",
               "decision": "allow" if i % 3 else "deny", "hook": None if i % 3 else "scope", "agent": "claude-code",
               "intent": "INT-1", "tool": "Edit", "paths": ["src/a.py"]} for i in range(9)]
    for e in events:
        spool.append(ws.run_dir, {k: v for k, v in e.items() if v is not None})
    act = activity.collect(ws, now=NOW)
    assert act.decision_source.startswith("telemetry")
    assert {d: sum(v) for d, v in act.decisions_per_agent["claude-code"].items()} == {"allow": 6, "deny": 3}
    assert act.hot_hooks == [("scope", 3)]


def test_render_draws_sparklines_and_bars() -> None:
    assert activity.spark([0, 1, 2, 4, 8], 8) == "·▁▂▄█"
    assert activity.bar(1, 100) == "█" and activity.bar(50, 100, width=10) == "█" * 5 and activity.bar(0, 5) == ""
    act = activity.Activity(start="2026-11-25T10:00Z", bucket_hours=1, buckets=["a", "b", "c"],
                            records_per_intent={"INT-1": [0, 2, 4]}, hot_types=[("scope-violation", 3)])
    text = "\n".join(activity.render(act))
    assert "INT-1" in text and "·▄█" in text and "scope-violation" in text and "Approvals waiting: none" in text
