"""What the approval console shows, read from disk without Textual (run in worker threads).

The ledger is read by tailing ``agent_trace.jsonl`` as JSON lines — only the Agent Trace record
format is relied on (``timestamp``, ``files[].path``, ``metadata["dev.orchestrator"]``), not the
ledger module's API, so the console works with any writer of that format.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

from orchestrator.ledger.read import tail_lines
from orchestrator.config.workspace import Workspace

META_KEY = "dev.orchestrator"


@dataclass(frozen=True)
class LedgerRow:
    time: str
    intent: str
    tool: str
    mutation: str
    files: str
    session: str = ""
    #: who approved the call (a passkey approver's name, tui, cli), "" when no person was asked
    approver: str = ""


@dataclass(frozen=True)
class IntentRow:
    id: str
    status: str
    name: str
    scope: str


@dataclass(frozen=True)
class SessionRow:
    id: str
    intent: str
    agent: str
    seen: str
    worktree: str = "-"


@dataclass
class Snapshot:
    """Everything one refresh of the console needs."""

    pending: list[Any] = field(default_factory=list)  # ApprovalRequest | BrokenRequest
    ledger: list[LedgerRow] = field(default_factory=list)
    intents: list[IntentRow] = field(default_factory=list)
    intents_error: str | None = None
    sessions: list[SessionRow] = field(default_factory=list)
    forbid_remember: frozenset[str] | None = None  # None: policy unreadable, remember nothing
    grant_ttl: float = 3600.0
    policy_error: str | None = None


def _hhmmss(ts: Any) -> str:
    if isinstance(ts, str) and "T" in ts:
        return ts.split("T", 1)[1][:8]
    if isinstance(ts, (int, float)):
        return time.strftime("%H:%M:%S", time.gmtime(ts))
    return "?"


def ledger_row(line: bytes) -> LedgerRow:
    """One ledger line as a table row; a line that is not a record becomes a visible error row."""
    try:
        rec = json.loads(line)
        if not isinstance(rec, dict):
            raise ValueError("not an object")
    except ValueError:
        return LedgerRow("?", "-", "(unparseable line)", "-", line[:40].decode("utf-8", "replace"))
    meta = m if isinstance(m := rec.get("metadata"), dict) else {}
    ours = o if isinstance(o := meta.get(META_KEY), dict) else {}
    files = f if isinstance(f := rec.get("files"), list) else []
    paths = [str(f.get("path")) for f in files if isinstance(f, dict) and f.get("path")]
    # the record's own `tool` names the tracer (orchestrator); the agent's tool is in our metadata
    tool = ours.get("tool_name")
    approval = a if isinstance(a := ours.get("approval"), dict) else {}
    return LedgerRow(_hhmmss(rec.get("timestamp")), str(ours.get("intent_id") or "-"), str(tool or "-"),
                     str(ours.get("mutation_class") or "-"), ", ".join(paths) or "-",
                     str(ours.get("session_id") or ""), str(approval.get("by") or ""))


def load_ledger(ws: Workspace, n: int) -> list[LedgerRow]:
    """The last ``n`` ledger records, newest first."""
    return [ledger_row(ln) for ln in reversed(tail_lines(ws.ledger_file, n))]


def load_intents(ws: Workspace) -> tuple[list[IntentRow], str | None]:
    """Intents with status and scope; a broken file gives ([], the error message)."""
    from orchestrator.config import intents as _intents
    from orchestrator.core.errors import OrchestratorError

    try:
        loaded = _intents.load(ws.intents_file)
    except OrchestratorError as exc:
        return [], str(exc)
    return [IntentRow(i.id, i.status, i.name, ", ".join(i.owned_scope)) for i in loaded], None


def ago(seconds: float) -> str:
    """``12s`` / ``5m`` / ``3h`` / ``2d`` ago, for the sessions table."""
    s = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= size:
            return f"{s // size}{unit}"
    return f"{s}s"


def load_sessions(ws: Workspace, now: float, limit: int = 20) -> list[SessionRow]:
    """The sessions of every governed worktree of the repository (see :func:`orchestrator.vcs.worktrees.sessions`)."""
    from orchestrator.vcs.worktrees import sessions

    rows = []
    for path, wt, sid, state in sessions(ws.root)[:limit]:
        seen = state.get("last_seen")
        where = wt.label() if wt is not None else os.path.basename(path)
        rows.append(SessionRow(sid, str(state.get("intent_id") or "-"), str(state.get("agent") or "-"),
                               ago(now - seen) if isinstance(seen, (int, float)) else "-", where))
    return rows


def load_snapshot(ws: Workspace, *, now: float, ledger_lines: int, broker: Any) -> Snapshot:
    """Read everything; never raises for bad files (they become visible errors)."""
    from orchestrator.config import policy as _policy
    from orchestrator.core.errors import OrchestratorError

    snap = Snapshot()
    try:
        pol = _policy.load(ws.policy_file).approval
        snap.forbid_remember = frozenset(pol.forbid_remember)
        snap.grant_ttl = float(pol.grant_ttl_seconds)
    except OrchestratorError as exc:
        snap.policy_error = str(exc)
    broker.sweep()
    snap.pending = broker.pending()
    snap.ledger = load_ledger(ws, ledger_lines)
    snap.intents, snap.intents_error = load_intents(ws)
    snap.sessions = load_sessions(ws, now)
    return snap
