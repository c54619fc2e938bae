"""`orch approvals`, `orch approve`, `orch reject`: the headless twins of the console."""

from __future__ import annotations

import json
import subprocess
import sys

from orchestrator.approvals import Broker
from orchestrator.cli import main
from tests.approval_support import ROOT, make_workspace, spawn_waiter, verdict_of, wait_for_requests


def _pending(ws, capsys) -> list[dict]:
    assert main(["approvals", "-C", str(ws.root), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_list_approve_and_reject_real_waiters(tmp_path, capsys) -> None:
    ws = make_workspace(tmp_path)
    assert _pending(ws, capsys) == []
    p1 = spawn_waiter(ws, "s1", "rm -rf build")
    p2 = spawn_waiter(ws, "s2", "make clean")
    wait_for_requests(ws, 2)
    items = {i["session_id"]: i for i in _pending(ws, capsys)}
    assert set(items) == {"s1", "s2"} and all(i["id"] for i in items.values())
    assert items["s1"]["risk"] == "recursive-delete" and items["s1"]["command"] == "rm -rf build"
    assert main(["approvals", "-C", str(ws.root)]) == 0
    text = capsys.readouterr().out
    assert items["s1"]["id"] in text and "recursive-delete" in text

    # remembering a recursive delete is refused (exit 1, nothing written), once is fine
    assert main(["approve", items["s1"]["id"], "--session", "-C", str(ws.root)]) == 1
    assert "never remembered" in capsys.readouterr().err
    assert main(["approve", items["s1"]["id"], "-C", str(ws.root)]) == 0
    assert verdict_of(p1) == {"decision": "allow"}

    assert main(["reject", items["s2"]["id"], "--reason", "run the tests instead", "-C", str(ws.root)]) == 0
    v = verdict_of(p2)
    assert v["error"]["type"] == "approval-rejected" and v["error"]["reason"] == "run the tests instead"
    capsys.readouterr()
    assert main(["approve", items["s2"]["id"], "-C", str(ws.root)]) == 1
    assert "already resolved" in capsys.readouterr().err
    assert _pending(ws, capsys) == []


def test_approve_for_session_creates_a_grant(tmp_path, capsys) -> None:
    ws = make_workspace(tmp_path)
    p = spawn_waiter(ws, "s1", "make clean")
    rid = wait_for_requests(ws, 1)[0].name.split(".")[0]
    assert main(["approve", rid, "--session", "--json", "-C", str(ws.root)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["scope"] == "session" and data["grant"].startswith("g-")
    assert verdict_of(p) == {"decision": "allow"}
    assert [g["session_id"] for g in Broker(ws.run_dir).grants()] == ["s1"]


def test_errors_are_one_line_and_corrupt_files_are_listed(tmp_path, capsys) -> None:
    ws = make_workspace(tmp_path)
    d = ws.run_dir / "approvals"
    d.mkdir(parents=True)
    (d / "bad-1.request.json").write_text("[1, 2")
    listed = _pending(ws, capsys)
    assert listed[0]["id"] == "bad-1" and "not valid JSON" in listed[0]["error"]
    assert main(["approve", "bad-1", "-C", str(ws.root)]) == 1
    assert main(["approve", "../x", "-C", str(ws.root)]) == 1
    assert main(["reject", "nope-1", "--reason", "x", "-C", str(ws.root)]) == 1
    err = capsys.readouterr().err
    assert "invalid approval id" in err and "no pending approval" in err and "Traceback" not in err


def test_hot_path_imports_neither_textual_nor_watchdog() -> None:
    code = ("import sys, orchestrator.pipeline, orchestrator.approvals, orchestrator.commands.approvals; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'watchdog', 'rich')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT)}).stdout
    assert out.strip() == "[]"


def test_tui_command_runs_the_app_headless(tmp_path, tmp_path_factory, monkeypatch) -> None:
    """`orch tui` builds the console for the workspace (run headless here, then quit with q)."""
    import asyncio

    from orchestrator.tui import app as tui_app

    ws = make_workspace(tmp_path)
    seen = {}

    def run_headless(self) -> None:
        async def drive() -> None:
            async with self.run_test(size=(80, 24)) as pilot:
                await pilot.pause(0.2)
                seen["root"] = self.workspace.root
                await pilot.press("q")
        asyncio.run(drive())

    monkeypatch.setattr(tui_app.ApprovalApp, "run", run_headless)
    assert main(["tui", "-C", str(ws.root)]) == 0
    assert seen["root"] == ws.root
    assert main(["tui", "-C", str(tmp_path_factory.mktemp("not-a-workspace"))]) == 1
