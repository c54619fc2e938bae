"""The approval console, driven with Textual's Pilot against real files and real waiting processes."""

from __future__ import annotations

import json

import pytest
from textual.widgets import DataTable, OptionList

from orchestrator.approvals import Broker
from orchestrator.engine.pipeline import Governor
from orchestrator.engine.tools import to_call
from orchestrator.tui.app import ApprovalApp, RejectScreen
from tests.approval_support import NOW, make_workspace, scene, spawn_waiter, verdict_of, wait_for_requests
from tests.waiting import until

# async tests run on anyio's pytest plugin (installed with the mcp SDK) under asyncio
pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def verdict(pilot, proc) -> dict:
    """The waiting process's verdict, letting the app run meanwhile (its workers write the decision)."""
    await until(pilot, lambda: proc.poll() is not None, what="the waiting process to get its verdict")
    return verdict_of(proc)


def queue(app: ApprovalApp) -> OptionList:
    return app.screen.query_one("#queue", OptionList)


def decision(ws, rid: str) -> dict:
    return json.loads((ws.run_dir / "approvals" / f"{rid}.decision.json").read_text())


async def test_request_appears_and_a_approves_once(tmp_path) -> None:
    ws = make_workspace(tmp_path)
    rid = scene(ws)
    app = ApprovalApp(ws, clock=lambda: NOW, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: queue(app).option_count == 1)
        assert queue(app).highlighted_option.id == rid
        assert app.screen.query_one("#ledger-table", DataTable).row_count == 3
        await pilot.press("a")
        await until(pilot, lambda: (ws.run_dir / "approvals" / f"{rid}.decision.json").exists())
        d = decision(ws, rid)
        assert (d["decision"], d["scope"], d["by"], d["session_id"]) == ("approve", "once", "tui", "sess-a")
        await until(pilot, lambda: queue(app).option_count == 0)


async def test_forbidden_class_cannot_be_remembered_from_the_tui(tmp_path) -> None:
    ws = make_workspace(tmp_path)
    rid = scene(ws)  # a recursive-delete: forbidden to remember by the default policy
    app = ApprovalApp(ws, clock=lambda: NOW, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: queue(app).option_count == 1)
        await pilot.press("s", "i")
        await until(pilot, lambda: any("never remembered" in n.message for n in app._notifications),
                    what="the refusal to be notified")
        await app.workers.wait_for_complete()
        assert not (ws.run_dir / "approvals" / f"{rid}.decision.json").exists()
        assert Broker(ws.run_dir).grants() == []


async def test_corrupt_request_is_shown_as_an_error(tmp_path) -> None:
    ws = make_workspace(tmp_path)
    d = ws.run_dir / "approvals"
    d.mkdir(parents=True)
    (d / "bad-1.request.json").write_text("{oops")
    app = ApprovalApp(ws, clock=lambda: NOW, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: queue(app).option_count == 1)
        assert "bad-1" in str(queue(app).get_option_at_index(0).prompt)
        await pilot.press("a")
        await until(pilot, lambda: any("corrupt" in n.message for n in app._notifications),
                    what="the corrupt request to be reported")
        await app.workers.wait_for_complete()
        assert not (d / "bad-1.decision.json").exists()
        assert app.is_running


async def test_keys_decide_for_real_waiting_processes(tmp_path) -> None:
    """End to end: hook-like processes block in Governor.pre; the console's keys release them."""
    ws = make_workspace(tmp_path)
    approve_me = spawn_waiter(ws, "sess-a", "rm -rf build")
    wait_for_requests(ws, 1)
    reject_me = spawn_waiter(ws, "sess-b", "rm -rf build/out.o")
    wait_for_requests(ws, 2)
    app = ApprovalApp(ws)  # real clock, watchdog on
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: queue(app).option_count == 2)
        sessions = {app.items[o.id].session_id: o.id for o in queue(app).options}
        # the queue is oldest first: sess-a's request is highlighted
        assert queue(app).highlighted_option.id == sessions["sess-a"]
        await pilot.press("a")
        assert await verdict(pilot, approve_me) == {"decision": "allow"}
        await until(pilot, lambda: queue(app).option_count == 1)
        assert queue(app).highlighted_option.id == sessions["sess-b"]
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, RejectScreen))
        await pilot.press("enter")  # an empty reason is refused
        assert isinstance(app.screen, RejectScreen)
        await pilot.press(*"use make clean")
        await pilot.press("enter")
        v = await verdict(pilot, reject_me)
        assert v["decision"] == "deny" and v["error"]["type"] == "approval-rejected"
        assert v["error"]["reason"] == "use make clean" and v["error"]["request"] == sessions["sess-b"]
        await until(pilot, lambda: queue(app).option_count == 0)
    resolved = sorted((ws.run_dir / "approvals" / "resolved").glob("*.json"))
    outcomes = {json.loads(p.read_text())["request"]["session_id"]: json.loads(p.read_text())["decision"]["decision"]
                for p in resolved}
    assert outcomes == {"sess-a": "approve", "sess-b": "reject"}


@pytest.mark.parametrize("key,scope", [("s", "session"), ("i", "intent")])
async def test_remembered_grants_from_the_tui(tmp_path, monkeypatch, key: str, scope: str) -> None:
    ws = make_workspace(tmp_path)
    waiter = spawn_waiter(ws, "sess-a", "make clean")
    wait_for_requests(ws, 1)
    app = ApprovalApp(ws)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: queue(app).option_count == 1)
        await pilot.press(key)
        assert await verdict(pilot, waiter) == {"decision": "allow"}
    grants = Broker(ws.run_dir).grants()
    assert [(g["scope"], g["risk"], g["signature"]) for g in grants] == [(scope, "unknown-command", "exec:make clean")]
    # the next identical call is allowed without asking: for the session, or any session on the intent
    monkeypatch.setenv("ORCH_APPROVAL_TIMEOUT", "0.1")
    monkeypatch.delenv("ORCH_APPROVAL_CHANNEL", raising=False)
    gov = Governor(ws.root, approval_channel="tui")
    other = "sess-a" if scope == "session" else "sess-z"
    gov.select_intent("INT-1", session_id=other)
    assert gov.pre(to_call("Bash", {"command": "make clean"}, session_id=other, cwd=str(ws.root))).allowed
    gov.select_intent("INT-2", session_id="sess-q")
    v = gov.pre(to_call("Bash", {"command": "make clean"}, session_id="sess-q", cwd=str(ws.root)))
    assert v.error["type"] == "approval-timeout"


async def test_intents_reload_when_the_file_changes(tmp_path) -> None:
    ws = make_workspace(tmp_path)
    app = ApprovalApp(ws, refresh_seconds=3600)  # past any wait of this test: only watchdog can make it reload
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.screen.query_one("#intents-table", DataTable)
        await until(pilot, lambda: table.row_count == 3)
        await until(pilot, lambda: app._observer is not None)
        text = ws.intents_file.read_text().replace('"INT-3"', '"INT-9"')
        ws.intents_file.write_text(text)
        await until(pilot, lambda: any(str(table.get_row_at(i)[0]) == "INT-9" for i in range(table.row_count)))
        ws.intents_file.write_text("active_intents: 3\n")
        await until(pilot, lambda: table.row_count == 1 and str(table.get_row_at(0)[0]) == "ERROR")


def test_snapshot_main_screen(tmp_path, snap_compare) -> None:
    ws = make_workspace(tmp_path)
    scene(ws)
    app = ApprovalApp(ws, clock=lambda: NOW, watch=False, refresh_seconds=3600)  # no reload mid-snapshot
    app.sub_title = "~/repo"

    async def loaded(pilot) -> None:
        await until(pilot, lambda: queue(app).option_count == 1)
        await app.workers.wait_for_complete()
        table = app.screen.query_one("#ledger-table", DataTable)
        await until(pilot, lambda: table.row_count == 3)
        await pilot.pause()  # the screen has processed what it was sent (not a fixed delay)

    assert snap_compare(app, terminal_size=(80, 24), run_before=loaded)


async def test_request_from_a_linked_worktree_is_decided_in_the_main_worktrees_console(tmp_path) -> None:
    from orchestrator.approvals import ApprovalRequest
    from tests.approval_support import make_worktrees

    main_ws, linked = make_worktrees(tmp_path)
    proc = spawn_waiter(linked, "agent-in-linked", "rm -rf build")
    wait_for_requests(main_ws, 1)
    app = ApprovalApp(main_ws)  # real clock, watching files: the request came from elsewhere
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: queue(app).option_count == 1)
        item = app.items[queue(app).highlighted_option.id]
        assert isinstance(item, ApprovalRequest) and item.worktree == str(linked.root) and item.branch == "feature"
        # the queue entry and the detail pane say which worktree and branch asked
        assert "linked (feature)" in str(queue(app).get_option_at_index(0).prompt)
        head = app.screen.query_one("#detail-body").content.renderables[0]  # the Group's first part: the header
        assert "worktree linked (feature)" in head.plain
        # the sessions tab lists the linked worktree's session
        table = app.screen.query_one("#sessions-table", DataTable)
        await until(pilot, lambda: table.row_count >= 1)
        assert any(str(table.get_row_at(i)[1]) == "linked (feature)" for i in range(table.row_count))
        await pilot.press("a")
        assert await verdict(pilot, proc) == {"decision": "allow"}
        await until(pilot, lambda: queue(app).option_count == 0)
    [archived] = (main_ws.approvals_dir / "resolved").glob("*.json")
    record = json.loads(archived.read_text())
    assert record["decision"]["by"] == "tui" and record["request"]["worktree"] == str(linked.root)
