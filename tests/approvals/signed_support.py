"""Helpers for the passkey channel's tests: a workspace whose policy says ``channel: passkey``, a REAL hook process
(the installed client, ``python -S orchestrator/hookclient.py claude-code``, a Claude Code PreToolUse event on its
stdin), and signed decisions written the way the console writes them."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from orchestrator.approvals import ApprovalRequest, Broker
from orchestrator.approvals.passkey import approval_fields, challenge
from orchestrator.config.workspace import Workspace
from orchestrator.engine.pipeline import Governor
from tests.approval_support import ROOT, make_workspace, wait_for_requests
from tests.approvals.softkey import SoftKey, approvers_file
from tests.waiting import TIMEOUT, wait_until

CLIENT = ROOT / "orchestrator" / "hookclient.py"


@contextlib.contextmanager
def daemon_for(ws: Workspace) -> Iterator[dict[str, str]]:
    """``orch serve`` for ``ws`` (as the installed hook client starts it); yields the env that makes
    :func:`spawn_hook` ask it instead of answering in process."""
    from orchestrator.daemon import server as daemon

    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "serve", "--root", str(ws.root)],
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    wait_until(lambda: daemon.is_alive(daemon.socket_path(ws.root)) or proc.poll() is not None,
               what="the daemon to answer on its socket (or exit)")
    assert proc.poll() is None, proc.stderr.read() if proc.stderr else "the daemon exited"
    try:
        yield {"ORCH_NO_DAEMON": ""}
    finally:
        daemon.stop(ws.root)
        proc.wait(timeout=TIMEOUT)


def passkey_policy(port: int = 8470, extra: str = "") -> str:
    return ("version: 1\napproval:\n  channel: passkey\n  passkey:\n"
            f"    origins: ['http://localhost:{port}']\n  notify:\n    url: http://localhost:{port}\n" + extra)


def passkey_workspace(tmp: Path, *keys: SoftKey, port: int = 8470, extra: str = "",
                      session: str = "s1") -> Workspace:
    """A governed workspace (intents INT-1..3) with channel passkey, ``keys`` registered, ``session`` on INT-1."""
    ws = make_workspace(tmp)
    ws.policy_file.write_text(passkey_policy(port, extra), encoding="utf-8")
    if keys:
        approvers_file(ws.orch_dir, *keys)
    Governor(ws.root).select_intent("INT-1", session_id=session)
    return ws


def spawn_hook(ws: Workspace, command: str, *, session: str = "s1", timeout: float = 2 * TIMEOUT,
               tool_use_id: str = "toolu_1", env: dict[str, str] | None = None, tool: str = "Bash",
               tool_input: dict[str, Any] | None = None) -> subprocess.Popen[str]:
    """The real hook client answering a Claude Code PreToolUse for ``Bash(command)`` (or ``tool(tool_input)``)
    in-process (no daemon, unless ``env`` comes from :func:`daemon_for`).

    ``timeout``: its approval timeout (longer than any wait of the test deciding)."""
    event = {"session_id": session, "cwd": str(ws.root), "hook_event_name": "PreToolUse", "tool_name": tool,
             "tool_input": tool_input if tool_input is not None else {"command": command, "description": "test"},
             "tool_use_id": tool_use_id, "permission_mode": "default",
             "transcript_path": str(ws.root / "transcript.jsonl")}
    full = {k: v for k, v in os.environ.items() if not k.startswith(("ORCH_", "CLAUDE"))}
    full.update({"ORCH_NO_DAEMON": "1", "CLAUDE_PROJECT_DIR": str(ws.root), "ORCH_APPROVAL_TIMEOUT": str(timeout),
                 "PYTHONPATH": str(ROOT)})
    full.update(env or {})
    proc = subprocess.Popen([sys.executable, "-S", str(CLIENT), "claude-code"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full, cwd=ws.root)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(event))
    proc.stdin.close()
    return proc


def answer_of(proc: subprocess.Popen[str], timeout: float = TIMEOUT) -> dict[str, Any]:
    """The hook's PreToolUse answer (``hookSpecificOutput``; an empty dict for a plain allow)."""
    out = proc.stdout.read() if proc.stdout else ""
    proc.wait(timeout=timeout)
    assert proc.returncode in (0, 2), proc.stderr.read() if proc.stderr else ""
    data = json.loads(out) if out.strip() else {}
    return data.get("hookSpecificOutput", {})


def pending_request(ws: Workspace, n: int = 1) -> ApprovalRequest:
    """The newest of ``n`` pending requests, once they are filed."""
    path = wait_for_requests(ws, n)[-1]
    return Broker(ws.shared_run_dir).load(path.name[: -len(".request.json")])


def sign(key: SoftKey, req: ApprovalRequest, decision: str = "approve", scope: str = "once",
         reason: str | None = None, **kw: Any) -> dict[str, Any]:
    """The assertion the console's page would send for this decision on ``req``."""
    return key.assertion(challenge(approval_fields(req, decision, scope, reason)), **kw)


def decide(ws: Workspace, req: ApprovalRequest, assertion: dict[str, Any], decision: str = "approve",
           scope: str = "once", reason: str | None = None, by: str = "console") -> None:
    """Write the decision file exactly as the console does (:meth:`Broker.decide` with the assertion)."""
    Broker(ws.shared_run_dir).decide(req.id, decision, scope=scope, reason=reason, by=by, assertion=assertion)


def forge(ws: Workspace, req: ApprovalRequest, data: Any, *, raw: bytes | None = None) -> Path:
    """Write a decision file directly (what a forger with write access to the broker dir would do)."""
    path = Broker(ws.shared_run_dir).decision_path(req.id)
    path.write_bytes(raw if raw is not None else json.dumps(data).encode())
    return path


def refused(ws: Workspace, req: ApprovalRequest, n: int = 1) -> list[dict[str, Any]]:
    """Wait until the hook set aside ``n`` refused decisions on ``req``; their records (oldest first)."""
    d = ws.shared_run_dir / "approvals" / "refused"

    def found() -> list[Path]:
        files = sorted(d.glob(f"{req.id}.*.json")) if d.is_dir() else []
        return files if len(files) >= n else []

    return [json.loads(p.read_text()) for p in wait_until(found, what=f"{n} refused decision(s) on {req.id}")]


def still_pending(ws: Workspace, req: ApprovalRequest) -> bool:
    broker = Broker(ws.shared_run_dir)
    return broker.request_path(req.id).exists() and not broker.resolved_path(req.id).exists()
