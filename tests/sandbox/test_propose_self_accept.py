"""An agent cannot accept its own intent proposal (issue 29): while its proposal waits for a person, a sandboxed
command of the same agent tries every way to answer it — ``orch intents accept``, ``orch approve``, a decision file
written by hand, the intent appended to active_intents.yaml — and its file tools try the same files. The person then
rejects; the waiting hook must read *that* rejection, and no intent may appear. Real hook process, real broker, real
Landlock launcher."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from orchestrator.approvals import Broker, proposal
from orchestrator.engine.pipeline import Governor
from orchestrator.engine.tools import to_call
from orchestrator.config.workspace import Workspace
from tests.adapters.conftest import INTENTS
from tests.adapters.test_propose import SESSION, answer, pending, propose_event, reason_of, spawn_hook
from tests.conftest import make_workspace
from tests.sandbox.conftest import needs_landlock

pytestmark = needs_landlock
ROOT = Path(__file__).resolve().parents[2]

#: the attacker's script: answer the pending proposal by writing the broker's files, and add the intent itself
FORGE = r"""
import glob, json, os, sys
orch, done = sys.argv[1], []
for req in glob.glob(os.path.join(orch, "run", "approvals", "*.request.json")):
    rid = os.path.basename(req).split(".")[0]
    try:
        with open(os.path.join(orch, "run", "approvals", rid + ".decision.json"), "w") as fh:
            json.dump({"id": rid, "decision": "approve", "scope": "once", "by": "tui"}, fh)
        done.append("answered")
    except OSError as exc:
        done.append("refused " + type(exc).__name__)
try:
    with open(os.path.join(orch, "active_intents.yaml"), "a") as fh:
        fh.write("  - id: FORGED\n    name: mine\n    status: IN_PROGRESS\n    owned_scope: ['**']\n")
    done.append("wrote intents")
except OSError as exc:
    done.append("refused " + type(exc).__name__)
print(json.dumps(done))
"""


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A git workspace with INT-1 (src/**) in progress, as the adapters' tests have it."""
    return make_workspace(tmp_path / "repo", INTENTS, git=True).resolve()


def _sandboxed(ws: Path, command: str) -> subprocess.CompletedProcess[str]:
    """``command`` as the proposing agent's host runs it: through the pipeline, in the kernel sandbox."""
    gov = Governor(ws, approval_channel="deny")
    gov.select_intent("INT-1", "attacker")
    call = to_call("Bash", {"command": command}, session_id="attacker", agent="claude-code", cwd=str(ws))
    verdict = gov.pre(call, sandbox=True)
    assert verdict.allowed and verdict.command, verdict
    proc = subprocess.run(["/bin/bash", "-c", verdict.command], cwd=ws, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    gov.post(call)
    return proc


def test_an_agent_cannot_accept_its_own_proposal(ws: Path, tmp_path: Path) -> None:
    before = (ws / ".orchestration" / "active_intents.yaml").read_bytes()
    hook = spawn_hook(ws, propose_event(ws))
    try:
        request = pending(ws)
        orch = f"{sys.executable} -m orchestrator"
        tries = {
            "intents accept": _sandboxed(ws, f"{orch} intents accept {request.id}"),
            "approve": _sandboxed(ws, f"{orch} approve {request.id}"),
            "intents new": _sandboxed(ws, f"{orch} intents new mine --scope '**'"),
        }
        for what, proc in tries.items():
            # refused by Landlock, or the broker not even in sight (the run dirs are hidden in the command's mount
            # namespace: orchestrator/sandbox/hidden.py)
            out = proc.stderr + proc.stdout
            assert proc.returncode == 1 and any(m in out for m in ("Permission denied", "Read-only file system",
                                                                   "no pending approval")), (what, proc)
        script = tmp_path / "forge.py"
        script.write_text(FORGE)
        forged = _sandboxed(ws, f"{sys.executable} {script} {ws / '.orchestration'}")
        # the pending request is out of sight (hidden run dir) or its answer refused; the intents file refused
        assert json.loads(forged.stdout) in (["refused PermissionError"],
                                             ["refused PermissionError", "refused PermissionError"]), forged
        # the agent's file tools: selfguard refuses the broker's files and the intents file
        gov = Governor(ws)
        gov.select_intent("INT-1", SESSION)
        broker = Broker(Workspace.at(ws).shared_run_dir)
        for target in (broker.decision_path(request.id), ws / ".orchestration" / "active_intents.yaml"):
            verdict = gov.pre(to_call("Write", {"file_path": str(target), "content": "{}"}, session_id=SESSION,
                                      agent="claude-code"))
            assert verdict.decision == "deny" and verdict.error["type"] == "governance-file", verdict
        assert broker.pending()[0].id == request.id  # still waiting for a person
        proposal.reject(broker, request.id, "no", by="cli")  # the person
        out = answer(hook)
    finally:
        if hook.poll() is None:
            hook.kill()
    assert out["permissionDecision"] == "deny" and reason_of(out)["reason"] == "no"
    assert (ws / ".orchestration" / "active_intents.yaml").read_bytes() == before
    assert "FORGED" not in yaml.safe_load(before.decode())


def test_a_proposal_id_handed_to_the_mcp_tool_accepts_nothing(ws: Path) -> None:
    """The MCP tool's ``proposal_id`` (filled in by the hook) only *reads* a decided proposal: an agent passing
    another id, a rejected one, or none gets a new proposal put to a person — never an intent."""
    from orchestrator.adapters.mcp import McpBackend

    hook = spawn_hook(ws, propose_event(ws))
    request = pending(ws)
    broker = Broker(Workspace.at(ws).shared_run_dir)
    proposal.reject(broker, request.id, "no", by="cli")
    assert reason_of(answer(hook))["type"] == "proposal-rejected"
    assert proposal.outcome_of(broker, request.id) is None  # a rejection has no outcome to read
    assert proposal.outcome_of(broker, "../../etc") is None
    os.environ["ORCH_APPROVAL_TIMEOUT"] = "0.2"
    try:
        backend = McpBackend(ws, hooked=True)
        try:
            backend.propose_intent("Fix the login crash", ["src/auth/**"], "w", proposal_id=request.id)
        except Exception as exc:  # noqa: BLE001 — the structured refusal is the point
            assert json.loads(json.dumps(exc.to_dict()))["type"] == "proposal-timeout"  # type: ignore[attr-defined]
        else:
            raise AssertionError("a rejected proposal's id was accepted")
    finally:
        del os.environ["ORCH_APPROVAL_TIMEOUT"]
    assert Governor(ws).intents().get("INT-3") is None
