"""``propose_intent`` through a real Claude Code hook process: a person accepts (edited), rejects, or nobody decides;
what lands in active_intents.yaml, the session, the ledger, and what the agent reads."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from orchestrator.adapters.base import run_hook
from orchestrator.approvals import Broker, proposal
from orchestrator.engine.pipeline import Governor
from orchestrator.config.workspace import Workspace
from tests.waiting import TIMEOUT, wait_until

ROOT = Path(__file__).resolve().parents[2]
SESSION = "5e55a9d1-0000-4000-8000-00000000c0de"
PROPOSAL = {"name": "Fix the login crash", "owned_scope": ["src/auth/**"], "constraints": ["no new dependencies"],
            "why": "the login form crashes on an empty password; no intent owns src/auth/"}


def propose_event(ws: Path, tool_input: dict[str, Any] | None = None, session: str = SESSION) -> dict[str, Any]:
    return {"session_id": session, "cwd": str(ws), "hook_event_name": "PreToolUse",
            "tool_name": "mcp__orchestrator__propose_intent", "tool_input": tool_input or dict(PROPOSAL),
            "tool_use_id": "toolu_propose", "mcp_server": {"name": "orchestrator", "source": "local"}}


def spawn_hook(ws: Path, event: dict[str, Any], *, timeout: float = 2 * TIMEOUT,
               agent: str = "claude-code") -> subprocess.Popen[str]:
    """A real ``orch hook claude-code`` process answering the event (it waits for the person)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ORCH_APPROVAL_TIMEOUT": str(timeout)}
    env.pop("ORCH_APPROVAL_CHANNEL", None)
    source = ws.parent / f"event-{os.urandom(4).hex()}.json"
    source.write_text(json.dumps(event))
    with source.open() as stdin:
        return subprocess.Popen([sys.executable, "-m", "orchestrator", "hook", agent], cwd=ws, env=env, text=True,
                                stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def answer(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0, err
    return json.loads(out)["hookSpecificOutput"] if out else {}


def pending(ws: Path) -> Any:
    broker = Broker(Workspace.at(ws).shared_run_dir)
    return wait_until(lambda: [r for r in broker.pending() if getattr(r, "proposal", None)],
                      what="the proposal in the broker")[0]


def orch(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "orchestrator", *args], cwd=ws, env=env, capture_output=True,
                          text=True, timeout=TIMEOUT)


def intents_of(ws: Path) -> dict[str, dict[str, Any]]:
    data = yaml.safe_load((ws / ".orchestration" / "active_intents.yaml").read_text())
    return {i["id"]: i for i in data["active_intents"]}


def reason_of(out: dict[str, Any]) -> dict[str, Any]:
    reason = out["permissionDecisionReason"]
    return json.loads(reason[reason.index("{"):])


def test_accepted_with_edits_becomes_in_progress_selected_and_records_its_writes(ws: Path) -> None:
    before = (ws / ".orchestration" / "active_intents.yaml").read_text()
    hook = spawn_hook(ws, propose_event(ws))
    request = pending(ws)
    assert request.risk == proposal.RISK and request.session_id == SESSION and request.agent == "claude-code"
    assert '+    name: Fix the login crash' in (request.diff or "")  # the person reads how the file changes
    accepted = orch(ws, "intents", "accept", request.id, "--add-scope", "tests/auth/**", "--owner", "ana")
    assert accepted.returncode == 0, accepted.stderr
    out = answer(hook)
    assert out["permissionDecision"] == "allow"
    assert out["updatedInput"] == {**PROPOSAL, "proposal_id": request.id}
    new = intents_of(ws)["INT-3"]
    assert new["status"] == "IN_PROGRESS" and new["owned_scope"] == ["src/auth/**", "tests/auth/**"]
    assert new["owner"] == "ana" and new["accepted_by"] == "cli" and new["proposal"] == request.id
    assert new["description"] == PROPOSAL["why"] and new["constraints"] == PROPOSAL["constraints"]
    assert (ws / ".orchestration" / "active_intents.yaml").read_text().startswith(before)
    gov = Governor(ws)
    assert gov.sessions.get(SESSION)["intent_id"] == "INT-3"
    # the agent's next in-scope write lands under the new intent
    write = {"session_id": SESSION, "cwd": str(ws), "hook_event_name": "PreToolUse", "tool_name": "Write",
             "tool_input": {"file_path": str(ws / "src/auth/login.py"), "content": "ok = True\n"},
             "tool_use_id": "toolu_w"}
    assert run_hook("claude-code", json.dumps(write)).stdout == ""
    (ws / "src" / "auth").mkdir(parents=True)
    (ws / "src" / "auth" / "login.py").write_text("ok = True\n")
    post = {**write, "hook_event_name": "PostToolUse", "tool_response": {"type": "create", "filePath":
                                                                          str(ws / "src/auth/login.py")}}
    assert run_hook("claude-code", json.dumps(post)).exit_code == 0
    records = [json.loads(line) for line in (ws / ".orchestration" / "agent_trace.jsonl").read_text().splitlines()]
    assert records[-1]["metadata"]["dev.orchestrator"]["intent_id"] == "INT-3"
    summary = json.loads(orch(ws, "intents", "show", "INT-3", "--json").stdout)
    assert summary["records"] == 1 and "src/auth/login.py" in summary["files"]
    assert [a["decision"] for a in summary["approvals"]] == ["approve"]


def test_rejected_the_agent_reads_the_reason_and_nothing_is_written(ws: Path) -> None:
    before = (ws / ".orchestration" / "active_intents.yaml").read_bytes()
    hook = spawn_hook(ws, propose_event(ws))
    request = pending(ws)
    # the person deciding from a terminal sees what accepting would grant: the scope and the constraints
    listed = orch(ws, "approvals").stdout
    assert "scope: src/auth/**" in listed and "constraints: no new dependencies" in listed, listed
    assert orch(ws, "intents", "reject", request.id, "--reason", "auth belongs to the security team").returncode == 0
    out = answer(hook)
    assert out["permissionDecision"] == "deny"
    error = reason_of(out)
    assert error["type"] == "proposal-rejected" and error["reason"] == "auth belongs to the security team"
    assert "auth belongs to the security team" in error["hint"]
    assert (ws / ".orchestration" / "active_intents.yaml").read_bytes() == before
    assert Governor(ws).sessions.get(SESSION).get("intent_id") is None


def test_nobody_decides_the_proposal_expires_denied(ws: Path) -> None:
    before = (ws / ".orchestration" / "active_intents.yaml").read_bytes()
    out = answer(spawn_hook(ws, propose_event(ws), timeout=0.3))
    error = reason_of(out)
    assert out["permissionDecision"] == "deny" and error["type"] == "proposal-timeout"
    assert (ws / ".orchestration" / "active_intents.yaml").read_bytes() == before
    record = json.loads(Broker(Workspace.at(ws).shared_run_dir).resolved_path(error["proposal"]).read_text())
    assert record["decision"]["decision"] == "timeout" and "outcome" not in record


@pytest.mark.parametrize(("change", "field"), [
    ({"owned_scope": ["../outside/**"]}, "owned_scope"), ({"owned_scope": []}, "owned_scope"),
    ({"name": ""}, "name"), ({"why": None}, "why"), ({"constraints": "x" * 3000}, "constraints"),
    ({"owned_scope": [1, 2]}, "owned_scope"),
    # what a person reads in a terminal must be what the intent says: no escape sequence may hide or rewrite a line
    # (ESC [8m conceals what follows, ESC [1A ESC [2K erases the line above), no bidi override may reorder it
    ({"name": "docs typo\x1b[8m and everything"}, "name"), ({"why": "fix it\x1b[1A\x1b[2K"}, "why"),
    ({"owned_scope": ["docs/**\r**"]}, "owned_scope"), ({"constraints": ["keep \u202eevil"]}, "constraints"),
])
def test_a_malformed_proposal_is_refused_before_anyone_is_asked(ws: Path, change: dict, field: str) -> None:
    result = run_hook("claude-code", json.dumps(propose_event(ws, {**PROPOSAL, **change})))
    out = json.loads(result.stdout)["hookSpecificOutput"]
    error = reason_of(out)
    assert out["permissionDecision"] == "deny" and error["type"] == "proposal-invalid" and error["field"] == field
    assert Broker(Workspace.at(ws).shared_run_dir).pending() == []


def test_policy_channel_deny_refuses_proposals_and_no_session_is_refused(ws: Path) -> None:
    (ws / ".orchestration" / "policy.yaml").write_text("version: 1\napproval:\n  channel: deny\n")
    out = json.loads(run_hook("claude-code", json.dumps(propose_event(ws))).stdout)["hookSpecificOutput"]
    assert reason_of(out)["type"] == "proposal-denied"
    out = json.loads(run_hook("claude-code", json.dumps(propose_event(ws, session=""))).stdout)["hookSpecificOutput"]
    assert reason_of(out)["type"] == "session-required"


def test_a_proposal_is_accepted_once_and_edits_are_checked_when_the_person_makes_them(ws: Path) -> None:
    hook = spawn_hook(ws, propose_event(ws))
    request = pending(ws)
    broker = Broker(Workspace.at(ws).shared_run_dir)
    with pytest.raises(Exception, match="accepted once"):
        broker.decide(request.id, "approve", scope="session")
    bad = orch(ws, "intents", "accept", request.id, "--scope", "/etc/**")
    assert bad.returncode == 1 and "owned_scope" in bad.stderr
    with pytest.raises(proposal.ProposalError, match="unknown fields"):
        proposal.accept(broker, request.id, {"status": "COMPLETED"}, by="tui")
    assert orch(ws, "reject", request.id, "--reason", "not now").returncode == 0  # the generic verb works too
    assert reason_of(answer(hook))["reason"] == "not now"


def test_codex_gets_no_updated_input_and_the_mcp_tool_finds_the_decided_proposal(ws: Path) -> None:
    from orchestrator.adapters.mcp import McpBackend

    hook = spawn_hook(ws, propose_event(ws), agent="codex")
    request = pending(ws)
    assert orch(ws, "approve", request.id).returncode == 0
    assert answer(hook) == {}  # Codex: a plain allow is no answer at all
    assert Governor(ws).sessions.get(SESSION)["intent_id"] == "INT-3"
    text = McpBackend(ws, hooked=True).propose_intent(PROPOSAL["name"], PROPOSAL["owned_scope"], PROPOSAL["why"],
                                                      PROPOSAL["constraints"])
    assert text.startswith("A person accepted your proposal: intent INT-3 is IN_PROGRESS and selected")
    assert '<intent_context id="INT-3"' in text
