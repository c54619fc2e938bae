"""Pending items: what waits for a person's decision, in one shape the page renders without knowing its kind.

A *source* lists the items of one kind and decides them; the page only knows the item shape (:func:`item`):

``kind``, ``id``, ``title``, ``created``, ``expires``, ``facts`` ([label, value] pairs: agent, session, intent,
worktree, risk, targets…), ``reasons``, ``preview`` ({label, language, text}: the command or the diff, exactly as
the TUI shows it), ``actions`` ([{decision, scope, label, disabled?}]: "approve once / for the session / for the
intent", "reject" which asks a reason), ``signed`` (a decision needs the approver's passkey), ``note`` (why the
page cannot decide it, e.g. a ``tui``-channel request) and ``state`` (``pending`` / ``decided``: a decision waits
for the agent to pick it up, as after a deferred call).

Sources: :class:`ApprovalSource` (the approval broker's requests, intent proposals included: an action with
``edit`` opens the intent form prefilled with the item's ``proposal`` and the person's ``edits`` are signed with
the decision). Another kind registers a factory in :data:`SOURCES` with the same three methods — ``items()``,
``fields(id, decision, scope, reason, edits)`` (the canonical fields its passkey challenge is the hash of,
:mod:`orchestrator.approvals.passkey`) and ``decide(id, decision, scope, reason, assertion=, approver=, edits=)`` —
and the page, the challenge endpoint and the pushes serve it unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from orchestrator.approvals import ApprovalError, ApprovalRequest, BrokenRequest, Broker

SIGNED_CHANNEL = "passkey"
#: how long :meth:`ApprovalSource.decide` watches for the hook's verdict on a decision it wrote
OUTCOME_WAIT_SECONDS = 3.0


class Console(Protocol):
    """What a source needs of the console (:class:`orchestrator.web.console.Console`)."""

    broker: Broker

    def forbid_remember(self) -> frozenset[str] | None: ...


class Source(Protocol):
    """One kind of pending item (see the module docstring)."""

    kind: str

    def items(self) -> list[dict[str, Any]]: ...

    def fields(self, item_id: str, decision: str, scope: str, reason: str | None,
               edits: Any = None) -> dict[str, Any]: ...

    def decide(self, item_id: str, decision: str, scope: str, reason: str | None, *,
               assertion: dict[str, Any], approver: str, edits: Any = None) -> dict[str, Any]: ...


def item(kind: str, item_id: str, title: str, *, created: float, expires: float, facts: list[list[str]],
         reasons: list[str] | None = None, preview: dict[str, str] | None = None,
         actions: list[dict[str, Any]] | None = None, signed: bool = True, note: str | None = None,
         state: str = "pending", proposal: dict[str, Any] | None = None) -> dict[str, Any]:
    """One pending item in the page's shape."""
    return {"kind": kind, "id": item_id, "title": title, "created": created, "expires": expires, "facts": facts,
            "reasons": reasons or [], "preview": preview, "actions": actions or [], "signed": signed,
            "note": note, "state": state, "proposal": proposal}


def approval_actions(req: ApprovalRequest, forbidden: frozenset[str] | None) -> list[dict[str, Any]]:
    """Approve once / for the session / for the intent / reject, with why a remembered grant is unavailable."""
    never = forbidden is None or req.risk in forbidden
    why_never = f"{req.risk} is never remembered (policy approval.forbid_remember)" if never else None
    return [
        {"decision": "approve", "scope": "once", "label": "Approve once"},
        {"decision": "approve", "scope": "session", "label": "Approve for this session", "disabled": why_never},
        {"decision": "approve", "scope": "intent", "label": "Approve for this intent",
         "disabled": why_never or (None if req.intent_id else "the call has no intent")},
        {"decision": "reject", "scope": "once", "label": "Reject…", "reason": True},
    ]


def proposal_item(req: ApprovalRequest, *, decided: bool, signed: bool, note: str | None) -> dict[str, Any]:
    """An agent's intent proposal (:mod:`orchestrator.approvals.proposal`): accept it as proposed, edit then
    accept it (the edits are signed with the acceptance), or reject it with a reason."""
    fields = req.proposal or {}
    agent = req.agent + (f" ({req.agent_id})" if req.agent_id else "")
    facts = [["Risk", req.risk], ["Proposed by", agent], ["Session", req.session_id], ["Worktree", req.where()],
             ["Name", str(fields.get("name", ""))], ["Scope", ", ".join(fields.get("owned_scope") or [])]]
    for key, label in (("constraints", "Constraints"), ("acceptance_criteria", "Acceptance criteria"),
                       ("owner", "Owner")):
        value = fields.get(key)
        if value:
            facts.append([label, "; ".join(value) if isinstance(value, list) else str(value)])
    preview = {"label": "active_intents.yaml after acceptance", "language": "diff", "text": req.diff} \
        if req.diff else None
    actions: list[dict[str, Any]] = [
        {"decision": "approve", "scope": "once", "label": "Accept intent"},
        {"decision": "approve", "scope": "once", "label": "Edit and accept…", "edit": True},
        {"decision": "reject", "scope": "once", "label": "Reject…", "reason": True}]
    return item("approval", req.id, f"New intent: {fields.get('name', '?')}", created=req.created,
                expires=req.expires, facts=facts, reasons=list(req.reasons), preview=preview, actions=actions,
                signed=signed, note=note, state="decided" if decided else "pending", proposal=dict(fields))


def approval_item(req: ApprovalRequest, forbidden: frozenset[str] | None, *, decided: bool) -> dict[str, Any]:
    """An approval request as a page item (the TUI's detail pane, field for field)."""
    signed = getattr(req, "channel", "tui") == SIGNED_CHANNEL
    note = None if signed else ("asked through the tui channel: decide it in `orch tui` or with `orch approve` "
                                "(the page signs decisions with a passkey; policy approval.channel: passkey)")
    if req.proposal is not None:
        return proposal_item(req, decided=decided, signed=signed, note=note)
    agent = req.agent + (f" ({req.agent_id})" if req.agent_id else "")
    facts = [["Risk", req.risk], ["Agent", agent], ["Session", req.session_id], ["Intent", req.intent_id or "-"],
             ["Worktree", req.where()], ["Tool", req.tool]]
    if req.paths:
        facts.append(["Targets", ", ".join(req.paths)])
    if req.cwd:
        facts.append(["Directory", req.cwd])
    if req.command:
        preview = {"label": "Command", "language": "shell", "text": req.command}
    elif req.diff:
        preview = {"label": "Diff", "language": "diff", "text": req.diff}
    else:
        preview = None
    return item("approval", req.id, req.summary, created=req.created, expires=req.expires, facts=facts,
                reasons=list(req.reasons), preview=preview, actions=approval_actions(req, forbidden),
                signed=signed, note=note, state="decided" if decided else "pending")


def broken_item(broken: BrokenRequest) -> dict[str, Any]:
    return item("approval", broken.id, "Corrupt request file", created=0.0, expires=0.0,
                facts=[["File", broken.path]], reasons=[broken.error], signed=False,
                note="it cannot be decided; the waiting call is denied when it times out")


class ApprovalSource:
    """The approval broker's pending requests (every worktree of the repository)."""

    kind = "approval"

    def __init__(self, console: Console) -> None:
        self.console = console
        self.broker: Broker = console.broker

    def items(self) -> list[dict[str, Any]]:
        forbidden = self.console.forbid_remember()
        self.broker.sweep()
        out = []
        for req in self.broker.pending(include_decided=True):
            if isinstance(req, BrokenRequest):
                out.append(broken_item(req))
            else:
                out.append(approval_item(req, forbidden, decided=self.broker.decision_path(req.id).exists()))
        return out

    def request(self, item_id: str) -> ApprovalRequest:
        req = self.broker.load(item_id)
        if getattr(req, "channel", "tui") != SIGNED_CHANNEL:
            raise ApprovalError(f"{item_id} was asked through the {getattr(req, 'channel', 'tui')!r} channel",
                                hint="decide it in `orch tui` or with `orch approve`")
        if req.expired(self.broker.clock()):
            raise ApprovalError(f"approval {item_id} expired; the call was denied",
                                hint="the agent may retry the call to ask again")
        return req

    def fields(self, item_id: str, decision: str, scope: str, reason: str | None,
               edits: Any = None) -> dict[str, Any]:
        from orchestrator.approvals.passkey import approval_fields

        req = self.request(item_id)
        return approval_fields(req, decision, scope, reason, proposal_edits(req, decision, edits))

    def decide(self, item_id: str, decision: str, scope: str, reason: str | None, *,
               assertion: dict[str, Any], approver: str, edits: Any = None) -> dict[str, Any]:
        """Write the signed decision for the waiting hook, then report what the hook made of it."""
        forbidden = self.console.forbid_remember()
        self.broker.decide(item_id, decision, scope=scope, reason=reason, by=approver,
                           forbid_remember=sorted(forbidden) if forbidden is not None else [],
                           assertion=assertion, intent=proposal_edits(self.request(item_id), decision, edits))
        return self._outcome(item_id)

    def _outcome(self, item_id: str) -> dict[str, Any]:
        """Watch briefly for the hook's answer: resolved (with what), refused (why), or still waiting."""
        deadline = time.monotonic() + OUTCOME_WAIT_SECONDS
        decision_path = self.broker.decision_path(item_id)
        resolved = self.broker.resolved_path(item_id)
        while time.monotonic() < deadline:
            if resolved.exists():
                return {"state": "resolved", "message": "the waiting call has its answer"}
            if not decision_path.exists():
                refusal = self.broker.last_refusal(item_id)
                if refusal:
                    return {"state": "refused", "message": refusal}
            _pause()
        return {"state": "waiting", "message": "decision recorded; the agent picks it up when it asks again "
                                               "(a deferred call, or a hook still starting)"}


def proposal_edits(req: ApprovalRequest, decision: str, edits: Any) -> dict[str, Any] | None:
    """The person's edits of a proposal they accept (None: as proposed), checked now so the page shows a mistake
    before anything is signed; the waiting side checks them again (:func:`proposal.accepted_fields`)."""
    from orchestrator.approvals import proposal

    if edits is None or edits == {}:
        return None
    if req.proposal is None or decision != "approve":
        raise ApprovalError("only an accepted intent proposal carries edits")
    if not isinstance(edits, dict):
        raise proposal.ProposalError("the edits must be an object")
    cleaned = {k: v for k, v in edits.items() if v is not None}
    proposal.accepted_fields(req, {"intent": cleaned})
    return cleaned or None


def _pause() -> None:
    import threading

    threading.Event().wait(0.05)


#: kind -> factory of the source; a new kind of pending item registers itself here
SOURCES: dict[str, Callable[[Console], Source]] = {"approval": ApprovalSource}


__all__ = ["SOURCES", "ApprovalSource", "Source", "approval_item", "item", "proposal_edits"]
