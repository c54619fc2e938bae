"""Intent proposals: an agent whose task fits no intent proposes one (``propose_intent``); a person accepts it,
optionally edited, or rejects it with a reason — through the same broker, queue and channels as an approval.

The flow (:func:`propose`), run by whoever knows the agent's session: the PreToolUse hook of
``mcp__orchestrator__propose_intent`` for agents with hooks (the MCP server cannot see the session id), the MCP
server itself for plain MCP clients:

1. the proposal is checked (:func:`normalise`: types, sizes, the intent schema, globs) — a malformed one is refused
   at once, the agent reads which field is wrong;
2. it is written as a broker request (``risk`` :data:`RISK`, ``proposal`` = the fields, ``diff`` = how
   ``active_intents.yaml`` would change): ``orch tui``, ``orch approvals``, the web console and push channels show
   it like any pending approval;
3. the proposer blocks until a decision or the timeout (policy ``approval.timeout_seconds``, default-deny: the
   proposal expires); the person accepts (``orch approve ID``, ``orch intents accept ID [edits]``, the TUI, the
   page) or rejects with a reason;
4. on acceptance the *waiting side* writes the intent — status IN_PROGRESS, the next free id, the proposer and the
   acceptor recorded (``proposed_by``, ``accepted_by``, ``proposal``) — under the broker's lock and the intents
   lock (:meth:`Broker.resolve` with ``apply``), and the caller selects it for the proposing session.

Why the waiting side writes: the decision is data carried by a file; the process that acts on it is the one that
checks it (its fields are validated again here, whoever wrote them), and the intent and the selection land together
or not at all. A sandboxed command cannot write the broker's directory (it is runtime state under
``.orchestration/``, outside every sandbox plan) and the file tools are refused there by selfguard, so an agent
cannot decide its own proposal; nothing in this module accepts anything on the agent's word.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.approvals.broker import Broker, branch_of
from orchestrator.approvals.request import ApprovalError, ApprovalRequest, new_id
from orchestrator.core.errors import ConfigError, OrchestratorError

RISK = "intent-proposal"
TOOL = "propose_intent"
#: the fields a person may change before accepting
EDITABLE = ("name", "owned_scope", "constraints", "acceptance_criteria", "description", "owner")
#: bounds of a proposal: it is shown to a person and written into a file people read
MAX_TEXT = 2000
MAX_ITEMS = 50
MAX_NAME = 200


class ProposalError(OrchestratorError):
    """A proposal (or a person's edit of it) is malformed."""

    type = "proposal-invalid"


@dataclass
class Result:
    """What became of a proposal: ``decision`` is approve / reject / timeout / invalid / error."""

    proposal_id: str
    decision: str
    intent_id: str | None = None
    reason: str | None = None
    error: str | None = None
    by: str | None = None
    timeout: float | None = None


# ---------------------------------------------------------------------- checking
def normalise(name: Any, owned_scope: Any, constraints: Any = None, why: Any = None,
              acceptance_criteria: Any = None, *, description: Any = None, owner: Any = None) -> dict[str, Any]:
    """The proposal's fields, checked (raises :class:`ProposalError` naming the field). ``why`` is what the
    person reads first; it becomes the intent's ``description`` unless one is given."""
    fields: dict[str, Any] = {
        "name": _text("name", name, MAX_NAME, required=True),
        "owned_scope": _texts("owned_scope", owned_scope, required=True),
        "constraints": _texts("constraints", constraints),
        "acceptance_criteria": _texts("acceptance_criteria", acceptance_criteria),
        "description": _text("description", description, MAX_TEXT) or _text("why", why, MAX_TEXT, required=True),
    }
    if owner is not None:
        fields["owner"] = _text("owner", owner, MAX_NAME)
    check(fields)
    return {k: v for k, v in fields.items() if v is not None}


def check(fields: dict[str, Any]) -> None:
    """Validate proposal fields with the intent schema (globs included)."""
    from orchestrator.config.intentstore import check_fields

    try:
        check_fields({"id": "PROPOSED", "status": "IN_PROGRESS", **fields}, _NOWHERE)
    except ConfigError as exc:
        msg = exc.message.split("intent 'PROPOSED': ", 1)[-1]
        raise ProposalError(msg, field=msg.split(":", 1)[0].split(".")[0],
                            hint="fix the field and propose again") from None


_NOWHERE = Path("proposal")


def _text(field: str, value: Any, limit: int, *, required: bool = False) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ProposalError(f"{field} is required", field=field)
        return None
    if not isinstance(value, str):
        raise ProposalError(f"{field} must be text", field=field)
    if len(value) > limit:
        raise ProposalError(f"{field} is longer than {limit} characters", field=field)
    _plain(field, value, lines=field != "name")
    return value.strip()


def _plain(field: str, value: str, *, lines: bool) -> None:
    """A person reads the proposal in a terminal before deciding: a control character (an escape sequence that
    conceals or erases a line, a carriage return, a bidi override) would make it show something else than it says.
    Only line breaks and tabs pass, and only in the texts that may span lines."""
    allowed = "\n\t" if lines else ""
    if not all(c.isprintable() or c in allowed for c in value):
        raise ProposalError(f"{field} holds a control character", field=field,
                            hint="plain text only (no escape sequences, carriage returns or bidi controls)")


def _texts(field: str, value: Any, *, required: bool = False) -> list[str]:
    if value is None:
        value = []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ProposalError(f"{field} must be a list of text", field=field)
    for v in value:
        _plain(field, v, lines=field != "owned_scope")
    value = [v.strip() for v in value if v.strip()]
    if required and not value:
        raise ProposalError(f"{field} needs at least one entry", field=field,
                            hint="owned_scope: the globs of the files this task changes, e.g. src/auth/**")
    if len(value) > MAX_ITEMS or any(len(v) > MAX_TEXT for v in value):
        raise ProposalError(f"{field}: at most {MAX_ITEMS} entries of {MAX_TEXT} characters", field=field)
    return value


def accepted_fields(request: ApprovalRequest, decision: dict[str, Any]) -> dict[str, Any]:
    """The proposal with the person's edits (``decision["intent"]``, only :data:`EDITABLE` keys), checked."""
    fields = dict(request.proposal or {})
    edits = decision.get("intent")
    if edits is not None:
        if not isinstance(edits, dict) or set(edits) - set(EDITABLE):
            raise ProposalError("the accepted intent carries unknown fields",
                                hint=f"editable: {', '.join(EDITABLE)}")
        fields.update(edits)
    return normalise(fields.get("name"), fields.get("owned_scope"), fields.get("constraints"),
                     description=fields.get("description") or "(no description)",
                     acceptance_criteria=fields.get("acceptance_criteria"), owner=fields.get("owner"))


# ---------------------------------------------------------------------- proposing (the waiting side)
def preview(ws: Any, fields: dict[str, Any]) -> str:
    """How ``active_intents.yaml`` would change (a unified diff; the id is allocated on acceptance)."""
    from orchestrator.config.intentstore import IntentStore, allocate_id, prefix_of

    try:
        docs = IntentStore(ws).read()
        ids = docs.all_ids()
        new = docs.active.add({"id": allocate_id(ids, prefix_of(ids)), "status": "IN_PROGRESS", **fields})
    except OrchestratorError as exc:
        return f"(no preview: {exc.message})"
    name = os.path.relpath(ws.intents_file, ws.root)
    return "".join(difflib.unified_diff(docs.active.text.splitlines(True), new.text.splitlines(True),
                                        f"a/{name}", f"b/{name}", n=1))


def submit(ws: Any, broker: Broker, fields: dict[str, Any], *, session_id: str, agent: str, timeout: float,
           agent_id: str | None = None, cwd: str | None = None, signed: bool = False) -> ApprovalRequest:
    """Write the proposal as a pending broker request (``fields`` from :func:`normalise`); ``signed``: the
    ``passkey`` channel (a decision must carry an approver's passkey signature: :mod:`orchestrator.approvals.signed`)."""
    now = broker.clock()
    extra: dict[str, Any] = {}
    if signed:
        from orchestrator.approvals.passkey import input_digest

        extra = {"channel": "passkey", "nonce": os.urandom(16).hex(), "input_sha256": input_digest(fields)}
    request = ApprovalRequest(
        id=new_id(now), session_id=session_id, tool=TOOL, summary=f"new intent: {fields['name']}",
        reasons=[fields.get("description") or ""], risk=RISK, created=now, expires=now + timeout, agent=agent,
        agent_id=agent_id, kind="intent", diff=preview(ws, fields), paths=list(fields["owned_scope"]),
        cwd=cwd, pid=os.getpid(), worktree=str(ws.root), branch=branch_of(str(ws.root)), proposal=dict(fields),
        **extra,
    )
    broker.submit(request)
    return request


def apply(ws: Any, request: ApprovalRequest, decision: dict[str, Any]) -> dict[str, Any]:
    """Write the accepted intent (IN_PROGRESS, next free id); the outcome archived with the request."""
    from orchestrator.config.intentstore import IntentStore

    try:
        fields = accepted_fields(request, decision)
        who = request.agent + (f" ({request.agent_id})" if request.agent_id else "")
        intent = IntentStore(ws).create({
            **fields, "status": "IN_PROGRESS", "proposed_by": f"{who}, session {request.session_id}",
            "accepted_by": str(decision.get("by") or "a person"), "proposal": request.id,
        })
    except OrchestratorError as exc:
        return {"error": exc.message, "type": exc.type}
    return {"intent_id": intent["id"]}


def propose(ws: Any, broker: Broker, fields: dict[str, Any], *, session_id: str, agent: str, timeout: float,
            agent_id: str | None = None, cwd: str | None = None, approval: Any = None) -> Result:
    """Submit, wait for a person, and on acceptance write the intent. The caller selects it for the session.

    ``approval``: the policy's ``approval`` section; with ``channel: passkey`` the decision must be signed by an
    approver's passkey (the page signs; :func:`orchestrator.approvals.signed.wait_signed` verifies it, edits
    included) and the proposal is pushed like an approval (``approval.notify``)."""
    signed = approval is not None and getattr(approval, "channel", None) == "passkey"
    request = submit(ws, broker, fields, session_id=session_id, agent=agent, timeout=timeout, agent_id=agent_id,
                     cwd=cwd, signed=signed)
    if signed:
        from orchestrator.approvals import notify
        from orchestrator.approvals.passkey import Settings
        from orchestrator.approvals.signed import wait_signed

        def audited(results: list[Any]) -> None:
            for sent in results:
                broker.audit("notified", id=request.id, target=sent.target, ok=sent.ok, detail=sent.detail)

        cfg = approval.notify
        notify.send_async(cfg, notify.approval_push(request, base_url=str(cfg.url), content=str(cfg.content)),
                          audited)
        decision = wait_signed(broker, request, timeout, orch_dir=str(ws.orch_dir),
                               settings=Settings.from_policy(approval), apply=lambda d: apply(ws, request, d))
    else:
        got = broker.wait(request.id, timeout)
        decision = broker.resolve(request, timed_out=got is None, apply=lambda d: apply(ws, request, d))
    verdict = str(decision.get("decision"))
    outcome = decision.get("outcome") or {}
    if verdict == "approve" and outcome.get("intent_id"):
        return Result(request.id, "approve", intent_id=outcome["intent_id"], by=decision.get("by"))
    if verdict == "approve":
        return Result(request.id, "error", error=outcome.get("error") or "the intent could not be written",
                      by=decision.get("by"))
    if verdict == "reject":
        return Result(request.id, "reject", reason=decision.get("reason") or "no reason given",
                      by=decision.get("by"))
    if verdict == "timeout":
        return Result(request.id, "timeout", timeout=timeout)
    return Result(request.id, "invalid", error=str(decision.get("error") or verdict))


def outcome_of(broker: Broker, proposal_id: str) -> dict[str, Any] | None:
    """The archived outcome of a resolved proposal (``{"intent_id": …}`` or ``{"error": …}``), None if none."""
    import json

    try:
        record = json.loads(broker.resolved_path(proposal_id).read_bytes())
    except (OSError, ValueError, ApprovalError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("request"), dict) or \
            record["request"].get("risk") != RISK:
        return None
    outcome = record.get("outcome")
    return outcome if isinstance(outcome, dict) else None


#: how far back :func:`recent_outcome` looks for a proposal a hook decided
RECENT_SECONDS = 120.0


def recent_outcome(broker: Broker, fields: dict[str, Any], *, within: float = RECENT_SECONDS) -> dict[str, Any] | None:
    """The outcome of a proposal of exactly ``fields`` accepted in the last ``within`` seconds (a hook decided it
    and its host handed the MCP tool no id: Codex). Newest first; None if there is none."""
    import json

    folder = broker.dir / "resolved"
    floor = broker.clock() - within
    try:
        entries = [(e.stat().st_mtime, e.path) for e in os.scandir(folder) if e.name.endswith(".json")]
    except OSError:
        return None
    for mtime, path in sorted(entries, reverse=True):
        if mtime < floor:
            break
        try:
            record = json.loads(Path(path).read_bytes())
        except (OSError, ValueError):
            continue
        request = record.get("request") if isinstance(record, dict) else None
        outcome = record.get("outcome")
        if isinstance(request, dict) and request.get("risk") == RISK and request.get("proposal") == fields and \
                isinstance(outcome, dict) and outcome.get("intent_id"):
            return outcome
    return None


# ---------------------------------------------------------------------- deciding (a person: TUI, CLI, page)
def accept(broker: Broker, proposal_id: str, edits: dict[str, Any] | None = None, *, by: str) -> dict[str, Any]:
    """Accept a pending proposal, with the person's ``edits`` (checked here so the person sees a mistake now;
    the waiting side checks them again)."""
    request = broker.load(proposal_id)
    if request.proposal is None:
        raise ApprovalError(f"{proposal_id} is not an intent proposal", hint="`orch approve` decides approvals")
    edits = {k: v for k, v in (edits or {}).items() if v is not None}
    if edits:
        accepted_fields(request, {"intent": edits})
    return broker.decide(proposal_id, "approve", by=by, intent=edits or None)


def reject(broker: Broker, proposal_id: str, reason: str, *, by: str) -> dict[str, Any]:
    """Reject a pending proposal; the reason goes back to the agent."""
    return broker.decide(proposal_id, "reject", reason=reason, by=by)


__all__ = ["EDITABLE", "RISK", "TOOL", "ProposalError", "Result", "accept", "accepted_fields", "apply", "check",
           "normalise", "outcome_of", "preview", "propose", "recent_outcome", "reject", "submit"]
