"""An agent's intent proposal under the passkey channel (issue 29 with the intent lifecycle): the REAL hook of
``mcp__orchestrator__propose_intent`` waits; a signed acceptance writes the intent and selects it, a signed
rejection reaches the agent with its reason, and an unsigned decision — or edits the approver did not sign — are
set aside while the proposal stays pending."""

from __future__ import annotations

from pathlib import Path

import yaml

from orchestrator.approvals import Broker
from tests.approvals.signed_support import (
    answer_of,
    decide,
    forge,
    passkey_workspace,
    pending_request,
    refused,
    sign,
    spawn_hook,
    still_pending,
)
from tests.approvals.softkey import SoftKey

PROPOSE = "mcp__orchestrator__propose_intent"
PROPOSAL = {"name": "Write the guide", "owned_scope": ["docs/**"], "constraints": ["no code"],
            "why": "the task is documentation"}


def _intents(root: Path) -> dict[str, dict]:
    data = yaml.safe_load((root / ".orchestration" / "active_intents.yaml").read_text())
    return {i["id"]: i for i in data["active_intents"]}


def test_a_signed_acceptance_writes_and_selects_the_intent(tmp_path: Path) -> None:
    alice = SoftKey("alice")
    ws = passkey_workspace(tmp_path, alice)
    before = set(_intents(tmp_path))
    proc = spawn_hook(ws, "", tool=PROPOSE, tool_input=dict(PROPOSAL))
    req = pending_request(ws)
    assert req.proposal is not None and req.channel == "passkey" and req.input_sha256
    # the TUI / `orch intents accept` cannot decide it without a signature; forged edits are refused
    forge(ws, req, {"id": req.id, "session_id": req.session_id, "decision": "approve", "scope": "once",
                    "by": "console", "intent": {"owned_scope": ["**"]}, "assertion": sign(alice, req)})
    assert "another request or another decision" in refused(ws, req)[0]["error"]
    assert still_pending(ws, req) and proc.poll() is None
    decide(ws, req, sign(alice, req))
    answer = answer_of(proc)
    assert answer.get("permissionDecision") == "allow", answer
    (new,) = set(_intents(tmp_path)) - before
    intent = _intents(tmp_path)[new]
    assert intent["status"] == "IN_PROGRESS" and intent["owned_scope"] == ["docs/**"]
    assert intent["accepted_by"] == "alice" and intent["proposal"] == req.id
    from orchestrator.state.sessions import SessionStore

    assert SessionStore(ws.run_dir).get("s1")["intent_id"] == new


def test_signed_edits_are_written_as_signed(tmp_path: Path) -> None:
    from orchestrator.approvals.passkey import approval_fields, challenge

    alice = SoftKey("alice")
    ws = passkey_workspace(tmp_path, alice)
    proc = spawn_hook(ws, "", tool=PROPOSE, tool_input=dict(PROPOSAL))
    req = pending_request(ws)
    edits = {"owned_scope": ["docs/**", "README.md"]}
    assertion = alice.assertion(challenge(approval_fields(req, "approve", "once", None, edits)))
    Broker(ws.shared_run_dir).decide(req.id, "approve", by="console", intent=edits, assertion=assertion)
    assert answer_of(proc).get("permissionDecision") == "allow"
    (intent,) = [i for i in _intents(tmp_path).values() if i.get("proposal") == req.id]
    assert intent["owned_scope"] == ["docs/**", "README.md"]


def test_a_signed_rejection_reaches_the_agent(tmp_path: Path) -> None:
    alice = SoftKey("alice")
    ws = passkey_workspace(tmp_path, alice)
    before = _intents(tmp_path)
    proc = spawn_hook(ws, "", tool=PROPOSE, tool_input=dict(PROPOSAL))
    req = pending_request(ws)
    decide(ws, req, sign(alice, req, "reject", reason="docs are frozen"), "reject", reason="docs are frozen")
    answer = answer_of(proc)
    assert answer["permissionDecision"] == "deny" and "docs are frozen" in answer["permissionDecisionReason"]
    assert _intents(tmp_path) == before
