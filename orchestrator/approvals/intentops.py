"""Intent changes signed by an approver's passkey: new / edit / done / archive from the web console.

A governance change made from a browser is authorised exactly like a decision on a pending call
(:mod:`orchestrator.approvals.passkey`): the person's passkey signs a WebAuthn challenge that is the hash of the
canonical *operation* (:func:`prepare`):

- ``op`` (``new``, ``edit``, ``done``, ``archive``) and ``intent`` (the id; a new intent's id is allocated when the
  operation is prepared and signed with it);
- ``before``: the intent as the person saw it (the whole entry, JSON data; None for a new intent) and ``after``:
  the whole entry as it will be written (None for an archive) — the timestamps the store adds when it writes
  (``created_at``, ``updated_at``, ``archived_at``) are the only fields not covered;
- ``worktree``, a random ``nonce``, ``created`` and ``expires``.

The operation is prepared by the same code that writes it (:class:`~orchestrator.config.intentstore.IntentStore`
with ``write=False``: the change is made and both files validated as ``orch validate`` validates them, so a
malformed change is refused before anybody signs it) and kept by the console process, in memory; the page only
carries the assertion back. :func:`commit` — run by the process that writes ``active_intents.yaml``, never by the
page — checks the assertion against the committed approvers file, consumes the nonce in the replay guard (an
operation is applied once), and makes the change under the intents lock only if the intent is still exactly
``before`` (``expect=``): a signature never applies to an intent that changed since. Every applied change is
recorded in the approvals ``audit.jsonl`` (``intent-changed``: who, which credential, the signed fields and the
assertion, so it can be checked again later).
"""

from __future__ import annotations

import os
from typing import Any

from orchestrator.approvals.passkey import (
    PasskeyError,
    ReplayGuard,
    Settings,
    challenge,
    check_assertion,
    credential_of,
    load_approvers,
)
from orchestrator.core.errors import UsageError

OPS = ("new", "edit", "done", "archive")
#: how long a prepared operation may be signed and sent back
OP_SECONDS = 300.0
#: written by the store when it writes: not part of what is signed
STAMPS = ("created_at", "updated_at", "archived_at")
ITEM = "intent-change"


def _unstamped(entry: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if entry is None else {k: v for k, v in entry.items() if k not in STAMPS}


def _changes(fields: Any) -> dict[str, Any]:
    """The person's fields for a new or edited intent: only the editable keys, lists as lists of text."""
    from orchestrator.config.intentstore import EDITABLE

    if not isinstance(fields, dict):
        raise UsageError("the intent's fields must be an object")
    unknown = sorted(set(fields) - set(EDITABLE))
    if unknown:
        raise UsageError(f"cannot set {', '.join(unknown)[:200]}", hint=f"editable: {', '.join(EDITABLE)}")
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if isinstance(value, list):
            value = [v.strip() for v in value if isinstance(v, str) and v.strip()] \
                if all(isinstance(v, str) for v in value) else value
        elif isinstance(value, str):
            value = value.strip()
        out[key] = None if value in ("", []) and key not in ("name", "owned_scope", "status") else value
    return out


def prepare(store: Any, op: str, intent_id: str | None, fields: Any, *, now: float,
            ttl: float = OP_SECONDS) -> dict[str, Any]:
    """The canonical fields of an intent change (what the passkey signs), checked by a dry run of the store.

    Raises :class:`~orchestrator.core.errors.OrchestratorError` (``UsageError``, ``ConfigError``: which field,
    which file and line) for a change the store would refuse."""
    from orchestrator.config.intentstore import plain

    if op not in OPS:
        raise UsageError(f"op must be one of {', '.join(OPS)}")
    before = None
    if op != "new":
        if not isinstance(intent_id, str) or not intent_id:
            raise UsageError(f"{op} needs the intent's id")
        before = _current(store, intent_id)
    if op == "new":
        changes = {k: v for k, v in _changes(fields).items() if v is not None}
        if not changes.get("owned_scope"):
            raise UsageError("a new intent needs at least one owned_scope glob", hint="e.g. src/auth/**")
        after: dict[str, Any] | None = plain(store.create(changes, write=False))
        intent_id = str(after["id"]) if after else None
    elif op == "edit":
        changes = _changes(fields)
        if not changes:
            raise UsageError("nothing to change")
        after = plain(store.edit(str(intent_id), changes, expect=before, write=False))
        if _unstamped(after) == _unstamped(before):
            raise UsageError("nothing to change", hint="the fields are as they are in the file")
    elif op == "done":
        status = (fields or {}).get("status", "COMPLETED") if isinstance(fields, dict) else "COMPLETED"
        after = plain(store.finish(str(intent_id), str(status), expect=before, write=False))
    else:
        store.archive([str(intent_id)], expect={str(intent_id): before}, write=False)
        after = None
    return {"v": 1, "item": ITEM, "op": op, "intent": intent_id, "before": before, "after": _unstamped(after),
            "worktree": str(store.ws.root), "nonce": os.urandom(16).hex(), "created": now, "expires": now + ttl}


def _current(store: Any, intent_id: str) -> dict[str, Any]:
    from orchestrator.config.intentstore import plain

    for raw in store.read().active.intents():
        if str(raw.get("id")) == intent_id:
            return plain(raw)
    raise UsageError(f"no active intent {intent_id!r}", hint="archived intents cannot be changed")


def apply(store: Any, op: dict[str, Any]) -> dict[str, Any]:
    """Make the (verified) change ``op`` under the intents lock; the intent as written (``{}`` for an archive)."""
    kind, intent_id, before, after = op["op"], str(op["intent"]), op["before"], op["after"]
    if kind == "new":
        fields = {k: v for k, v in (after or {}).items() if k != "id"}
        return dict(store.create(fields, intent_id=intent_id))
    if kind == "archive":
        store.archive([intent_id], expect={intent_id: before})
        return {}
    keys = (set(before) | set(after or {})) - set(STAMPS) - {"id"}
    changes = {k: (after or {}).get(k) for k in sorted(keys) if (after or {}).get(k) != before.get(k)}
    return dict(store.edit(intent_id, changes, expect=before))


def commit(ws: Any, op: dict[str, Any], assertion: Any, *, settings: Settings, now: float,
           audit: Any = None) -> dict[str, Any]:
    """Verify the approver's assertion over ``op`` (the fields :func:`prepare` made, held by this process), then
    apply it once. Raises :class:`PasskeyError` (unsigned, another operation's assertion, an unregistered
    credential, a replay, expired) or the store's error (the intent changed since, the file is broken)."""
    from orchestrator.approvals.broker import Broker
    from orchestrator.config.intentstore import IntentStore

    if op.get("item") != ITEM or op.get("op") not in OPS:
        raise PasskeyError("not an intent change")
    if now >= float(op["expires"]):
        raise PasskeyError("the signed change expired before it arrived; nothing was written",
                           hint="make the change again")
    cred = credential_of(assertion)
    broker = Broker(ws.shared_run_dir)
    guard = ReplayGuard(broker.dir)
    verified = check_assertion(assertion, challenge(op), load_approvers(ws.orch_dir), settings,
                               sign_count=guard.count(cred))
    guard.consume(f"intent-change:{op['nonce']}", verified, expires=float(op["expires"]))
    written = apply(IntentStore(ws), op)
    (audit or broker.audit)("intent-changed", op=op["op"], intent=op["intent"], by=verified.approver.name,
                            via="passkey", credential=cred, evidence={"fields": op, "assertion": assertion})
    return {"ok": True, "op": op["op"], "intent": op["intent"], "by": verified.approver.name, "entry": written}


__all__ = ["ITEM", "OPS", "OP_SECONDS", "STAMPS", "apply", "commit", "prepare"]
