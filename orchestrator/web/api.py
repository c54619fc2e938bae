"""The console's request handlers (routes in :func:`orchestrator.web.app.create_app`).

GET handlers only read: the page, its state (pending items, intents, sessions, ledger tail, passkey status) and
the Activity summary. POST handlers (behind the guard's Origin / CSRF / size checks) compute a passkey challenge,
take a signed decision, prepare and apply a signed intent change (:mod:`orchestrator.web.intents`), and register a
passkey for an ``orch approver add`` ticket. File I/O runs in Starlette's
thread pool; every expected error is a JSON ``{"error": {type, message, hint}}`` with a 4xx status, and the
pending item is left as it was.
"""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse

from orchestrator.approvals.approvers import Approver, ApproversError, b64url, unb64url
from orchestrator.approvals.passkey import (
    PasskeyError,
    ReplayGuard,
    challenge as challenge_of,
    check_assertion,
    credential_of,
    decision_parts,
    load_approvers,
)
from orchestrator.core.errors import OrchestratorError
from orchestrator.web import intents as _intents
from orchestrator.web.console import WEBAUTHN_TIMEOUT_MS, Console

_SINCE_RE = re.compile(r"^\d{1,4}[hdw]$")


def _console(request: Request) -> Console:
    return request.app.state.console  # type: ignore[no-any-return]


def _error(exc: OrchestratorError, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": exc.to_dict()}, status_code=status)


async def _body(request: Request) -> dict[str, Any]:
    try:
        data = json.loads(await request.body())
    except ValueError:
        raise OrchestratorError("the request body is not JSON") from None
    if not isinstance(data, dict):
        raise OrchestratorError("the request body must be a JSON object")
    return data


async def index(request: Request) -> HTMLResponse:
    return HTMLResponse(_console(request).page())


# ---------------------------------------------------------------------------------------------------------- reads
def snapshot(console: Console) -> dict[str, Any]:
    """Everything the page shows; bad files become visible errors, never a failed request."""
    from orchestrator.tui.data import load_intents, load_ledger, load_sessions

    ws = console.workspace
    now = console.clock()
    items: list[dict[str, Any]] = []
    errors = []
    for kind, source in console.sources.items():
        try:
            items.extend(source.items())
        except Exception as exc:  # noqa: BLE001 - one broken source must not hide the others
            errors.append(f"{kind}: {exc}")
    items.sort(key=lambda i: (i["created"], i["id"]))
    intents, intents_error = load_intents(ws)
    entries = _intents.entries(console) if not intents_error else {}
    return {
        "workspace": ws.root.name, "now": now, "items": items, "item_errors": errors,
        "passkey": passkey_status(console),
        "intents": [{**vars(r), "entry": entries.get(r.id)} for r in intents], "intents_error": intents_error,
        "sessions": [vars(r) for r in load_sessions(ws, now)],
        "ledger": [vars(r) for r in load_ledger(ws, 50)],
    }


def passkey_status(console: Console) -> dict[str, Any]:
    """The relying party, whether this console's origin is accepted by the hook, the approvers (or the error)."""
    settings = console.settings()
    out: dict[str, Any] = {"rp_id": settings.rp_id, "origins": list(settings.origins), "approvers": [],
                           "error": None, "channel": None, "origin_ok": console.url.lower() in
                           {o.lower() for o in settings.origins}}
    try:
        out["channel"] = console.policy().approval.channel
    except OrchestratorError as exc:
        out["error"] = f"policy: {exc.message}"
    try:
        out["approvers"] = load_approvers(console.workspace.orch_dir).names()
    except PasskeyError as exc:
        out["error"] = out["error"] or exc.message
    return out


async def state(request: Request) -> JSONResponse:
    return JSONResponse(await run_in_threadpool(snapshot, _console(request)))


def activity_of(console: Console, since: str) -> dict[str, Any]:
    from datetime import datetime, timezone

    from orchestrator.views.activity import collect, render

    act = collect(console.workspace, since=since, now=datetime.fromtimestamp(console.clock(), timezone.utc))
    return {"since": since, "lines": render(act), "activity": act.to_dict()}


async def activity(request: Request) -> JSONResponse:
    since = request.query_params.get("since", "7d")
    if not _SINCE_RE.match(since):
        return _error(OrchestratorError(f"since must look like 24h, 7d or 2w, not {since[:20]!r}"))
    return JSONResponse(await run_in_threadpool(activity_of, _console(request), since))


# ---------------------------------------------------------------------------------------------------------- decisions
def _challenge(console: Console, kind: str, item_id: str, body: dict[str, Any]) -> dict[str, Any]:
    decision, scope, reason = decision_parts(body)
    fields = console.source(kind).fields(item_id, decision, scope, reason, body.get("edits"))
    return console.signing_options(challenge_of(fields))


def _decide(console: Console, kind: str, item_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """Check the assertion here too (to tell the person now), then hand the decision to the waiting hook."""
    decision, scope, reason = decision_parts(body)
    source = console.source(kind)
    edits = body.get("edits")
    fields = source.fields(item_id, decision, scope, reason, edits)
    assertion = body.get("assertion")
    cred = credential_of(assertion)
    if not isinstance(assertion, dict):  # (credential_of refused anything else already)
        raise PasskeyError("the decision carries no passkey assertion")
    guard = ReplayGuard(console.broker.dir)
    if guard.used(item_id):
        raise PasskeyError(f"{item_id} was already decided with a passkey")
    verified = check_assertion(assertion, challenge_of(fields), load_approvers(console.workspace.orch_dir),
                               console.settings(), sign_count=guard.count(cred))
    outcome = source.decide(item_id, decision, scope, reason, assertion=assertion, approver=verified.approver.name,
                            edits=edits)
    return {"ok": outcome.get("state") != "refused", "approver": verified.approver.name, **outcome}


async def _answer(request: Request, fn: Any, *path: str) -> JSONResponse:
    """Run ``fn(console, *path params, body)`` in the thread pool; an expected error is a 4xx JSON answer (409 for
    a request that is not pending any more), a decision the hook refused a 409."""
    try:
        body = await _body(request)
        args = [_console(request), *(request.path_params[p] for p in path), body]
        data = await run_in_threadpool(fn, *args)
    except OrchestratorError as exc:
        return _error(exc, 409 if exc.type == "approval-error" else 400)
    return JSONResponse(data, status_code=409 if data.get("ok") is False else 200)


async def challenge(request: Request) -> JSONResponse:
    return await _answer(request, _challenge, "kind", "item_id")


async def decide(request: Request) -> JSONResponse:
    return await _answer(request, _decide, "kind", "item_id")


async def intent_challenge(request: Request) -> JSONResponse:
    return await _answer(request, _intents.challenge)


async def intent_apply(request: Request) -> JSONResponse:
    return await _answer(request, _intents.apply)


# ---------------------------------------------------------------------------------------------------------- registration
def _register_options(console: Console, body: dict[str, Any]) -> dict[str, Any]:
    from webauthn import generate_registration_options, options_to_json
    from webauthn.helpers.structs import (
        AuthenticatorSelectionCriteria,
        PublicKeyCredentialDescriptor,
        ResidentKeyRequirement,
        UserVerificationRequirement,
    )

    from orchestrator.web import registration

    ticket = registration.load(console.workspace.run_dir, body.get("token"))  # type: ignore[arg-type]
    settings = console.settings()
    try:
        existing = load_approvers(console.workspace.orch_dir).for_rp(settings.rp_id)
    except PasskeyError:
        existing = []  # the first approver: no file yet
    uv = UserVerificationRequirement.REQUIRED if settings.user_verification else UserVerificationRequirement.PREFERRED
    options = generate_registration_options(
        rp_id=settings.rp_id, rp_name=f"orchestrator ({console.workspace.root.name})", user_name=ticket.name,
        user_id=unb64url(ticket.user_id), challenge=unb64url(ticket.challenge), timeout=WEBAUTHN_TIMEOUT_MS,
        authenticator_selection=AuthenticatorSelectionCriteria(resident_key=ResidentKeyRequirement.PREFERRED,
                                                               user_verification=uv),
        exclude_credentials=[PublicKeyCredentialDescriptor(id=unb64url(a.credential_id)) for a in existing])
    return {"name": ticket.name, "options": json.loads(options_to_json(options))}


def _register_finish(console: Console, body: dict[str, Any]) -> dict[str, Any]:
    from webauthn import verify_registration_response

    from orchestrator.approvals import approvers
    from orchestrator.web import registration

    token = body.get("token")
    run_dir = console.workspace.run_dir
    ticket = registration.claim(run_dir, token)  # type: ignore[arg-type]
    settings = console.settings()
    try:
        verified = verify_registration_response(
            credential=body.get("credential"), expected_challenge=unb64url(ticket.challenge),  # type: ignore[arg-type]
            expected_rp_id=settings.rp_id, expected_origin=list(settings.origins),
            require_user_verification=settings.user_verification)
        approver = Approver(ticket.name, settings.rp_id, b64url(verified.credential_id),
                            verified.credential_public_key, added=date.today().isoformat())
        path = approvers.append(console.workspace.orch_dir, approver)
    except (ApproversError, OrchestratorError) as exc:
        registration.record(run_dir, token, error=exc.message)  # type: ignore[arg-type]
        raise registration.RegistrationError(exc.message) from None
    except Exception as exc:  # noqa: BLE001 - py_webauthn's refusals and malformed input alike
        registration.record(run_dir, token, error=str(exc))  # type: ignore[arg-type]
        raise registration.RegistrationError(f"the passkey registration was refused: {exc}") from None
    registration.record(run_dir, token, credential_id=approver.credential_id)  # type: ignore[arg-type]
    return {"ok": True, "name": approver.name, "credential_id": approver.credential_id, "file": str(path),
            "message": f"{approver.name}'s passkey is registered; commit .orchestration/{path.name} so the team's "
                       "hooks trust it"}


async def register_options(request: Request) -> JSONResponse:
    return await _answer(request, _register_options)


async def register_finish(request: Request) -> JSONResponse:
    return await _answer(request, _register_finish)


__all__ = ["activity", "challenge", "decide", "index", "intent_apply", "intent_challenge", "register_finish",
           "register_options", "snapshot", "state"]
