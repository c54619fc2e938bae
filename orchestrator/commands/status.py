"""``orch status [--json] [--all]``: who is working where, and who serves them.

One screen for a reviewer of parallel agents: the hook daemon of every governed worktree of the repository (running?
pid, version, uptime, running the installed code?), the sessions of every worktree (agent, worktree and branch,
selected intent, last call, pending approvals) and the approval requests waiting for a person. Sessions not seen for
an hour are left out unless ``--all``.

Also the daemon check of ``orch doctor`` (:func:`check_daemon`).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.core.output import json_out, out
from orchestrator.config.workspace import Workspace

if TYPE_CHECKING:
    from orchestrator.core.findings import Finding

#: a session seen within this many seconds counts as active
ACTIVE_SECONDS = 3600.0


def register(parser: argparse.ArgumentParser) -> None:
    add_workspace_arg(parser)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--all", action="store_true", help="also sessions not seen for an hour")


def daemon_state(root: str) -> dict[str, Any]:
    """The daemon of workspace ``root``: ``running`` and, when one wrote its info file, pid, version, uptime and
    whether it runs the code installed here (``current``)."""
    from orchestrator.daemon import server as daemon

    data = daemon.info(root)
    if data is None or not data.get("alive"):
        return {"running": daemon.is_alive(daemon.socket_path(root))}
    started = data.get("started")
    return {"running": True, "pid": data.get("pid"), "version": data.get("version"), "package": data.get("package"),
            "uptime": round(time.time() - started, 1) if isinstance(started, (int, float)) else None,
            "current": data.get("package") == daemon.package_dir() and data.get("code") == daemon.code_digest()}


def telemetry_state(root: str) -> dict[str, Any]:
    """The telemetry spool of workspace ``root``: on or off, bytes waiting, events the bound dropped."""
    from pathlib import Path

    from orchestrator.telemetry.checks import summary

    s = summary(Workspace(Path(root)))
    return {"enabled": s["enabled"], "pending_bytes": s["pending_bytes"], "dropped": s["dropped"]}


def collect(ws: Workspace, *, now: float, include_idle: bool = False) -> dict[str, Any]:
    """Everything ``orch status`` shows, as plain data."""
    from orchestrator.approvals import ApprovalRequest, Broker
    from orchestrator.vcs.worktrees import governed, sessions

    broker = Broker(ws.shared_run_dir)
    pending = [r for r in broker.pending() if isinstance(r, ApprovalRequest)]
    waiting: dict[tuple[str | None, str], int] = {}
    for req in pending:
        key = (req.worktree, req.session_id)
        waiting[key] = waiting.get(key, 0) + 1
    trees = []
    for path, wt in governed(ws.root):
        trees.append({"path": path, "branch": wt.branch if wt else None, "main": wt.main if wt else None,
                      "daemon": daemon_state(path), "telemetry": telemetry_state(path)})
    rows = []
    for path, wt, sid, state in sessions(ws.root):
        seen = state.get("last_seen")
        ago = now - seen if isinstance(seen, (int, float)) else None
        n_pending = waiting.get((path, sid), 0)
        if not include_idle and not n_pending and (ago is None or ago > ACTIVE_SECONDS):
            continue
        rows.append({"session": sid, "agent": state.get("agent"), "worktree": path,
                     "branch": wt.branch if wt else None, "intent": state.get("intent_id"),
                     "last_call_ago": round(ago, 1) if ago is not None else None, "pending_approvals": n_pending})
    from orchestrator.state import leases

    held = [{"path": lease.get("path"), "worktree": lease.get("root"), "session": lease.get("session"),
             "intent": lease.get("intent"), "tool": lease.get("tool"),
             "held_for": round(now - lease["since"], 1) if isinstance(lease.get("since"), (int, float)) else None,
             "expires_in": round(lease["expires"] - now, 1)} for lease in leases.held(ws.leases_dir)]
    return {"worktrees": trees, "sessions": rows,
            "pending": [{"id": r.id, "worktree": r.worktree, "branch": r.branch, "session": r.session_id,
                         "risk": r.risk, "summary": r.summary, "expires_in": round(r.expires - now, 1)}
                        for r in pending],
            "leases": held}


def _ago(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    s = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= size:
            return f"{s // size}{unit}"
    return f"{s}s"


def _name(path: str | None, branch: str | None) -> str:
    import os

    if not path:
        return "-"
    base = os.path.basename(path.rstrip("/")) or path
    return f"{base} ({branch})" if branch else base


def run(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    data = collect(ws, now=time.time(), include_idle=args.all)
    if args.json:
        json_out(data)
        return 0
    out("worktrees:")
    for tree in data["worktrees"]:
        d = tree["daemon"]
        if not d["running"]:
            state = "daemon not running (the hooks start one on demand)"
        elif "pid" not in d:
            state = "daemon running (no info file)"
        else:
            state = (f"daemon pid {d['pid']}, orch {d['version']}, up {_ago(d['uptime'])}, "
                     + ("installed code" if d["current"] else "NOT the installed code (`orch serve --stop`)"))
        t = tree["telemetry"]
        if t["enabled"] or t["dropped"]:
            state += (f"; telemetry {'on' if t['enabled'] else 'off'}, {t['pending_bytes']} byte(s) waiting, "
                      f"{t['dropped']} event(s) dropped")
        out(f"  {_name(tree['path'], tree['branch'])}  {tree['path']}  {state}")
    sessions = data["sessions"]
    out(f"sessions ({len(sessions)}{'' if args.all else ' active in the last hour'}):")
    for s in sessions:
        out(f"  {s['session']}  agent={s['agent'] or '-'}  worktree={_name(s['worktree'], s['branch'])}  "
            f"intent={s['intent'] or '-'}  last call {_ago(s['last_call_ago'])} ago"
            + (f"  pending approvals={s['pending_approvals']}" if s["pending_approvals"] else ""))
    pending = data["pending"]
    out(f"pending approvals ({len(pending)}):" + ("" if pending else " none"))
    for p in pending:
        out(f"  {p['id']}  {p['risk']}  worktree={_name(p['worktree'], p['branch'])}  session={p['session']}  "
            f"{p['summary']}")
    held = data["leases"]
    out(f"write leases ({len(held)}):" + ("" if held else " none"))
    for lease in held:
        out(f"  {lease['path']}  worktree={_name(lease['worktree'], None)}  session={lease['session']}  "
            f"intent={lease['intent'] or '-'}  {lease['tool'] or ''} for {_ago(lease['held_for'])}, "
            f"expires in {_ago(lease['expires_in'])}")
    return 0


def check_daemon(ws: Workspace) -> Iterable[Finding]:
    """``orch doctor``: the workspace's hook daemon, if one runs, runs the orchestrator installed here."""
    from orchestrator.core.findings import Finding

    d = daemon_state(str(ws.root))
    if not d["running"]:
        yield Finding("daemon", "info", "no hook daemon running; the hooks start one on demand")
    elif "pid" not in d:
        yield Finding("daemon", "warn", "a daemon answers on the socket but wrote no info file (an older version?)",
                      "orch serve --stop   (the next hook call starts the installed one)")
    elif not d["current"]:
        yield Finding("daemon", "warn",
                      f"the daemon (pid {d['pid']}) runs orchestrator from {d['package']}, not the code installed here",
                      "orch serve --stop   (the next hook call starts the installed one)")
    else:
        yield Finding("daemon", "ok", f"pid {d['pid']}, orch {d['version']}, up {_ago(d['uptime'])}, installed code")
