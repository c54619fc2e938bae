"""Concurrent evaluation in ``orch serve``: a call waiting for a person blocks nobody else.

Real processes throughout: a daemon (``orch serve``), the stdlib hook client per call (as Claude Code runs it),
several sessions writing at once from threads while one session's ``rm -rf`` waits on channel ``tui``. Every write
must be answered while the approval is still pending, recorded once in the ledger, and the chain must verify.
"""
from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from orchestrator import ledger
from orchestrator.daemon import server as daemon
from orchestrator.config import workspace
from orchestrator.approvals import ApprovalRequest, Broker
from orchestrator.engine.pipeline import Governor
from tests.daemon.test_server import CLIENT, ENV, INTENTS, start_daemon
from tests.waiting import TIMEOUT, wait_until

SESSIONS = 4
WRITES = 6


@pytest.fixture
def ws(tmp_path: Path):
    root = tmp_path / "ws"
    root.mkdir()
    workspace.init(root)
    (root / ".orchestration/active_intents.yaml").write_text(INTENTS)
    (root / "src" / "old").mkdir(parents=True)
    (root / "src" / "old" / "a.py").write_text("x = 1\n")
    root = root.resolve()
    yield root
    daemon.stop(root)


def hook(root: Path, ev: dict, **env: str) -> subprocess.CompletedProcess:
    """One hook call through the real client, as Claude Code makes it."""
    return subprocess.run([sys.executable, "-S", str(CLIENT), "claude-code"], input=json.dumps(ev),
                          capture_output=True, text=True, cwd=root, env={**ENV, **env}, timeout=120)


def tool_event(root: Path, session: str, n: int, phase: str, tool: str, tool_input: dict,
               response: dict | None = None) -> dict:
    ev = {"session_id": session, "cwd": str(root), "hook_event_name": phase, "tool_name": tool,
          "tool_input": tool_input, "tool_use_id": f"toolu_{session}_{n}"}
    if response is not None:
        ev["tool_response"] = response
    return ev


def write_through_hooks(root: Path, session: str, n: int, errors: list[str]) -> None:
    """Pre-hook, the write itself, post-hook: what one agent's Write costs the governance layer."""
    path = root / "src" / f"{session}_{n}.py"
    content = f"# {session} {n}\nvalue = {n}\n"
    inp = {"file_path": str(path), "content": content}
    pre = hook(root, tool_event(root, session, n, "PreToolUse", "Write", inp))
    if pre.returncode != 0 or pre.stdout.strip():
        errors.append(f"{session}/{n} pre: {pre.returncode} {pre.stdout} {pre.stderr}")
        return
    path.write_text(content)
    post = hook(root, tool_event(root, session, n, "PostToolUse", "Write", inp,
                                 {"type": "create", "filePath": str(path), "content": content}))
    if post.returncode != 0:
        errors.append(f"{session}/{n} post: {post.returncode} {post.stderr}")


def test_pending_approval_blocks_no_other_session(ws: Path) -> None:
    gov = Governor(ws)
    for s in ["waiter", *(f"s{i}" for i in range(SESSIONS))]:
        gov.select_intent("INT-1", session_id=s)
    start_daemon(ws)
    broker = Broker(ws / ".orchestration" / "run")

    # one session's rm -rf waits for a person (channel tui, forwarded by the client)
    rm = tool_event(ws, "waiter", 0, "PreToolUse", "Bash", {"command": "rm -rf src/old"})
    waiting: dict[str, subprocess.CompletedProcess] = {}
    waiter = threading.Thread(target=lambda: waiting.setdefault("r", hook(ws, rm, ORCH_APPROVAL_CHANNEL="tui")))
    waiter.start()
    try:
        _writers_meanwhile(ws, broker, waiter, waiting)
    finally:
        _release(broker, waiter)


def _writers_meanwhile(ws: Path, broker: Broker, waiter: threading.Thread,
                       waiting: dict[str, subprocess.CompletedProcess]) -> None:
    wait_until(lambda: len(broker.pending()) == 1, what="the rm -rf to wait for a person")

    # meanwhile four sessions write, concurrently, through the same daemon
    errors: list[str] = []
    writers = [threading.Thread(target=lambda s=s: [write_through_hooks(ws, s, n, errors) for n in range(WRITES)])
               for s in (f"s{i}" for i in range(SESSIONS))]
    for t in writers:
        t.start()
    for t in writers:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in writers)
    assert errors == []
    # ... all answered while the approval is still pending: nothing waited on it
    pending = broker.pending()
    assert len(pending) == 1 and isinstance(pending[0], ApprovalRequest) and waiter.is_alive()
    assert pending[0].session_id == "waiter" and pending[0].command == "rm -rf src/old"

    # every write recorded exactly once, and the chain verifies
    records = [r for _line, r in ledger.iter_records(ws / ".orchestration" / "agent_trace.jsonl")]
    paths = sorted(f["path"] for r in records for f in r["files"])
    assert paths == sorted(f"src/s{i}_{n}.py" for i in range(SESSIONS) for n in range(WRITES))
    verify = subprocess.run([sys.executable, "-m", "orchestrator", "trace", "verify", "-C", str(ws)],
                            capture_output=True, text=True, env=ENV)
    assert verify.returncode == 0, verify.stdout + verify.stderr

    # the person decides at last: the waiting call gets its answer
    broker.decide(pending[0].id, "reject", reason="keep the old sources")
    waiter.join(timeout=TIMEOUT)
    answer = json.loads(waiting["r"].stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and "keep the old sources" in answer["permissionDecisionReason"]
    assert (ws / "src" / "old" / "a.py").exists()


def test_session_state_stays_consistent_under_concurrent_calls(ws: Path) -> None:
    """Many threads of one daemon stamping reads of one session at once: no update is lost (per-session flock)."""
    start_daemon(ws)
    Governor(ws).select_intent("INT-1", session_id="s1")
    files = [ws / "src" / f"r{i}.py" for i in range(12)]
    for f in files:
        f.write_text(f"# {f.name}\n")
    results: list[int] = []

    def read(i: int) -> None:
        ev = tool_event(ws, "s1", i, "PostToolUse", "Read", {"file_path": str(files[i])},
                        {"type": "text", "file": {"filePath": str(files[i])}})
        results.append(hook(ws, ev).returncode)

    threads = [threading.Thread(target=read, args=(i,)) for i in range(len(files))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert results == [0] * len(files)
    state = json.loads((ws / ".orchestration/run/sessions/s1.json").read_text())
    assert sorted(state["reads"]) == sorted(f"src/{f.name}" for f in files)
    assert state["intent_id"] == "INT-1"


def test_daemon_reports_itself(ws: Path) -> None:
    proc = start_daemon(ws)
    info = wait_until(lambda: daemon.info(ws), what="run/orch.daemon.json")  # written right after the bind
    assert info["alive"] and info["pid"] == proc.pid
    assert info["package"] == daemon.package_dir() and info["code"] == daemon.code_digest()
    assert daemon.stop(ws, timeout=TIMEOUT)
    assert proc.wait(timeout=TIMEOUT) == 0
    assert daemon.info(ws) is None  # a clean exit takes its report with it


def test_a_call_waiting_for_a_person_keeps_an_idle_daemon_alive(ws: Path) -> None:
    """The idle timer does not run while a call is in flight; it runs again once the call is answered.

    The daemon runs in this process (the same ``Daemon`` that ``orch serve`` runs; the call still comes from the real
    hook client over the socket) so the test can see its watchdog apply the idle rule after the timeout has passed,
    instead of sleeping past the timeout and hoping the watchdog ran meanwhile."""
    Governor(ws).select_intent("INT-1", session_id="waiter")
    d = daemon.Daemon(ws, idle_timeout=0.5)
    assert d.acquire()
    d.bind()
    server = threading.Thread(target=d.serve_forever, daemon=True)
    server.start()
    broker = Broker(ws / ".orchestration" / "run")
    rm = tool_event(ws, "waiter", 0, "PreToolUse", "Bash", {"command": "rm -rf src/old"})
    got: dict[str, subprocess.CompletedProcess] = {}
    waiter = threading.Thread(target=lambda: got.setdefault(
        "r", hook(ws, rm, ORCH_APPROVAL_CHANNEL="tui", ORCH_APPROVAL_TIMEOUT=str(2 * TIMEOUT))))
    waiter.start()
    try:
        wait_until(lambda: len(broker.pending()) == 1 and d.in_flight == 1, what="the rm -rf to wait for a person")

        def checked_past_the_timeout() -> bool:
            assert server.is_alive(), "the idle timer stopped the daemon while a call was in flight"
            return d.last_check > d.last_request + d.idle_timeout

        # a watchdog check after the idle timeout had passed since the call came in: idle by the clock, kept running
        wait_until(checked_past_the_timeout, what="a watchdog check past the idle timeout")
        assert d.in_flight == 1 and daemon.is_alive(d.sock_path)
        [req] = broker.pending()
        broker.decide(req.id, "approve")
        waiter.join(timeout=TIMEOUT)
    finally:
        _release(broker, waiter)
    assert got["r"].returncode == 0
    # allowed: a person's yes still runs the command in the kernel sandbox (issue 21), so the answer wraps it
    answer = json.loads(got["r"].stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "allow" and "orch-sandbox" in answer["updatedInput"]["command"]
    assert [p for p in broker.pending()] == []
    # answered, the daemon is idle again: the same timer now stops it (the rule above was live, not dormant)
    server.join(timeout=TIMEOUT)
    assert not server.is_alive() and not d.sock_path.exists()


def _release(broker: Broker, waiter: threading.Thread) -> None:
    """Never leave a waiting hook behind (it would wait for its approval timeout): reject what it waits for."""
    while waiter.is_alive():
        for req in broker.pending():
            if isinstance(req, ApprovalRequest):
                broker.decide(req.id, "reject", reason="test over")
        waiter.join(timeout=0.2)


def test_a_daemon_that_stops_mid_approval_never_means_allow(ws: Path) -> None:
    """The connection drops with the daemon; the client evaluates in-process, files its own request and waits for
    the person again (who rejects here): a dropped connection is never read as an answer."""
    Governor(ws).select_intent("INT-1", session_id="waiter")
    proc = start_daemon(ws)
    broker = Broker(ws / ".orchestration" / "run")
    rm = tool_event(ws, "waiter", 0, "PreToolUse", "Bash", {"command": "rm -rf src/old"})
    got: dict[str, subprocess.CompletedProcess] = {}
    waiter = threading.Thread(target=lambda: got.setdefault(
        "r", hook(ws, rm, ORCH_APPROVAL_CHANNEL="tui", ORCH_APPROVAL_TIMEOUT=str(2 * TIMEOUT))))
    waiter.start()
    try:
        [asked] = wait_until(broker.pending, what="the daemon to file the rm -rf for a person")
        proc.kill()  # a crash, not a clean stop
        proc.wait(timeout=TIMEOUT)
        # the client asks again in-process: a request of its own, filed after the daemon died
        [again] = wait_until(lambda: [r for r in broker.pending() if r.id != asked.id],
                             what="the client's in-process evaluation to file its own request")
        assert isinstance(again, ApprovalRequest) and again.command == "rm -rf src/old"
        broker.decide(again.id, "reject", reason="not while the daemon is down")
        waiter.join(timeout=TIMEOUT)
    finally:
        _release(broker, waiter)
    answer = json.loads(got["r"].stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and "not while the daemon is down" in answer["permissionDecisionReason"]
    assert (ws / "src" / "old" / "a.py").exists()


def test_the_callers_approval_timeout_applies_in_the_daemon(ws: Path) -> None:
    """ORCH_APPROVAL_TIMEOUT comes with each call (as in-process), not from whichever hook started the daemon."""
    Governor(ws).select_intent("INT-1", session_id="waiter")
    proc = start_daemon(ws)
    rm = tool_event(ws, "waiter", 0, "PreToolUse", "Bash", {"command": "rm -rf src/old"})
    # Were the caller's 0.5 s ignored, the daemon would wait for the policy's 300 s and hook() would time out.
    got = hook(ws, rm, ORCH_APPROVAL_CHANNEL="tui", ORCH_APPROVAL_TIMEOUT="0.5")
    answer = json.loads(got.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and "no decision within 0.5 s" in answer["permissionDecisionReason"]
    assert proc.poll() is None  # answered by the daemon, which still runs
