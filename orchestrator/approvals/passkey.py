"""Passkey-signed decisions: the challenge of a pending item, checking an assertion, and the replay guard.

What a passkey proves (docs/security.md, "Approvals from anywhere"): the approver's authenticator — which no agent
holds — signed *this* decision on *this* pending item. The WebAuthn challenge is not a random server nonce but
the SHA-256 of the canonical item (:func:`challenge`): for an approval request its id, the command or a hash of the
tool input, the targets, cwd, worktree, agent, session, intent, risk, the request's nonce and expiry, and the
decision itself (approve / reject, scope, the rejection's reason). An assertion therefore approves that call and
nothing else, and a rejection cannot be turned into an approval by whatever carried it.

Who checks: the process that lets the call through (the approval hook, :mod:`orchestrator.approvals.signed`)
recomputes the challenge from the request *it holds in memory* and verifies the assertion against the committed
approvers file (:mod:`orchestrator.approvals.approvers`) — whatever channel carried it (the console, the broker's
files, a push reply). The console checks it too, only to tell the person at once when something is wrong.

Replays: the guard (:class:`ReplayGuard`) keeps, in the shared approval directory under ``.orchestration/run/``
(never writable by a sandboxed command: governance), every item id a signed decision was used for and each
credential's last sign count; an id used once, or a count that did not grow (a cloned authenticator), is refused.

``webauthn`` (py_webauthn) and ``cryptography`` are imported only inside :func:`check_assertion`, i.e. only when an
assertion is actually checked: never on the path of a call that needs no person.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.approvals.approvers import Approver, Approvers, ApproversError, b64url, unb64url
from orchestrator.approvals.request import ApprovalError

#: domain separation: a challenge of orchestrator's can never be a valid challenge of another protocol
DOMAIN = b"orchestrator/decision/v1\n"
#: bounds of what a decision may carry (a decision file or a POST body beyond these is refused unread)
MAX_DECISION_BYTES = 32 * 1024
MAX_FIELD_CHARS = 8 * 1024
MAX_REASON_CHARS = 2000
#: used item ids are kept this long after their item expired, then forgotten
REPLAY_KEEP_SECONDS = 7 * 24 * 3600
STATE_FILE = "passkey-state.json"


class PasskeyError(ApprovalError):
    """A signed decision was refused (the message says why; the item stays pending)."""

    type = "passkey-refused"


@dataclass(frozen=True)
class Settings:
    """The relying party the console serves (policy ``approval.passkey``)."""

    rp_id: str = "localhost"
    origins: tuple[str, ...] = ("http://localhost:8470",)
    user_verification: bool = True

    @classmethod
    def from_policy(cls, approval: Any) -> Settings:
        """From the policy's ``approval`` section (a PolicyView or a mapping); defaults where absent."""
        pk = getattr(approval, "passkey", None)
        if pk is None:
            return cls()
        get = pk.get if isinstance(pk, dict) else lambda k, d=None: getattr(pk, k, d)
        return cls(rp_id=str(get("rp_id", "localhost")),
                   origins=tuple(str(o).rstrip("/") for o in get("origins", None) or ("http://localhost:8470",)),
                   user_verification=get("user_verification", "required") == "required")


@dataclass(frozen=True)
class Verified:
    """A checked assertion: who signed, and the sign count the authenticator reported."""

    approver: Approver
    sign_count: int
    user_verified: bool


# ---------------------------------------------------------------------------------------------------- challenge
def canonical(fields: dict[str, Any]) -> bytes:
    """The one serialisation that is hashed: sorted keys, no spaces, ASCII, no NaN (both ends run Python, so float
    reprs agree)."""
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def challenge(fields: dict[str, Any]) -> bytes:
    """The WebAuthn challenge of a decision on an item: ``sha256(DOMAIN + canonical(fields))``."""
    return hashlib.sha256(DOMAIN + canonical(fields)).digest()


def input_digest(tool_input: Any) -> str:
    """``sha256:<hex>`` of a tool's input (canonical JSON; unserialisable values by their repr)."""
    data = json.dumps(tool_input, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=repr)
    return "sha256:" + hashlib.sha256(data.encode()).hexdigest()


def approval_fields(req: Any, decision: str, scope: str, reason: str | None,
                    edits: dict[str, Any] | None = None) -> dict[str, Any]:
    """The canonical fields of a decision on a broker request (:class:`~orchestrator.approvals.ApprovalRequest`):
    an approval of a tool call, or an intent proposal (``input`` is then the hash of the proposed fields, and the
    person's ``edits`` of them, if any, are signed too)."""
    fields = {"v": 1, "item": "approval", "id": req.id, "tool": req.tool, "command": req.command,
              "input": req.input_sha256, "paths": list(req.paths), "cwd": req.cwd, "worktree": req.worktree,
              "agent": req.agent, "agent_id": req.agent_id, "session": req.session_id, "intent": req.intent_id,
              "risk": req.risk, "signature": req.signature, "nonce": req.nonce, "created": req.created,
              "expires": req.expires, "decision": decision, "scope": scope, "reason": reason}
    if getattr(req, "proposal", None) is not None:
        fields.update(item="intent-proposal", edits=edits)
    return fields


def decision_parts(data: Any) -> tuple[str, str, str | None]:
    """``(decision, scope, reason)`` of a decision mapping, validated; raises :class:`PasskeyError`."""
    from orchestrator.approvals.broker import DECISIONS, SCOPES

    if not isinstance(data, dict):
        raise PasskeyError("the decision is not a JSON object")
    decision, scope, reason = data.get("decision"), data.get("scope", "once"), data.get("reason")
    if decision not in DECISIONS:
        raise PasskeyError(f"decision must be one of {DECISIONS}")
    if scope not in SCOPES:
        raise PasskeyError(f"scope must be one of {SCOPES}")
    if reason is not None and (not isinstance(reason, str) or len(reason) > MAX_REASON_CHARS):
        raise PasskeyError(f"reason must be a string of at most {MAX_REASON_CHARS} characters")
    reason = reason.strip() or None if isinstance(reason, str) else None
    if decision == "reject":
        if scope != "once":
            raise PasskeyError("a rejection is always for this call only (scope once)")
        if not reason:
            raise PasskeyError("a rejection needs a reason", hint="the reason goes back to the agent")
    return decision, scope, reason


# ---------------------------------------------------------------------------------------------------- assertions
_RESPONSE_KEYS = ("clientDataJSON", "authenticatorData", "signature")


def _shape(assertion: Any) -> dict[str, Any]:
    """The assertion's JSON (``PublicKeyCredential.toJSON()`` of a ``get()``), bounded; raises PasskeyError."""
    if not isinstance(assertion, dict):
        raise PasskeyError("the decision carries no passkey assertion",
                           hint="decide in the console (`orch console`): the page signs with your passkey")
    response = assertion.get("response")
    if assertion.get("type") != "public-key" or not isinstance(response, dict):
        raise PasskeyError("the assertion is not a WebAuthn public-key credential")
    for key in ("id", "rawId"):
        if not isinstance(assertion.get(key), str) or len(assertion[key]) > MAX_FIELD_CHARS:
            raise PasskeyError(f"the assertion's {key!r} is missing or too long")
    for key in _RESPONSE_KEYS:
        if not isinstance(response.get(key), str) or len(response[key]) > MAX_FIELD_CHARS:
            raise PasskeyError(f"the assertion's response.{key} is missing or too long")
    handle = response.get("userHandle")
    if handle is not None and (not isinstance(handle, str) or len(handle) > MAX_FIELD_CHARS):
        raise PasskeyError("the assertion's response.userHandle is malformed")
    return assertion


def credential_of(assertion: Any) -> str:
    """The canonical (unpadded base64url) credential id an assertion names; raises PasskeyError."""
    try:
        return b64url(unb64url(_shape(assertion)["id"], limit=1023))
    except ValueError:
        raise PasskeyError("the assertion's credential id is not base64url") from None


def check_assertion(assertion: Any, expected: bytes, approvers: Approvers, settings: Settings, *,
                    sign_count: int = 0) -> Verified:
    """Verify a WebAuthn assertion for the challenge ``expected`` against the registered credentials.

    Checks: a registered credential of this relying party; the client data's type, challenge and origin (one of
    ``settings.origins``); the RP id hash; user presence (and verification when required); the signature over
    authenticator data and client data; a sign count above ``sign_count`` when either is non-zero. Raises
    :class:`PasskeyError` saying which check failed."""
    cred = credential_of(assertion)
    approver = approvers.by_credential.get(cred)
    if approver is None:
        raise PasskeyError(f"credential {cred[:16]}… is not a registered approver's passkey",
                           hint="`orch approver list` shows the registered ones; `orch approver add NAME` "
                                "registers one (then commit .orchestration/approvers)")
    if approver.rp_id != settings.rp_id:
        raise PasskeyError(f"{approver.name}'s passkey is registered for {approver.rp_id!r}, the policy's "
                           f"relying party is {settings.rp_id!r}")
    try:
        from webauthn import verify_authentication_response
        from webauthn.helpers.exceptions import InvalidAuthenticationResponse, InvalidJSONStructure
    except ImportError as exc:  # pragma: no cover - a broken install
        raise PasskeyError(f"the webauthn library is not installed ({exc})",
                           hint="pip install 'orchestrator[console]' (or webauthn) where the hook runs") from None
    try:
        result = verify_authentication_response(
            credential=assertion, expected_challenge=expected, expected_rp_id=settings.rp_id,
            expected_origin=list(settings.origins), credential_public_key=approver.public_key,
            credential_current_sign_count=sign_count, require_user_verification=settings.user_verification)
    except InvalidAuthenticationResponse as exc:
        raise PasskeyError(_explain(str(exc), approver, settings)) from None
    except (InvalidJSONStructure, ValueError, TypeError, KeyError) as exc:
        raise PasskeyError(f"malformed assertion: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - a library failure on hostile input refuses, never allows
        raise PasskeyError(f"the assertion could not be checked: {exc!r}") from None
    return Verified(approver, int(result.new_sign_count), bool(result.user_verified))


def _explain(message: str, approver: Approver, settings: Settings) -> str:
    """py_webauthn's reason, said in terms of what the person did."""
    if "challenge" in message:
        return (f"{approver.name}'s assertion was made for another request or another decision (challenge "
                "mismatch): it approves nothing here")
    if "origin" in message:
        return f"the assertion comes from an origin not in approval.passkey.origins {list(settings.origins)}"
    if "sign count" in message:
        return (f"{approver.name}'s passkey reported a sign count that did not grow: a replayed assertion or a "
                "cloned authenticator")
    return f"{approver.name}'s assertion was refused: {message}"


# ---------------------------------------------------------------------------------------------------- replay guard
class ReplayGuard:
    """Used item ids and sign counts, in ``<approvals dir>/passkey-state.json`` (under its own lock)."""

    def __init__(self, directory: str | os.PathLike[str], *, clock: Any = time.time) -> None:
        self.path = Path(directory) / STATE_FILE
        self.clock = clock

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {"counts": {}, "used": {}}
        except (OSError, ValueError) as exc:
            # never start over silently: a reset state would let a used assertion through again
            raise PasskeyError(f"the replay state {self.path} is unreadable ({exc})",
                               hint="a person must look at it; remove it only if no decision can be replayed "
                                    "(every pending request expired)") from None
        if not isinstance(data, dict) or not isinstance(data.get("counts"), dict) \
                or not isinstance(data.get("used"), dict):
            raise PasskeyError(f"the replay state {self.path} is malformed")
        return data

    def count(self, credential_id: str) -> int:
        """The last sign count seen for a credential (0: never seen, or an authenticator without counters)."""
        value = self._read()["counts"].get(credential_id, 0)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    def used(self, item_id: str) -> bool:
        return item_id in self._read()["used"]

    def consume(self, item_id: str, verified: Verified, *, expires: float) -> None:
        """Record that ``item_id`` was decided with this assertion; raises PasskeyError on a replay."""
        from orchestrator.core.fsutil import atomic_write_json, locked

        with locked(self.path.parent / ".passkey.lock"):
            data = self._read()
            if item_id in data["used"]:
                raise PasskeyError(f"a signed decision for {item_id} was already used (replay)")
            cred = verified.approver.credential_id
            stored = data["counts"].get(cred, 0)
            stored = stored if isinstance(stored, int) and not isinstance(stored, bool) else 0
            if (verified.sign_count or stored) and verified.sign_count <= stored:
                raise PasskeyError(f"{verified.approver.name}'s passkey sign count {verified.sign_count} is not "
                                   f"above {stored}: a replayed assertion or a cloned authenticator")
            now = self.clock()
            data["used"] = {k: v for k, v in data["used"].items()
                            if isinstance(v, (int, float)) and v + REPLAY_KEEP_SECONDS > now}
            data["used"][item_id] = float(expires)
            data["counts"][cred] = verified.sign_count
            atomic_write_json(self.path, data)


def load_approvers(orch_dir: str | os.PathLike[str]) -> Approvers:
    """:func:`orchestrator.approvals.approvers.load`, its error turned into a :class:`PasskeyError`."""
    from orchestrator.approvals.approvers import load

    try:
        return load(orch_dir)
    except ApproversError as exc:
        raise PasskeyError(exc.message, hint=exc.hint) from None


__all__ = ["DOMAIN", "MAX_DECISION_BYTES", "PasskeyError", "ReplayGuard", "Settings", "Verified", "approval_fields",
           "canonical", "challenge", "check_assertion", "credential_of", "decision_parts", "input_digest",
           "load_approvers"]
