"""``orch status`` and the daemon check of ``orch doctor``, with a real daemon process."""

from __future__ import annotations

import json
import time
from pathlib import Path

from orchestrator.daemon import server as daemon
from orchestrator.cli import main
from orchestrator.commands.doctor import CHECKS, run_checks
from orchestrator.engine.pipeline import Governor
from tests.approval_support import make_workspace
from tests.daemon.test_server import start_daemon
from tests.waiting import TIMEOUT, wait_until


def test_status_lists_sessions_daemon_and_pending(tmp_path: Path, capsys) -> None:
    ws = make_workspace(tmp_path)
    Governor(ws.root).select_intent("INT-1", session_id="s-active", agent="claude-code")
    assert main(["status", "-C", str(ws.root)]) == 0
    text = capsys.readouterr().out
    assert "daemon not running" in text and "s-active" in text and "agent=claude-code" in text
    assert "intent=INT-1" in text and "pending approvals (0): none" in text
    # a session not seen for an hour is left out unless --all
    state = ws.run_dir / "sessions" / "s-old.json"
    state.write_text(json.dumps({"intent_id": "INT-2", "last_seen": time.time() - 7200, "reads": {}}))
    assert main(["status", "-C", str(ws.root), "--json"]) == 0
    assert [s["session"] for s in json.loads(capsys.readouterr().out)["sessions"]] == ["s-active"]
    assert main(["status", "-C", str(ws.root), "--json", "--all"]) == 0
    assert [s["session"] for s in json.loads(capsys.readouterr().out)["sessions"]] == ["s-active", "s-old"]


def test_status_and_doctor_see_the_running_daemon(tmp_path: Path, capsys) -> None:
    ws = make_workspace(tmp_path)
    proc = start_daemon(ws.root)
    try:
        wait_until(lambda: daemon.info(ws.root), what="run/orch.daemon.json")
        assert main(["status", "-C", str(ws.root), "--json"]) == 0
        [tree] = json.loads(capsys.readouterr().out)["worktrees"]
        assert tree["daemon"]["running"] and tree["daemon"]["pid"] == proc.pid and tree["daemon"]["current"]
        assert "orchestrator.commands.status:check_daemon" in CHECKS
        [finding] = run_checks(ws, ["orchestrator.commands.status:check_daemon"])
        assert finding.status == "ok" and str(proc.pid) in finding.message

        # a daemon that serves other code than the code installed here is a warning, with the fix
        info = ws.run_dir / daemon.INFO_NAME
        data = json.loads(info.read_text())
        info.write_text(json.dumps({**data, "package": "/old/venv/orchestrator"}))
        [finding] = run_checks(ws, ["orchestrator.commands.status:check_daemon"])
        assert finding.status == "warn" and "/old/venv" in finding.message and "orch serve --stop" in finding.fix
    finally:
        daemon.stop(ws.root, timeout=TIMEOUT)
        proc.wait(timeout=TIMEOUT)
    [finding] = run_checks(ws, ["orchestrator.commands.status:check_daemon"])
    assert finding.status == "info"


def test_status_lists_the_write_leases_held_now(tmp_path: Path, capsys) -> None:
    from orchestrator.engine.tools import to_call

    ws = make_workspace(tmp_path)
    gov = Governor(ws.root)
    gov.select_intent("INT-1", session_id="s-writer", agent="claude-code")
    call = to_call("Write", {"file_path": "src/new.py", "content": "x = 1\n"}, session_id="s-writer")
    assert gov.pre(call).allowed  # leased until its post-hook
    assert main(["status", "-C", str(ws.root), "--json"]) == 0
    [lease] = json.loads(capsys.readouterr().out)["leases"]
    assert lease["path"] == "src/new.py" and lease["session"] == "s-writer" and lease["intent"] == "INT-1"
    assert lease["tool"] == "Write" and lease["expires_in"] > 0
    assert main(["status", "-C", str(ws.root)]) == 0
    assert "write leases (1):" in capsys.readouterr().out
    gov.post(call)
    assert main(["status", "-C", str(ws.root)]) == 0
    assert "write leases (0): none" in capsys.readouterr().out
