"""The intent lifecycle in the page: new / edit / done / archive, each change signed by an approver's passkey.

Two POSTs (behind the guard, like a decision): ``/api/intents/challenge`` prepares the change
(:func:`orchestrator.approvals.intentops.prepare`: validated by a dry run of the store, the new id allocated) and
keeps its canonical fields in this process (:class:`HeldOps`), answering the WebAuthn options whose challenge is
their hash and the fields themselves (the page shows what is signed); ``/api/intents/apply`` takes the operation's
nonce and the assertion, and this process — the one that writes ``active_intents.yaml`` — verifies and applies it
(:func:`orchestrator.approvals.intentops.commit`). The page never sends the fields back: what is applied is what
this process prepared, and an operation is taken out of memory on its first use, whatever the outcome.
"""

from __future__ import annotations

import threading
from typing import Any

from orchestrator.approvals.passkey import PasskeyError
from orchestrator.core.errors import OrchestratorError

#: prepared operations kept at once (a page that prepares and never signs cannot grow the console's memory)
MAX_HELD = 64


class HeldOps:
    """The prepared, not yet applied, intent changes of one console (nonce -> canonical fields)."""

    def __init__(self) -> None:
        self._ops: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def hold(self, op: dict[str, Any], now: float) -> None:
        with self._lock:
            self._ops = {k: v for k, v in self._ops.items() if v["expires"] > now}
            while len(self._ops) >= MAX_HELD:
                self._ops.pop(next(iter(self._ops)))
            self._ops[op["nonce"]] = op

    def take(self, nonce: Any) -> dict[str, Any]:
        """The operation prepared with ``nonce``, removed (one use); raises PasskeyError for an unknown one."""
        with self._lock:
            op = self._ops.pop(nonce, None) if isinstance(nonce, str) else None
        if op is None:
            raise PasskeyError("no prepared intent change with this id: it was used already, it expired, or this "
                               "console did not prepare it", hint="make the change again")
        return op


def entries(console: Any) -> dict[str, dict[str, Any]]:
    """The active intents' whole entries (id -> JSON data), for the page's forms; {} when the file is broken (the
    state's ``intents_error`` says why)."""
    from orchestrator.config.intentstore import IntentStore, plain

    try:
        return {str(raw.get("id")): plain(raw) for raw in IntentStore(console.workspace).read().active.intents()}
    except OrchestratorError:
        return {}


def challenge(console: Any, body: dict[str, Any]) -> dict[str, Any]:
    """Prepare the change in ``body`` (``op``, ``intent``, ``fields``) and answer the options to sign it."""
    from orchestrator.approvals import intentops
    from orchestrator.approvals.passkey import challenge as challenge_of
    from orchestrator.config.intentstore import IntentStore

    now = console.clock()
    op = intentops.prepare(IntentStore(console.workspace), body.get("op"), body.get("intent"),  # type: ignore[arg-type]
                           body.get("fields") or {}, now=now)
    options = console.signing_options(challenge_of(op))  # raises when nobody can sign: nothing held then
    console.intent_ops.hold(op, now)
    return {**options, "operation": op}


def apply(console: Any, body: dict[str, Any]) -> dict[str, Any]:
    """Verify the assertion over the held operation named by ``body["operation"]`` and apply it."""
    from orchestrator.approvals import intentops

    op = console.intent_ops.take(body.get("operation"))
    return intentops.commit(console.workspace, op, body.get("assertion"), settings=console.settings(),
                            now=console.clock())


__all__ = ["MAX_HELD", "HeldOps", "apply", "challenge", "entries"]
