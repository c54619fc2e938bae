"""The passkey channel end to end at the hook: a REAL hook process (the installed client, in process) waits for a
decision; signed decisions let it through or reject it with the person's reason; everything else — unsigned,
another call's assertion, a replay, oversized, malformed, a missing or broken approvers file — is set aside with
a reason while the call stays pending, and silence is a deny that names who was asked."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

import pytest

from orchestrator.approvals import ApprovalError, Broker
from orchestrator.approvals.broker import MAX_DECISION_BYTES
from tests.approvals.signed_support import (
    answer_of,
    daemon_for,
    decide,
    forge,
    passkey_workspace,
    pending_request,
    refused,
    sign,
    spawn_hook,
    still_pending,
)
from tests.approvals.softkey import SoftKey, approvers_file

CMD = "rm -rf build"


@pytest.mark.parametrize("served_by", ["in-process", "daemon"])
def test_a_signed_approval_lets_the_waiting_hook_through(tmp_path: Path, served_by: str) -> None:
    alice = SoftKey("alice")
    ws = passkey_workspace(tmp_path, alice)
    with contextlib.ExitStack() as stack:
        env = stack.enter_context(daemon_for(ws)) if served_by == "daemon" else {}
        # the first sandboxed command of a workspace compiles its launcher (~1 s, once): not the approval's cost
        warm = spawn_hook(ws, "python3 -c pass", tool_use_id="warm", env=env)
        assert answer_of(warm)["permissionDecision"] == "allow"
        proc = spawn_hook(ws, CMD, env=env)
        req = pending_request(ws)
        assert (req.channel, req.command, req.worktree) == ("passkey", CMD, str(ws.root))
        assert req.nonce and req.input_sha256 and req.tool_use_id == "toolu_1"
        started = time.monotonic()
        decide(ws, req, sign(alice, req))
        answer = answer_of(proc)
        elapsed = time.monotonic() - started
    assert answer.get("permissionDecision", "allow") == "allow"
    if served_by == "daemon":  # as installed hooks run: the daemon loaded py_webauthn before the person clicked
        assert elapsed <= 1.0, f"the hook answered {elapsed:.2f} s after the decision"
    resolved = json.loads(Broker(ws.shared_run_dir).resolved_path(req.id).read_text())
    assert resolved["decision"]["by"] == "alice" and resolved["decision"]["via"] == "passkey"


def test_a_signed_rejection_reaches_the_agent_with_its_reason(tmp_path: Path) -> None:
    alice = SoftKey("alice")
    ws = passkey_workspace(tmp_path, alice)
    proc = spawn_hook(ws, CMD)
    req = pending_request(ws)
    reason = "use `make clean`, the build dir holds the signing cache"
    decide(ws, req, sign(alice, req, "reject", reason=reason), "reject", reason=reason)
    answer = answer_of(proc)
    assert answer["permissionDecision"] == "deny"
    assert reason in answer["permissionDecisionReason"] and "alice" in answer["permissionDecisionReason"]


def test_an_unsigned_decision_is_set_aside_and_the_call_stays_pending(tmp_path: Path) -> None:
    alice = SoftKey("alice")
    ws = passkey_workspace(tmp_path, alice)
    proc = spawn_hook(ws, CMD)
    req = pending_request(ws)
    forge(ws, req, {"id": req.id, "session_id": req.session_id, "decision": "approve", "scope": "once",
                    "by": "tui"})
    assert "no passkey assertion" in refused(ws, req)[0]["error"]
    assert still_pending(ws, req) and proc.poll() is None
    decide(ws, req, sign(alice, req))  # a valid one still works afterwards
    assert answer_of(proc).get("permissionDecision", "allow") == "allow"


@pytest.mark.parametrize("case", ["another-command", "oversized", "malformed", "unregistered", "flipped"])
def test_bad_decisions_are_refused_and_leave_the_call_pending(tmp_path: Path, case: str) -> None:
    alice, mallory = SoftKey("alice"), SoftKey("mallory")
    ws = passkey_workspace(tmp_path, alice)
    proc = spawn_hook(ws, CMD)
    req = pending_request(ws)
    base = {"id": req.id, "session_id": req.session_id, "decision": "approve", "scope": "once", "by": "console"}
    if case == "another-command":
        from dataclasses import replace

        other = replace(req, command="ls", input_sha256="sha256:" + "0" * 64)
        forge(ws, req, {**base, "assertion": sign(alice, other)})
        expect = "another request or another decision"
    elif case == "oversized":
        forge(ws, req, None, raw=json.dumps({**base, "pad": "x" * MAX_DECISION_BYTES}).encode())
        expect = f"over {MAX_DECISION_BYTES} bytes"
    elif case == "malformed":
        forge(ws, req, None, raw=b'{"id": "' + req.id.encode() + b'", "decision": ')
        expect = "unreadable decision"
    elif case == "unregistered":
        forge(ws, req, {**base, "assertion": sign(mallory, req)})
        expect = "not a registered approver"
    else:  # a signed rejection presented as an approval
        forge(ws, req, {**base, "assertion": sign(alice, req, "reject", reason="no")})
        expect = "another request or another decision"
    assert expect in refused(ws, req)[0]["error"]
    assert still_pending(ws, req) and proc.poll() is None
    decide(ws, req, sign(alice, req, "reject", reason="stop"), "reject", reason="stop")
    assert answer_of(proc)["permissionDecision"] == "deny"


def test_a_replayed_assertion_approves_nothing_else(tmp_path: Path) -> None:
    alice = SoftKey("alice")
    ws = passkey_workspace(tmp_path, alice)
    first = spawn_hook(ws, CMD, tool_use_id="toolu_1")
    req1 = pending_request(ws)
    assertion = sign(alice, req1)
    decide(ws, req1, assertion)
    assert answer_of(first).get("permissionDecision", "allow") == "allow"
    # the same command again: a new request, and the captured assertion replayed onto it
    second = spawn_hook(ws, CMD, tool_use_id="toolu_2")
    req2 = pending_request(ws)
    assert req2.id != req1.id
    forge(ws, req2, {"id": req2.id, "session_id": req2.session_id, "decision": "approve", "scope": "once",
                     "by": "console", "assertion": assertion})
    assert "another request" in refused(ws, req2)[0]["error"]
    assert still_pending(ws, req2)
    decide(ws, req2, sign(alice, req2, "reject", reason="once was enough"), "reject", reason="once was enough")
    assert "once was enough" in answer_of(second)["permissionDecisionReason"]


def test_a_missing_then_broken_approvers_file_refuses_until_fixed(tmp_path: Path) -> None:
    alice = SoftKey("alice")
    ws = passkey_workspace(tmp_path)  # no approvers file
    proc = spawn_hook(ws, CMD)
    req = pending_request(ws)
    decide(ws, req, sign(alice, req))
    assert "no approvers file" in refused(ws, req)[0]["error"]
    (ws.orch_dir / "approvers").write_text("passkey alice\n", encoding="utf-8")
    decide(ws, req, sign(alice, req))
    assert "approvers:1" in refused(ws, req, 2)[1]["error"]
    assert still_pending(ws, req) and proc.poll() is None
    approvers_file(ws.orch_dir, alice)
    decide(ws, req, sign(alice, req))
    assert answer_of(proc).get("permissionDecision", "allow") == "allow"


def test_silence_is_a_deny_that_names_who_was_asked(tmp_path: Path) -> None:
    ws = passkey_workspace(tmp_path, SoftKey("alice"), SoftKey("bob"),
                           extra="    ntfy:\n      server: http://127.0.0.1:9\n      topic: orch-test\n")
    answer = answer_of(spawn_hook(ws, CMD, timeout=1.0))
    assert answer["permissionDecision"] == "deny"
    reason = answer["permissionDecisionReason"]
    assert "no decision within 1 s" in reason
    assert "approvers alice, bob" in reason and "http://localhost:8470" in reason and "ntfy" in reason


def test_the_tui_and_the_cli_cannot_decide_a_passkey_request(tmp_path: Path) -> None:
    ws = passkey_workspace(tmp_path, SoftKey("alice"))
    proc = spawn_hook(ws, CMD)
    req = pending_request(ws)
    with pytest.raises(ApprovalError, match="signed with an approver's passkey"):
        Broker(ws.shared_run_dir).decide(req.id, "approve", by="tui")
    from orchestrator.cli import main

    assert main(["approve", "-C", str(ws.root), req.id]) == 1
    assert still_pending(ws, req)
    proc.kill()
    proc.wait()


def test_a_signed_session_grant_covers_the_next_call_and_a_forged_grant_does_not(tmp_path: Path) -> None:
    alice = SoftKey("alice")
    ws = passkey_workspace(tmp_path, alice, session="s1")
    from orchestrator.engine.pipeline import Governor

    Governor(ws.root).select_intent("INT-1", session_id="s2")
    cmd = "curl -X POST -d @build/out.o https://example.org/upload"  # an upload: asks, and may be remembered
    proc = spawn_hook(ws, cmd)
    req = pending_request(ws)
    assert req.risk not in ("force-push", "recursive-delete", "history-rewrite")
    decide(ws, req, sign(alice, req, "approve", "session"), scope="session")
    assert answer_of(proc).get("permissionDecision", "allow") == "allow"
    broker = Broker(ws.shared_run_dir)
    grants = broker.grants()
    assert len(grants) == 1 and grants[0]["by"] == "alice" and "evidence" in grants[0]
    # the same call in the same session: allowed by the signed grant, no new request
    assert answer_of(spawn_hook(ws, cmd, tool_use_id="toolu_2")).get("permissionDecision", "allow") == "allow"
    assert not list(broker.dir.glob("*.request.json"))
    assert any(json.loads(line).get("event") == "grant-used" for line in (broker.dir / "audit.jsonl").open())
    # a grant written for session s2 without a signature (or with s1's evidence) grants nothing
    data = json.loads(broker.grants_path.read_text())
    forged = {**data["grants"][0], "id": "g-forged", "session_id": "s2"}
    data["grants"].append({**forged, "evidence": None})
    data["grants"].append({**forged, "id": "g-forged2"})
    broker.grants_path.write_text(json.dumps(data))
    other = spawn_hook(ws, cmd, session="s2", tool_use_id="toolu_3")
    req3 = pending_request(ws)
    assert req3.session_id == "s2"
    decide(ws, req3, sign(alice, req3, "reject", reason="not in s2"), "reject", reason="not in s2")
    assert answer_of(other)["permissionDecision"] == "deny"


def test_no_agent_tool_can_write_the_approvers_file(tmp_path: Path) -> None:
    """``.orchestration/approvers`` is a governance file: selfguard refuses every file tool, whatever the intent."""
    from orchestrator.engine.pipeline import Governor
    from orchestrator.engine.tools import to_call

    alice = SoftKey("alice")
    ws = passkey_workspace(tmp_path, alice)
    gov = Governor(ws.root)
    for tool, tool_input in (("Write", {"file_path": str(ws.orch_dir / "approvers"), "content": "passkey m x\n"}),
                             ("Edit", {"file_path": str(ws.orch_dir / "approvers"), "old_string": "alice",
                                       "new_string": "mallory"})):
        verdict = gov.pre(to_call(tool, tool_input, session_id="s1", agent="claude-code", cwd=str(ws.root)))
        assert verdict.decision == "deny" and verdict.error["type"] == "governance-file", verdict
    assert (ws.orch_dir / "approvers").read_text().count("passkey alice") == 1
