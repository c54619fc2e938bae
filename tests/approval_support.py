"""Shared helpers for the approval tests: a real workspace in a tmp dir and a real waiting process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from orchestrator.workspace import Workspace, init

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
from orchestrator.pipeline import Governor
from orchestrator.tools import to_call
root, session, intent, command = sys.argv[1:5]
gov = Governor(root, approval_channel="tui")
if intent:
    gov.select_intent(intent, session_id=session)
call = to_call("Bash", {"command": command}, session_id=session, agent="claude-code", cwd=root)
print(json.dumps(gov.pre(call).to_dict()), flush=True)
"""


def spawn_waiter(ws: Workspace, session: str, command: str, *, intent: str = "INT-1",
                 timeout: float = 20.0) -> subprocess.Popen[str]:
    """A real hook-like process running Governor.pre with channel tui; prints the verdict JSON."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ORCH_APPROVAL_TIMEOUT": str(timeout)}
    env.pop("ORCH_APPROVAL_CHANNEL", None)
    return subprocess.Popen([sys.executable, "-c", WAITER, str(ws.root), session, intent, command],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def wait_for_requests(ws: Workspace, n: int, *, timeout: float = 15.0) -> list[Path]:
    """Poll until ``n`` request files exist (the waiters have submitted)."""
    d = ws.run_dir / "approvals"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = sorted(d.glob("*.request.json")) if d.is_dir() else []
        if len(found) >= n:
            return found
        time.sleep(0.02)
    raise AssertionError(f"expected {n} request(s) in {d}")


def verdict_of(proc: subprocess.Popen[str], timeout: float = 20.0) -> dict:
    out, errs = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, errs
    return json.loads(out.strip().splitlines()[-1])
