"""The intent lifecycle through a real console (uvicorn on loopback, real HTTP): a change is prepared by the console,
signed over its canonical operation, applied once by the console — the page never sends the fields it applies.
Forged, replayed, unsigned, foreign and stale changes write nothing and say why; proposals accepted with edits
carry the signed edits to the waiting side."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from orchestrator.approvals import Broker
from orchestrator.approvals.approvers import unb64url
from orchestrator.approvals.passkey import challenge
from orchestrator.config import intents as _intents
from orchestrator.config.workspace import Workspace
from tests.approvals.signed_support import passkey_workspace
from tests.approvals.softkey import SoftKey
from tests.web.support import free_port, served


@pytest.fixture
def scene(tmp_path: Path) -> Any:
    port = free_port()
    alice = SoftKey("alice", origin=f"http://localhost:{port}")
    ws = passkey_workspace(tmp_path, alice, port=port)
    with served(ws, port) as console:
        yield ws, console, alice


def _post(console: Any, path: str, body: Any, **headers: str) -> httpx.Response:
    base = {"Origin": console.url, "X-CSRF-Token": console.csrf_token, "Content-Type": "application/json",
            **headers}
    return httpx.post(console.url + path, content=json.dumps(body).encode(),
                      headers={k: v for k, v in base.items() if v})


def _prepared(console: Any, op: str, intent: str | None, fields: dict[str, Any]) -> dict[str, Any]:
    got = _post(console, "/api/intents/challenge", {"op": op, "intent": intent, "fields": fields})
    assert got.status_code == 200, got.text
    return got.json()  # type: ignore[no-any-return]


def _apply(console: Any, prepared: dict[str, Any], assertion: Any) -> httpx.Response:
    return _post(console, "/api/intents/apply", {"operation": prepared["operation"]["nonce"], "assertion": assertion})


def test_create_edit_finish_archive_through_the_console(scene: Any) -> None:
    ws, console, alice = scene
    p = _prepared(console, "new", None, {"name": "Payments", "owned_scope": ["src/pay/**"]})
    op = p["operation"]
    # the challenge is the hash of the canonical operation the console holds, and the page is shown what it signs
    assert unb64url(p["challenge"]) == challenge(op)
    assert op["after"]["id"] == "INT-4" and p["rpId"] == "localhost" and p["allowCredentials"]
    got = _apply(console, p, alice.assertion(unb64url(p["challenge"])))
    assert got.status_code == 200 and got.json()["by"] == "alice"
    state = httpx.get(console.url + "/api/state").json()
    row = next(r for r in state["intents"] if r["id"] == "INT-4")
    assert row["entry"]["owned_scope"] == ["src/pay/**"] and row["entry"]["created_at"]
    for op_name, fields in (("edit", {"constraints": ["keep the API"]}), ("done", {"status": "COMPLETED"}),
                            ("archive", {})):
        p = _prepared(console, op_name, "INT-4", fields)
        assert _apply(console, p, alice.assertion(unb64url(p["challenge"]))).status_code == 200
    assert _intents.load(ws.intents_file).get("INT-4") is None
    assert "INT-4" in (ws.orch_dir / "archived_intents.yaml").read_text()


def test_forged_replayed_unsigned_and_stale_changes_are_refused(scene: Any) -> None:
    ws, console, alice = scene
    before = ws.intents_file.read_text()
    wide = _prepared(console, "edit", "INT-2", {"owned_scope": ["**"]})
    harmless = _prepared(console, "edit", "INT-2", {"name": "Docs and guides"})
    signed = alice.assertion(unb64url(harmless["challenge"]))
    # the person's signature over the harmless change, sent for the wide one
    forged = _apply(console, wide, signed)
    assert forged.status_code == 400 and "another request" in forged.json()["error"]["message"]
    # the wide one was taken on its first use: sending it again names no operation
    again = _apply(console, wide, alice.assertion(unb64url(wide["challenge"])))
    assert "no prepared intent change" in again.json()["error"]["message"]
    # unsigned, a stranger's passkey, malformed
    for bad in (None, "x", SoftKey("mallory", origin=console.url).assertion(unb64url(harmless["challenge"]))):
        p = _prepared(console, "edit", "INT-2", {"owned_scope": ["**"]})
        refused = _apply(console, p, bad)
        assert refused.status_code == 400, refused.text
    assert ws.intents_file.read_text() == before
    # the fields cannot be sent along: whatever the body says, the console applies what it prepared
    ok = _post(console, "/api/intents/apply", {"operation": harmless["operation"]["nonce"], "assertion": signed,
                                               "fields": {"owned_scope": ["**"]}})
    assert ok.status_code == 200
    assert _intents.load(ws.intents_file).get("INT-2").owned_scope == ("docs/**",)
    replay = _apply(console, harmless, signed)
    assert replay.status_code == 400 and "no prepared intent change" in replay.json()["error"]["message"]
    # stale: the intent changed between the person's look and the signature's arrival
    p = _prepared(console, "done", "INT-1", {})
    from orchestrator.config.intentstore import IntentStore

    IntentStore(ws).edit("INT-1", {"name": "Clean the build dir"})
    stale = _apply(console, p, alice.assertion(unb64url(p["challenge"])))
    assert stale.status_code == 400 and "changed since" in stale.json()["error"]["message"]
    assert _intents.load(ws.intents_file).get("INT-1").status == "IN_PROGRESS"


def test_a_malformed_change_or_a_request_without_origin_and_token_prepares_nothing(scene: Any) -> None:
    _ws, console, _alice = scene
    bad = _post(console, "/api/intents/challenge", {"op": "new", "fields": {"name": "x", "owned_scope": ["a/["]}})
    assert bad.status_code == 400 and "owned_scope" in bad.json()["error"]["message"]
    for headers in ({"Origin": "http://evil.example"}, {"X-CSRF-Token": "wrong"}):
        got = _post(console, "/api/intents/challenge",
                    {"op": "new", "fields": {"name": "x", "owned_scope": ["a/**"]}}, **headers)
        assert got.status_code == 403
    assert httpx.get(console.url + "/api/intents/apply").status_code == 405


def test_no_registered_approver_means_no_change_from_the_page(tmp_path: Path) -> None:
    port = free_port()
    ws = passkey_workspace(tmp_path, port=port)  # nobody registered
    with served(ws, port) as console:
        got = _post(console, "/api/intents/challenge", {"op": "new", "fields": {"name": "x", "owned_scope": ["a"]}})
        assert got.status_code == 400 and "orch approver add" in json.dumps(got.json())
        assert not console.intent_ops._ops  # nothing held for a change nobody could sign


def test_a_proposal_accepted_with_edits_signs_the_edits(scene: Any) -> None:
    import threading

    from orchestrator.approvals import proposal
    from orchestrator.config import policy

    ws: Workspace
    ws, console, alice = scene
    fields = proposal.normalise("Payments", ["src/**"], why="the task fits no intent")
    results: list[Any] = []
    broker = Broker(ws.shared_run_dir)
    waiter = threading.Thread(target=lambda: results.append(proposal.propose(
        ws, broker, fields, session_id="s9", agent="claude-code", timeout=60,
        approval=policy.load(ws.policy_file).approval)))
    waiter.start()
    from tests.waiting import wait_until

    wait_until(lambda: broker.pending(), what="the proposal to be filed")
    (req,) = broker.pending()
    item = next(i for i in httpx.get(console.url + "/api/state").json()["items"] if i["id"] == req.id)
    assert item["proposal"]["owned_scope"] == ["src/**"]
    assert [a["label"] for a in item["actions"]] == ["Accept intent", "Edit and accept…", "Reject…"]
    edits = {"owned_scope": ["src/pay/**"], "owner": "alice"}
    base = f"/api/items/approval/{req.id}"
    bad = _post(console, base + "/challenge", {"decision": "approve", "edits": {"id": "INT-9"}})
    assert bad.status_code == 400 and "unknown fields" in bad.json()["error"]["message"]
    opts = _post(console, base + "/challenge", {"decision": "approve", "edits": edits}).json()
    # an assertion over the edited acceptance does not carry an acceptance as proposed (nor other edits)
    signed = alice.assertion(unb64url(opts["challenge"]))
    swapped = _post(console, base + "/decide", {"decision": "approve", "assertion": signed,
                                               "edits": {"owned_scope": ["**"]}})
    assert swapped.status_code == 400 and "another request" in swapped.json()["error"]["message"]
    got = _post(console, base + "/decide", {"decision": "approve", "assertion": signed, "edits": edits})
    assert got.status_code == 200, got.text
    waiter.join(timeout=30)
    (result,) = results
    assert result.decision == "approve" and result.by == "alice"
    intent = _intents.load(ws.intents_file).get(result.intent_id)
    assert intent.owned_scope == ("src/pay/**",) and intent.name == "Payments"
