"""The telemetry event format (version 1): one flat JSON object per governance decision or ledger record.

Standard library only: built on the hook path, right after the pipeline decided (docs/telemetry.md, "Event format").

Every event has ``v`` (format version, 1), ``id`` (a uuid4 hex for a decision; the ledger record's own id for a
record, so a backfill from the ledger and the live event carry the same id), ``ts`` (Unix time in seconds, float)
and ``event`` (``"decision"`` or ``"record"``). The other keys:

decision
    ``decision`` (allow / deny / ask), ``type`` (the error type of a refusal), ``hook`` (the hook that refused),
    ``intent``, ``session``, ``agent``, ``agent_id``, ``tool``, ``tool_use_id`` (the agent's id of the call, to join
    with the agent's own telemetry), ``kind`` (read / write / edit / delete / exec /
    meta / unknown), ``governed`` (whether the pre-hooks ran: a read passes without them), ``sandboxed``,
    ``latency_ms`` (the whole pre-hook evaluation), ``approval`` (approved / rejected / timeout / denied / asked,
    when the approval hook decided) and ``approval_wait_ms``, ``paths`` (the call's targets, workspace-relative,
    at most :data:`MAX_PATHS`), ``command`` only with ``telemetry.include_commands``.
record
    ``record_id``, ``hash`` (the record's chain hash), ``intent``, ``session``, ``agent``, ``agent_id``, ``tool``,
    ``tool_use_id``,
    ``mutation_class``, ``files`` (paths, at most :data:`MAX_PATHS`), ``file_count``, ``lines_added``,
    ``lines_removed``, ``revision`` (the git revision the record names).

Keys whose value is None are left out. Never file contents; command text only when the policy says so.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

#: the event format version (``v``)
FORMAT = 1
#: paths listed in one event (``file_count`` always says how many there were)
MAX_PATHS = 50
#: command text kept with ``include_commands`` (longer commands are cut, with an ellipsis)
MAX_COMMAND = 2000
#: the decision of an approval hook's verdict, by the error type it refused with
_APPROVAL_OUTCOMES = {"approval-rejected": "rejected", "approval-timeout": "timeout", "approval-denied": "denied",
                      "approval-required": "asked"}


def decision(call: Any, verdict: Any, latency_s: float, *, governed: bool = True,
             approval: tuple[str, float] | None = None, include_commands: bool = False) -> dict[str, Any]:
    """The event of one pre-hook decision: ``call`` (a :class:`~orchestrator.core.models.ToolCall`), its ``verdict``,
    the evaluation time in seconds; ``approval`` = (outcome, seconds waited) when the approval hook decided."""
    error = verdict.error or {}
    ev: dict[str, Any] = {
        "v": FORMAT, "id": os.urandom(16).hex(), "ts": time.time(), "event": "decision",
        "decision": verdict.decision, "type": error.get("type"), "hook": error.get("hook"),
        "intent": error.get("intent") or call.intent_id, "session": call.session_id, "agent": call.agent,
        "agent_id": call.agent_id, "tool": call.tool, "tool_use_id": call.tool_use_id,
        "kind": getattr(call.kind, "value", call.kind),
        "governed": governed, "sandboxed": bool(call.sandboxed), "latency_ms": round(latency_s * 1000.0, 3),
    }
    if approval is None and error.get("type") in _APPROVAL_OUTCOMES:
        approval = (_APPROVAL_OUTCOMES[error["type"]], 0.0)
    if approval is not None:
        ev["approval"] = approval[0]
        ev["approval_wait_ms"] = round(approval[1] * 1000.0, 3)
    paths = call.resolved or call.paths
    if paths:
        ev["paths"] = [str(p) for p in paths[:MAX_PATHS]]
    if include_commands and call.command:
        ev["command"] = call.command if len(call.command) <= MAX_COMMAND else call.command[:MAX_COMMAND - 1] + "…"
    return {k: v for k, v in ev.items() if v is not None}


def approval_outcome(verdict: Any) -> str:
    """How the approval hook decided, from its verdict: ``approved`` when it let the call through."""
    if verdict.allowed:
        return "approved"
    return _APPROVAL_OUTCOMES.get((verdict.error or {}).get("type", ""), "denied")


def record(rec: dict[str, Any]) -> dict[str, Any]:
    """The event of one ledger record (a parsed Agent Trace record, as appended or read back)."""
    meta = (rec.get("metadata") or {}).get("dev.orchestrator") or {}
    files = meta.get("files") or [{"path": f.get("path")} for f in rec.get("files") or ()]
    paths = [str(f.get("path")) for f in files if f.get("path")]
    ev: dict[str, Any] = {
        "v": FORMAT, "id": rec.get("id"), "ts": _epoch(rec.get("timestamp")), "event": "record",
        "record_id": rec.get("id"), "hash": (meta.get("chain") or {}).get("hash"), "intent": meta.get("intent_id"),
        "session": meta.get("session_id"), "agent": meta.get("agent"), "agent_id": meta.get("agent_id"),
        "tool": meta.get("tool_name"), "tool_use_id": meta.get("tool_use_id"), "mutation_class": meta.get("mutation_class"),
        "files": paths[:MAX_PATHS], "file_count": len(paths),
        "lines_added": sum(int(f.get("added") or 0) for f in files),
        "lines_removed": sum(int(f.get("removed") or 0) for f in files),
        "revision": (rec.get("vcs") or {}).get("revision"),
    }
    return {k: v for k, v in ev.items() if v is not None}


def encode(event: dict[str, Any]) -> bytes:
    """One spool line: compact JSON and a newline."""
    return (json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def _epoch(stamp: Any) -> float:
    """An RFC 3339 UTC timestamp of the ledger (``2026-11-22T03:30:26.522281Z``) as Unix seconds; now if unreadable."""
    if isinstance(stamp, str):
        from datetime import datetime

        try:
            return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return time.time()
