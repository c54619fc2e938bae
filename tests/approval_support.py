"""Shared helpers for the approval tests: a real workspace in a tmp dir and a real waiting process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from orchestrator.config.workspace import Workspace, init
from tests.waiting import TIMEOUT, wait_until

INTENTS = """\
active_intents:
  - id: "INT-1"
    name: "Clean the build"
    status: "IN_PROGRESS"
    owned_scope: ["build", "build/**", "src/**"]
  - id: "INT-2"
    name: "Docs"
    status: "IN_PROGRESS"
    owned_scope: ["docs/**"]
  - id: "INT-3"
    name: "Later"
    status: "PENDING"
    owned_scope: ["later/**"]
"""

ROOT = Path(__file__).resolve().parents[1]


def make_workspace(tmp: Path, *, policy_extra: str = "") -> Workspace:
    """A governed workspace with three intents; ``policy_extra`` is appended to policy.yaml."""
    init(tmp)
    ws = Workspace.at(tmp)
    ws.intents_file.write_text(INTENTS, encoding="utf-8")
    if policy_extra:
        ws.policy_file.write_text(
            "version: 1\napproval:\n  channel: tui\n" + policy_extra, encoding="utf-8")
    (tmp / "build").mkdir(exist_ok=True)
    (tmp / "build" / "out.o").write_text("x", encoding="utf-8")
    return ws


WAITER = r"""
import json, sys
from orchestrator.engine.pipeline import Governor
from orchestrator.engine.tools import to_call
root, session, intent, command = sys.argv[1:5]
gov = Governor(root, approval_channel="tui")
if intent:
    gov.select_intent(intent, session_id=session)
call = to_call("Bash", {"command": command}, session_id=session, agent="claude-code", cwd=root)
print(json.dumps(gov.pre(call).to_dict()), flush=True)
"""


def spawn_waiter(ws: Workspace, session: str, command: str, *, intent: str = "INT-1",
                 timeout: float = 2 * TIMEOUT) -> subprocess.Popen[str]:
    """A real hook-like process running Governor.pre with channel tui; prints the verdict JSON.

    ``timeout`` is its approval timeout: longer than any wait of the test deciding, so a slow machine never turns
    the person's decision into a timeout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ORCH_APPROVAL_TIMEOUT": str(timeout)}
    env.pop("ORCH_APPROVAL_CHANNEL", None)
    return subprocess.Popen([sys.executable, "-c", WAITER, str(ws.root), session, intent, command],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def wait_for_requests(ws: Workspace, n: int, *, timeout: float = TIMEOUT) -> list[Path]:
    """Wait until ``n`` request files exist (the waiters have submitted); returns them, oldest name first."""
    d = ws.approvals_dir  # shared by every worktree of a git repository; run/approvals otherwise

    def found() -> list[Path]:
        files = sorted(d.glob("*.request.json")) if d.is_dir() else []
        return files if len(files) >= n else []

    return wait_until(found, what=f"{n} approval request(s) in {d}", timeout=timeout)


def verdict_of(proc: subprocess.Popen[str], timeout: float = TIMEOUT) -> dict:
    """The verdict a :func:`spawn_waiter` process printed (it exits once decided)."""
    out, errs = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, errs
    return json.loads(out.strip().splitlines()[-1])


# ---------------------------------------------------------------------------- a fixed scene for the TUI
NOW = 1_763_800_000.0  # 2025-11-22T08:26:40Z: every time the console shows derives from this


def ledger_record(n: int, path: str, tool: str, intent: str, mclass: str, session: str) -> dict:
    """A minimal Agent Trace record with orchestrator metadata (the only format the TUI relies on)."""
    return {
        "version": "0.1.0", "id": f"00000000-0000-4000-8000-{n:012d}",
        "timestamp": f"2025-11-22T08:2{n}:00Z", "vcs": {"type": "git", "revision": "0" * 40},
        "tool": {"name": "orchestrator", "version": "0.1.0"},
        "files": [{"path": path, "conversations": [{"contributor": {"type": "ai"}, "ranges": [
            {"start_line": 1, "end_line": 3, "content_hash": "sha256:" + "ab" * 32}]}]}],
        "metadata": {"dev.orchestrator": {"intent_id": intent, "tool_name": tool, "session_id": session,
                                          "mutation_class": mclass}},
    }


def scene(ws: Workspace, *, request: bool = True) -> str | None:
    """Fill ``ws`` with a pending request, ledger records and sessions, all at fixed times and ids."""
    from orchestrator.approvals import ApprovalRequest, Broker

    recs = [ledger_record(1, "src/app.py", "Edit", "INT-1", "AST_REFACTOR", "sess-a"),
            ledger_record(2, "docs/guide.md", "Write", "INT-2", "INTENT_EVOLUTION", "sess-b"),
            ledger_record(3, "src/util.py", "Write", "INT-1", "INTENT_EVOLUTION", "sess-a")]
    ws.ledger_file.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    sessions = ws.run_dir / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    for sid, intent, agent, ago_s in (("sess-a", "INT-1", "claude-code", 12), ("sess-b", "INT-2", "codex", 300)):
        (sessions / f"{sid}.json").write_text(json.dumps(
            {"intent_id": intent, "agent": agent, "last_seen": NOW - ago_s, "reads": {}}), encoding="utf-8")
    if not request:
        return None
    req = ApprovalRequest(
        id="19aa2b3c4d5-0f1e2d", session_id="sess-a", tool="Bash",
        summary="rm -rf build", reasons=["recursive delete"], risk="recursive-delete",
        created=NOW - 30, expires=NOW + 270, agent="claude-code", agent_id="subagent-2", intent_id="INT-1",
        kind="exec", command="rm -rf build", paths=["build"], signature="cmd:rm -rf build")
    Broker(ws.run_dir, clock=lambda: NOW).submit(req)
    return req.id


# ---------------------------------------------------------------------------- a repository with a linked worktree
def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}).stdout


def make_worktrees(tmp: Path, *, policy_extra: str = "") -> tuple[Workspace, Workspace]:
    """A governed repository ``main`` (branch main) and a linked worktree ``linked`` (branch feature), made with
    the real ``git worktree add``; the governance files are committed, so the linked one has its own checkout."""
    main = tmp / "main"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    ws = make_workspace(main, policy_extra=policy_extra)
    git(main, "add", "-A")
    git(main, "commit", "-q", "-m", "governed")
    git(main, "worktree", "add", "-q", str(tmp / "linked"), "-b", "feature")
    return ws, Workspace.at(tmp / "linked")
