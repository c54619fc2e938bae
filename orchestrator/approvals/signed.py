"""The ``passkey`` channel's hook side: wait for a decision, verify its signature, resolve; signed grants.

The approval hook (:mod:`orchestrator.pre.approval`) submits the request and then calls :func:`wait_signed`.
Every decision that lands in the broker directory — whoever wrote it: the console, a push reply, a forger — is
checked here, against the request this process holds in memory (:mod:`orchestrator.approvals.passkey`):

- verified: the request is resolved with the decision and the approver's name (the ledger records it);
- refused (unsigned, another call's assertion, a replay, an expired request, an unknown credential, a broken
  approvers file, malformed or oversized): the decision file is archived as refused with the reason
  (``audit.jsonl``: ``decision-refused``) and the request **stays pending** until a valid decision or its timeout.

A remembered grant ("for this session / intent") under this channel is only as good as the signed decision that
created it: :func:`find_signed_grant` re-verifies the assertion stored with the grant against the current approvers
file (an approver removed from the file takes their grants along) and matches the call against the *signed* fields,
not against the grant file's own (unsigned) copy of them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from orchestrator.approvals.broker import Broker
from orchestrator.approvals.passkey import (
    PasskeyError,
    ReplayGuard,
    Settings,
    approval_fields,
    challenge,
    check_assertion,
    credential_of,
    decision_parts,
    load_approvers,
)
from orchestrator.approvals.request import ApprovalRequest

CHANNEL = "passkey"


def verify_decision(req: ApprovalRequest, data: dict[str, Any], *, orch_dir: str, settings: Settings,
                    guard: ReplayGuard, now: float) -> dict[str, Any]:
    """The verified decision on ``req`` (with ``by``: the approver's name), or :class:`PasskeyError`.

    ``data`` is what the broker read from the decision file; only its decision, scope, reason and assertion are
    used — everything the signature covers is taken from ``req``, this process's own copy of the request."""
    if data.get("decision") == "invalid":
        raise PasskeyError(str(data.get("error") or "unreadable decision"))
    decision, scope, reason = decision_parts(data)
    if now >= req.expires:
        raise PasskeyError(f"request {req.id} expired before the decision arrived")
    edits = data.get("intent") if req.proposal is not None else None
    if edits is not None and not isinstance(edits, dict):
        raise PasskeyError("the accepted intent's edits are not an object")
    assertion = data.get("assertion")
    cred = credential_of(assertion)
    approvers = load_approvers(orch_dir)
    fields = approval_fields(req, decision, scope, reason, edits)
    verified = check_assertion(assertion, challenge(fields), approvers, settings, sign_count=guard.count(cred))
    guard.consume(req.id, verified, expires=req.expires)
    out = {"id": req.id, "session_id": req.session_id, "decision": decision, "scope": scope, "reason": reason,
           "by": verified.approver.name, "via": CHANNEL, "credential": cred, "decided_at": now,
           "evidence": {"fields": fields, "assertion": assertion}}
    if edits is not None:
        out["intent"] = edits  # (signed: an accepted proposal is written with exactly these edits)
    return out


def wait_signed(broker: Broker, req: ApprovalRequest, timeout: float, *, orch_dir: str, settings: Settings,
                apply: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> dict[str, Any]:
    """Block until a verified decision or ``timeout``; the final decision (``timeout`` when none came).

    ``apply``: what an approval does (an accepted intent proposal writes the intent), as :meth:`Broker.resolve`."""
    guard = ReplayGuard(broker.dir, clock=broker.clock)
    deadline = time.monotonic() + max(0.0, timeout)
    while True:
        remaining = deadline - time.monotonic()
        got = broker.wait(req.id, remaining) if remaining > 0 else None
        if got is None:
            return broker.resolve(req, timed_out=True)
        try:
            signed = verify_decision(req, got, orch_dir=orch_dir, settings=settings, guard=guard,
                                     now=broker.clock())
        except PasskeyError as exc:
            broker.refuse(req.id, got, exc.message)
            continue
        return broker.resolve(req, timed_out=False, decision=signed, apply=apply)


def find_deferred(broker: Broker, *, session_id: str, tool_use_id: str | None, input_sha256: str,
                  worktree: str | None) -> ApprovalRequest | None:
    """The live deferred request of this very call (same session, tool_use_id, input and worktree), if any."""
    if not tool_use_id:
        return None
    for req in broker.pending(include_decided=True):
        if (isinstance(req, ApprovalRequest) and req.deferred and req.channel == CHANNEL
                and req.session_id == session_id and req.tool_use_id == tool_use_id
                and req.input_sha256 == input_sha256 and req.worktree == worktree):
            return req
    return None


def settle_deferred(broker: Broker, req: ApprovalRequest, *, orch_dir: str,
                    settings: Settings) -> dict[str, Any] | None:
    """The verified decision on a deferred request (resolving it), or None while none is there (a refused one is
    set aside, as in :func:`wait_signed`)."""
    got = broker.wait(req.id, 0, mode="poll")
    if got is None:
        return None
    guard = ReplayGuard(broker.dir, clock=broker.clock)
    try:
        signed = verify_decision(req, got, orch_dir=orch_dir, settings=settings, guard=guard, now=broker.clock())
    except PasskeyError as exc:
        broker.refuse(req.id, got, exc.message)
        return None
    return broker.resolve(req, timed_out=False, decision=signed)


def grant_matches(fields: dict[str, Any], *, scope: str, session_id: str, intent_id: str | None, risk: str,
                  signature: str, worktree: str | None) -> bool:
    """Whether the signed fields of a grant's decision cover this call (scope key, risk, signature, worktree)."""
    if fields.get("decision") != "approve" or fields.get("scope") != scope:
        return False
    if fields.get("risk") != risk or fields.get("signature") != signature or fields.get("worktree") != worktree:
        return False
    if scope == "session":
        return fields.get("session") == session_id
    return scope == "intent" and bool(intent_id) and fields.get("intent") == intent_id


def find_signed_grant(broker: Broker, *, session_id: str, intent_id: str | None, risk: str, signature: str,
                      worktree: str | None, forbid_remember: Iterable[str], orch_dir: str, settings: Settings,
                      ttl: float) -> dict[str, Any] | None:
    """A live grant created by a verified signed decision that covers this call, else None.

    A grant without evidence (the ``tui`` channel's, or a forged one) never matches here; neither does one whose
    assertion no longer verifies (its approver was removed) or whose signed decision is older than ``ttl``."""
    if risk in set(forbid_remember):
        return None
    candidates = [g for g in broker.grants() if isinstance(g.get("evidence"), dict)
                  and g.get("risk") == risk and g.get("signature") == signature]
    if not candidates:
        return None
    try:
        approvers = load_approvers(orch_dir)
    except PasskeyError:
        return None
    now = broker.clock()
    for grant in candidates:
        evidence = grant["evidence"]
        fields, assertion = evidence.get("fields"), evidence.get("assertion")
        if not isinstance(fields, dict) or not grant_matches(
                fields, scope=str(grant.get("scope")), session_id=session_id, intent_id=intent_id, risk=risk,
                signature=signature, worktree=worktree):
            continue
        created = fields.get("created")
        if not isinstance(created, (int, float)) or isinstance(created, bool) or now >= created + ttl:
            continue
        try:
            decision_parts(fields)
            verified = check_assertion(assertion, challenge(fields), approvers, settings)
        except PasskeyError:
            continue
        return {**grant, "by": verified.approver.name}
    return None


#: the PreToolUse timeout ``orch install`` gives the hosts (``adapters.installer.PRE_TIMEOUT_S``; a test keeps them
#: equal): a hook the host kills is a non-blocking error there, i.e. the call runs
HOST_HOOK_TIMEOUT = 600


def check_passkey(ws: Any) -> Any:
    """``orch doctor``: with channel passkey, can anybody approve, and does the wait end before the host's?"""
    from orchestrator.config import policy as _policy
    from orchestrator.core.errors import OrchestratorError
    from orchestrator.core.findings import Finding

    try:
        approval = _policy.load(ws.policy_path).approval
    except OrchestratorError:
        return  # reported by config.policy
    if approval.channel != CHANNEL:
        return
    settings = Settings.from_policy(approval)
    try:
        found = load_approvers(ws.orch_dir)
    except PasskeyError as exc:
        yield Finding("approvals.passkey", "fail", f"nobody can approve: {exc.message}",
                      exc.hint or "fix .orchestration/approvers (orch approver add NAME writes it)")
    else:
        names = [a.name for a in found.for_rp(settings.rp_id)]
        if names:
            yield Finding("approvals.passkey", "ok", f"approvers for {settings.rp_id}: {', '.join(dict.fromkeys(names))}")
        else:
            yield Finding("approvals.passkey", "fail", f"no approver's passkey is registered for {settings.rp_id!r}",
                          "orch approver add NAME through the console at " + settings.origins[0])
    try:
        import webauthn  # noqa: F401
    except ImportError:
        yield Finding("approvals.webauthn", "fail", "the webauthn library is missing: every decision is refused",
                      "pip install webauthn (orchestrator depends on it)")
    if float(approval.timeout_seconds) >= HOST_HOOK_TIMEOUT:
        yield Finding("approvals.timeout", "warn",
                      f"approval.timeout_seconds {approval.timeout_seconds:g} is not below the hosts' hook timeout "
                      f"({HOST_HOOK_TIMEOUT} s): a host that kills the waiting hook runs the call",
                      f"set approval.timeout_seconds below {HOST_HOOK_TIMEOUT}, or approval.headless: defer")


__all__ = ["CHANNEL", "HOST_HOOK_TIMEOUT", "check_passkey", "find_deferred", "find_signed_grant", "grant_matches", "settle_deferred", "verify_decision",
           "wait_signed"]
