"""Passkey-signed decisions: the approvers file, the challenge, the assertion check, the replay guard and the
hook-side verification of a decision and of a remembered grant — with real signatures (tests/approvals/softkey.py)
and real files in a tmp workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.approvals import ApprovalRequest, Broker
from orchestrator.approvals import approvers as approvers_mod
from orchestrator.approvals.approvers import ApproversError
from orchestrator.approvals.passkey import (
    PasskeyError,
    ReplayGuard,
    Settings,
    approval_fields,
    challenge,
    check_assertion,
    decision_parts,
    input_digest,
)
from orchestrator.approvals.signed import find_signed_grant, grant_matches, verify_decision
from tests.approvals.softkey import SoftKey, approvers_file

NOW = 1_800_000_000.0
SETTINGS = Settings()


def request(**over: object) -> ApprovalRequest:
    data = dict(id="19aa2b3c4d5-0f1e2d", session_id="sess-a", tool="Bash", summary="rm -rf build",
                reasons=["recursive delete"], risk="recursive-delete", created=NOW, expires=NOW + 300,
                agent="claude-code", intent_id="INT-1", kind="exec", command="rm -rf build", paths=["build"],
                signature="cmd:rm", cwd="/w", worktree="/w", channel="passkey", nonce="ab" * 16,
                input_sha256=input_digest({"command": "rm -rf build"}), tool_use_id="toolu_1")
    data.update(over)
    return ApprovalRequest(**data)  # type: ignore[arg-type]


def signed(key: SoftKey, req: ApprovalRequest, decision: str = "approve", scope: str = "once",
           reason: str | None = None, **kw: object) -> dict:
    fields = approval_fields(req, decision, scope, reason)
    return {"id": req.id, "session_id": req.session_id, "decision": decision, "scope": scope, "reason": reason,
            "by": "console", "assertion": key.assertion(challenge(fields), **kw)}  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------ approvers file
def test_the_approvers_file_round_trips_and_names_its_credentials(tmp_path: Path) -> None:
    a, b = SoftKey("alice"), SoftKey("bob")
    approvers_mod.append(tmp_path, a.approver())
    approvers_mod.append(tmp_path, b.approver())
    loaded = approvers_mod.load(tmp_path)
    assert loaded.names() == ["alice", "bob"]
    assert loaded.by_credential[a.approver().credential_id].public_key == a.cose()
    with pytest.raises(ApproversError, match="already registered"):
        approvers_mod.append(tmp_path, a.approver())
    assert approvers_mod.remove(tmp_path, "alice") == 1
    assert approvers_mod.load(tmp_path).names() == ["bob"]


@pytest.mark.parametrize("line, error", [
    ("passkey alice localhost", "not a 'passkey"),
    ("ssh-ed25519 AAAA alice", "not a 'passkey"),
    ("passkey al ice localhost AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA pQECAyYgASFY", "not base64url|invalid"),
    ("passkey alice LOCALHOST AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA pQECAyYgASFY", "relying party"),
    ("passkey alice localhost AAAA pQECAyYgASFY", "at least 16 bytes"),
    ("passkey alice localhost AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA pQE+CAy", "base64url"),
    ("passkey alice localhost AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA pQECAyYgASFY color=red", "unknown option"),
])
def test_a_malformed_line_makes_the_whole_file_unusable_and_says_which(tmp_path: Path, line: str,
                                                                        error: str) -> None:
    good = SoftKey().line()
    (tmp_path / "approvers").write_text(f"# header\n{good}\n{line}\n", encoding="utf-8")
    with pytest.raises(ApproversError, match=error) as exc:
        approvers_mod.load(tmp_path)
    assert "approvers:3" in exc.value.message


def test_a_missing_approvers_file_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(ApproversError) as exc:
        approvers_mod.load(tmp_path)
    assert "no approvers file" in exc.value.message and "orch approver add" in exc.value.hint


def test_a_credential_listed_twice_is_refused(tmp_path: Path) -> None:
    key = SoftKey()
    (tmp_path / "approvers").write_text(f"{key.line()}\n{key.line()}\n", encoding="utf-8")
    with pytest.raises(ApproversError, match="listed twice"):
        approvers_mod.load(tmp_path)


# ------------------------------------------------------------------------------------------------ the challenge
def test_the_challenge_binds_every_field_of_the_request_and_of_the_decision() -> None:
    req = request()
    base = challenge(approval_fields(req, "approve", "once", None))
    assert base == challenge(approval_fields(request(), "approve", "once", None))  # deterministic
    variants = [request(command="rm -rf src"), request(id="19aa2b3c4d5-000000"), request(nonce="cd" * 16),
                request(expires=NOW + 301), request(session_id="sess-b"), request(intent_id="INT-2"),
                request(worktree="/other"), request(cwd="/w/sub"), request(agent="codex"), request(paths=["src"]),
                request(input_sha256=input_digest({"command": "rm -rf build", "timeout": 1}))]
    for other in variants:
        assert challenge(approval_fields(other, "approve", "once", None)) != base
    for decision, scope, reason in (("approve", "session", None), ("reject", "once", "no"),
                                    ("reject", "once", "no!")):
        assert challenge(approval_fields(req, decision, scope, reason)) != base


@pytest.mark.parametrize("data, error", [
    ({"decision": "yes"}, "decision must be"),
    ({"decision": "approve", "scope": "forever"}, "scope must be"),
    ({"decision": "reject", "scope": "once"}, "needs a reason"),
    ({"decision": "reject", "scope": "session", "reason": "x"}, "this call only"),
    ({"decision": "approve", "reason": "x" * 2001}, "at most 2000"),
    ([], "not a JSON object"),
])
def test_malformed_decisions_are_refused_with_a_clear_error(data: object, error: str) -> None:
    with pytest.raises(PasskeyError, match=error):
        decision_parts(data)


# ------------------------------------------------------------------------------------------------ assertions
def test_an_assertion_for_this_call_verifies_and_names_the_approver(tmp_path: Path) -> None:
    key = SoftKey("alice")
    approvers_file(tmp_path, key)
    ch = challenge(approval_fields(request(), "approve", "once", None))
    got = check_assertion(key.assertion(ch), ch, approvers_mod.load(tmp_path), SETTINGS)
    assert got.approver.name == "alice" and got.sign_count == 1 and got.user_verified


def test_an_assertion_for_another_command_is_refused(tmp_path: Path) -> None:
    key = SoftKey()
    approvers_file(tmp_path, key)
    made_for = challenge(approval_fields(request(command="ls"), "approve", "once", None))
    wanted = challenge(approval_fields(request(), "approve", "once", None))
    with pytest.raises(PasskeyError, match="another request or another decision"):
        check_assertion(key.assertion(made_for), wanted, approvers_mod.load(tmp_path), SETTINGS)


def test_an_assertion_from_an_unregistered_credential_is_refused(tmp_path: Path) -> None:
    approvers_file(tmp_path, SoftKey("alice"))
    stranger = SoftKey("mallory")
    ch = challenge(approval_fields(request(), "approve", "once", None))
    with pytest.raises(PasskeyError, match="not a registered approver"):
        check_assertion(stranger.assertion(ch), ch, approvers_mod.load(tmp_path), SETTINGS)


def test_a_registered_credential_id_with_another_key_is_refused(tmp_path: Path) -> None:
    """Forging: the attacker copies alice's credential id but signs with their own key."""
    alice = SoftKey("alice")
    approvers_file(tmp_path, alice)
    forger = SoftKey("alice", credential_id=alice.credential_id)
    ch = challenge(approval_fields(request(), "approve", "once", None))
    with pytest.raises(PasskeyError, match="refused"):
        check_assertion(forger.assertion(ch), ch, approvers_mod.load(tmp_path), SETTINGS)


def test_wrong_origin_rp_and_missing_user_verification_are_refused(tmp_path: Path) -> None:
    key = SoftKey()
    approvers_file(tmp_path, key)
    found = approvers_mod.load(tmp_path)
    ch = challenge(approval_fields(request(), "approve", "once", None))
    with pytest.raises(PasskeyError, match="origin"):
        check_assertion(key.assertion(ch, origin="http://localhost:9999"), ch, found, SETTINGS)
    with pytest.raises(PasskeyError, match="refused"):
        check_assertion(key.assertion(ch, rp_id="example.org"), ch, found, SETTINGS)
    with pytest.raises(PasskeyError, match="registered for 'localhost'"):
        check_assertion(key.assertion(ch), ch, found, Settings(rp_id="example.org",
                                                                 origins=("https://example.org",)))
    key.user_verified = False
    with pytest.raises(PasskeyError, match="[Uu]ser verification"):
        check_assertion(key.assertion(ch), ch, found, SETTINGS)
    assert check_assertion(key.assertion(ch), ch, found,
                           Settings(user_verification=False)).user_verified is False


@pytest.mark.parametrize("mangle, error", [
    (lambda a: None, "carries no passkey assertion"),
    (lambda a: {**a, "type": "password"}, "not a WebAuthn"),
    (lambda a: {**a, "id": "x" * 9000}, "too long"),
    (lambda a: {**a, "response": {**a["response"], "signature": 5}}, "signature"),
    (lambda a: {**a, "id": "not base64!"}, "not base64url"),
    (lambda a: {**a, "response": {**a["response"], "clientDataJSON": "e30"}}, "refused|malformed"),
])
def test_malformed_assertions_are_refused_clearly(tmp_path: Path, mangle, error: str) -> None:  # type: ignore[no-untyped-def]
    key = SoftKey()
    approvers_file(tmp_path, key)
    ch = challenge(approval_fields(request(), "approve", "once", None))
    with pytest.raises(PasskeyError, match=error):
        check_assertion(mangle(key.assertion(ch)), ch, approvers_mod.load(tmp_path), SETTINGS)


# ------------------------------------------------------------------------------------------------ replays
def test_the_replay_guard_refuses_a_used_id_and_a_sign_count_that_did_not_grow(tmp_path: Path) -> None:
    key = SoftKey()
    approvers_file(tmp_path, key)
    found = approvers_mod.load(tmp_path)
    guard = ReplayGuard(tmp_path, clock=lambda: NOW)
    ch = challenge(approval_fields(request(), "approve", "once", None))
    assertion = key.assertion(ch)
    verified = check_assertion(assertion, ch, found, SETTINGS, sign_count=guard.count(key.approver().credential_id))
    guard.consume("req-1", verified, expires=NOW + 300)
    assert guard.used("req-1") and guard.count(key.approver().credential_id) == 1
    with pytest.raises(PasskeyError, match="already used"):
        guard.consume("req-1", verified, expires=NOW + 300)
    # the same assertion again (count 1 again), for another id: the count did not grow
    with pytest.raises(PasskeyError, match="sign count"):
        check_assertion(assertion, ch, found, SETTINGS, sign_count=guard.count(key.approver().credential_id))
    with pytest.raises(PasskeyError, match="sign count"):
        guard.consume("req-2", verified, expires=NOW + 300)


def test_an_unreadable_replay_state_refuses_instead_of_starting_over(tmp_path: Path) -> None:
    (tmp_path / "passkey-state.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(PasskeyError, match="unreadable"):
        ReplayGuard(tmp_path).count("x")


# ------------------------------------------------------------------------------------------------ the hook's check
def _verify(tmp_path: Path, req: ApprovalRequest, data: dict, now: float = NOW + 1) -> dict:
    return verify_decision(req, data, orch_dir=str(tmp_path), settings=SETTINGS,
                           guard=ReplayGuard(tmp_path / "approvals"), now=now)


def test_the_hook_accepts_a_signed_decision_and_reports_the_approver(tmp_path: Path) -> None:
    key = SoftKey("alice")
    approvers_file(tmp_path, key)
    req = request()
    got = _verify(tmp_path, req, signed(key, req, "reject", reason="use make clean"))
    assert (got["decision"], got["by"], got["reason"], got["via"]) == ("reject", "alice", "use make clean", "passkey")
    with pytest.raises(PasskeyError, match="already used"):
        _verify(tmp_path, req, signed(key, req))  # a second decision on the same request, even validly signed


def test_the_hook_refuses_a_flipped_decision_and_a_changed_reason(tmp_path: Path) -> None:
    key = SoftKey()
    approvers_file(tmp_path, key)
    req = request()
    data = signed(key, req, "reject", reason="no")
    for change in ({"decision": "approve", "reason": None}, {"reason": "sure, go ahead"}):
        with pytest.raises(PasskeyError, match="another request or another decision"):
            _verify(tmp_path, req, {**data, **change})


def test_the_hook_refuses_an_expired_request_and_an_unsigned_decision(tmp_path: Path) -> None:
    key = SoftKey()
    approvers_file(tmp_path, key)
    req = request()
    with pytest.raises(PasskeyError, match="expired"):
        _verify(tmp_path, req, signed(key, req), now=req.expires)
    unsigned = {"id": req.id, "session_id": req.session_id, "decision": "approve", "scope": "once", "by": "tui"}
    with pytest.raises(PasskeyError, match="no passkey assertion"):
        _verify(tmp_path, req, unsigned)


def test_a_missing_or_broken_approvers_file_refuses_every_decision(tmp_path: Path) -> None:
    key = SoftKey()
    req = request()
    with pytest.raises(PasskeyError, match="no approvers file"):
        _verify(tmp_path, req, signed(key, req))
    (tmp_path / "approvers").write_text("passkey broken\n", encoding="utf-8")
    with pytest.raises(PasskeyError, match="approvers:1"):
        _verify(tmp_path, req, signed(key, req))


# ------------------------------------------------------------------------------------------------ signed grants
def _grant_setup(tmp_path: Path, scope: str = "session") -> tuple[Broker, SoftKey, ApprovalRequest]:
    key = SoftKey("alice")
    approvers_file(tmp_path, key)
    broker = Broker(tmp_path / "run", clock=lambda: NOW + 10)
    req = request()
    broker.submit(req)
    decision = _verify(tmp_path, req, signed(key, req, "approve", scope))
    broker.add_signed_grant(req, decision)
    return broker, key, req


def _find(broker: Broker, tmp_path: Path, **over: object) -> dict | None:
    args: dict = dict(session_id="sess-a", intent_id="INT-1", risk="recursive-delete", signature="cmd:rm",
                      worktree="/w", forbid_remember=[], orch_dir=str(tmp_path), settings=SETTINGS, ttl=3600.0)
    args.update(over)
    return find_signed_grant(broker, **args)


def test_a_signed_session_grant_covers_the_session_and_nothing_else(tmp_path: Path) -> None:
    broker, _key, _req = _grant_setup(tmp_path)
    found = _find(broker, tmp_path)
    assert found is not None and found["by"] == "alice"
    assert _find(broker, tmp_path, session_id="sess-b") is None
    assert _find(broker, tmp_path, signature="cmd:other") is None
    assert _find(broker, tmp_path, worktree="/elsewhere") is None
    assert _find(broker, tmp_path, forbid_remember=["recursive-delete"]) is None
    assert _find(broker, tmp_path, ttl=5.0) is None  # signed 10 s ago, remembered for 5
    # the tui channel's own grant lookup never matches a passkey grant
    assert broker.find_grant(session_id="sess-a", intent_id="INT-1", risk="recursive-delete",
                             signature="cmd:rm", worktree="/w") is None


def test_a_tampered_or_orphaned_grant_matches_nothing(tmp_path: Path) -> None:
    broker, _key, _req = _grant_setup(tmp_path)
    data = json.loads(broker.grants_path.read_text())
    grant = data["grants"][0]
    # widening the grant file's own fields does nothing: the signed fields decide
    grant["session_id"] = "sess-b"
    grant["evidence"]["fields"]["session"] = "sess-b"
    broker.grants_path.write_text(json.dumps(data))
    assert _find(broker, tmp_path, session_id="sess-b") is None
    # an approver removed from the file takes their grants along
    broker2, _k, _r = _grant_setup(tmp_path / "two")
    assert _find(broker2, tmp_path / "two", orch_dir=str(tmp_path / "two")) is not None
    approvers_file(tmp_path / "two", SoftKey("bob"))
    assert _find(broker2, tmp_path / "two", orch_dir=str(tmp_path / "two")) is None


def test_grant_matches_reads_the_scope_key() -> None:
    fields = approval_fields(request(), "approve", "intent", None)
    common = dict(session_id="other", risk="recursive-delete", signature="cmd:rm", worktree="/w")
    assert grant_matches(fields, scope="intent", intent_id="INT-1", **common)  # type: ignore[arg-type]
    assert not grant_matches(fields, scope="intent", intent_id="INT-2", **common)  # type: ignore[arg-type]
    assert not grant_matches(fields, scope="session", intent_id="INT-1", **common)  # type: ignore[arg-type]
