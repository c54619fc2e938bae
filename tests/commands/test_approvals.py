"""`orch approvals`, `orch approve`, `orch reject`: the headless twins of the console."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
    code = ("import sys, orchestrator.engine.pipeline, orchestrator.approvals, orchestrator.commands.approvals; "
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
                await pilot.pause()  # the app has processed its start-up messages
                seen["root"] = self.workspace.root
                await pilot.press("q")
        asyncio.run(drive())

    monkeypatch.setattr(tui_app.ApprovalApp, "run", run_headless)
    assert main(["tui", "-C", str(ws.root)]) == 0
    assert seen["root"] == ws.root
    assert main(["tui", "-C", str(tmp_path_factory.mktemp("not-a-workspace"))]) == 1


def test_request_from_a_linked_worktree_is_listed_and_decided_from_the_main_one(tmp_path, capsys) -> None:
    from tests.approval_support import make_worktrees

    main_ws, linked = make_worktrees(tmp_path)
    p1 = spawn_waiter(linked, "agent-in-linked", "rm -rf build")
    p2 = spawn_waiter(linked, "agent-2-in-linked", "make clean")
    wait_for_requests(main_ws, 2)  # the main worktree's broker sees them: it is the same one
    items = {i["session_id"]: i for i in _pending(main_ws, capsys)}
    assert set(items) == {"agent-in-linked", "agent-2-in-linked"}
    first = items["agent-in-linked"]
    assert first["worktree"] == str(linked.root) and first["branch"] == "feature"
    assert main(["approvals", "-C", str(main_ws.root)]) == 0
    assert "worktree=linked (feature)" in capsys.readouterr().out

    # orch status in the main worktree shows the linked worktree's session and what it waits for
    assert main(["status", "-C", str(main_ws.root), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert {(Path(t["path"]).name, t["branch"]) for t in status["worktrees"]} == {("main", "main"),
                                                                                  ("linked", "feature")}
    waiting = {s["session"]: s for s in status["sessions"]}
    assert waiting["agent-in-linked"]["pending_approvals"] == 1
    assert waiting["agent-in-linked"]["worktree"] == str(linked.root) and waiting["agent-in-linked"]["intent"] == "INT-1"

    # decided from the main worktree; the waiting calls in the linked one get the answers
    assert main(["approve", first["id"], "-C", str(main_ws.root)]) == 0
    assert verdict_of(p1) == {"decision": "allow"}
    assert main(["reject", items["agent-2-in-linked"]["id"], "--reason", "no", "-C", str(main_ws.root)]) == 0
    assert verdict_of(p2)["error"]["type"] == "approval-rejected"
    # the linked worktree's own `orch approvals` saw the same queue
    capsys.readouterr()
    assert _pending(linked, capsys) == []
    resolved = sorted((main_ws.approvals_dir / "resolved").glob("*.json"))
    assert len(resolved) == 2 and not (linked.run_dir / "approvals").exists()


def test_the_listing_shows_an_agents_command_without_its_control_characters(tmp_path, capsys) -> None:
    """The summary is the agent's command: an escape sequence in it (ESC [1A ESC [2K: up one line, erase it) would
    rewrite what the person reads before deciding. The text listing shows every control character escaped."""
    ws = make_workspace(tmp_path)
    proc = spawn_waiter(ws, "s1", "rm -rf build; echo '\x1b[1A\x1b[2Kmake clean'")
    wait_for_requests(ws, 1)
    assert main(["approvals", "-C", str(ws.root)]) == 0
    text = capsys.readouterr().out
    assert "\x1b" not in text and "\\x1b[1A\\x1b[2Kmake clean" in text
    [item] = _pending(ws, capsys)
    assert "\x1b[1A" in item["command"]  # --json keeps it verbatim
    assert main(["reject", item["id"], "--reason", "no", "-C", str(ws.root)]) == 0
    verdict_of(proc)
