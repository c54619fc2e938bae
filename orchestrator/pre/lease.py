"""Lease: take a write lease on every target before the stale check runs (see :mod:`orchestrator.state.leases`).

Placed right before ``stale``: the stale check then runs while no other session can start a write to the file, so
a write that lands after this session's check cannot exist. A target another session holds is refused with
``file-busy``, naming the holder and when to retry. The Governor releases the leases when a later hook refuses the
call, the post-hook when the tool ran (or failed).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from orchestrator.state import leases
from orchestrator.core.models import Kind, Verdict

if TYPE_CHECKING:
    from orchestrator.pre.context import Context

NAME = "lease"


def check(ctx: Context) -> Verdict | None:
    call = ctx.call
    rels = [r for r in call.resolved if r != "."]
    if not rels:
        return None
    holder = {"session": call.session_id, "intent": ctx.intent.id if ctx.intent is not None else call.intent_id,
              "agent": call.agent, "call": call.tool_use_id or call.capture_key, "tool": call.tool}
    ttl = leases.EXEC_TTL if call.kind in (Kind.EXEC, Kind.UNKNOWN) else leases.FILE_TTL
    busy = leases.acquire(ctx.workspace.leases_dir, ctx.root, rels, holder, ttl)
    if busy is None:
        call.leased = rels
        return None
    now = time.time()
    since = _number(busy.get("since"), now)
    expires = _number(busy.get("expires"), now)
    held_for = max(0.0, now - since)
    return Verdict.deny(
        "file-busy", NAME,
        f"{busy['path']} is being changed by another session ({busy.get('session')}, intent {busy.get('intent')}, "
        f"{busy.get('tool')}) since {held_for:.1f} s ago",
        path=busy["path"],
        holder={"session": busy.get("session"), "intent": busy.get("intent"), "agent": busy.get("agent"),
                "tool": busy.get("tool"),
                "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(since))},
        retry_after_seconds=2, expires_in_seconds=round(max(0.0, expires - now), 1),
        hint="another session is writing this file right now; wait a few seconds, then re-read the file (its "
             "content will have changed) and redo your change on the current content. Do not retry blindly: once "
             "the other write lands, a write based on your earlier read is refused as stale",
    )


def _number(value: object, default: float) -> float:
    return float(value) if isinstance(value, (int, float)) else default
