"""Intent changes signed by an approver's passkey (approvals/intentops): prepared by a dry run of the store, signed
over the whole canonical operation, verified and applied once by the writing process — anything else is refused
and writes nothing. Real files, real signatures (the software authenticator), the real store."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from orchestrator.approvals import Broker, intentops
from orchestrator.approvals.passkey import PasskeyError, Settings, challenge
from orchestrator.config import intents as _intents
from orchestrator.config.intentstore import IntentStore
from orchestrator.config.workspace import Workspace
from orchestrator.core.errors import OrchestratorError
from tests.approvals.signed_support import passkey_workspace
from tests.approvals.softkey import SoftKey

NOW = 1_900_000_000.0
SETTINGS = Settings()


@pytest.fixture
def scene(tmp_path: Path) -> tuple[Workspace, SoftKey]:
    alice = SoftKey("alice")
    return passkey_workspace(tmp_path, alice), alice


def _prepare(ws: Workspace, op: str, intent: str | None, fields: Any = None) -> dict[str, Any]:
    return intentops.prepare(IntentStore(ws), op, intent, fields or {}, now=time.time())


def _commit(ws: Workspace, op: dict[str, Any], assertion: Any) -> dict[str, Any]:
    return intentops.commit(ws, op, assertion, settings=SETTINGS, now=time.time())


def _audit(ws: Workspace) -> list[dict[str, Any]]:
    path = Broker(ws.shared_run_dir).dir / "audit.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [e for e in map(json.loads, lines) if e["event"] == "intent-changed"]


def test_new_edit_done_archive_each_signed_and_applied(scene: tuple[Workspace, SoftKey]) -> None:
    ws, alice = scene
    new = _prepare(ws, "new", None, {"name": "Payments", "owned_scope": ["src/pay/**", " "], "owner": "alice",
                                     "constraints": ["no new dependencies"]})
    assert new["intent"] == "INT-4" and new["before"] is None
    assert new["after"] == {"id": "INT-4", "name": "Payments", "status": "IN_PROGRESS", "owner": "alice",
                            "owned_scope": ["src/pay/**"], "constraints": ["no new dependencies"]}
    assert "INT-4" not in ws.intents_file.read_text()  # prepared by a dry run: nothing written yet
    got = _commit(ws, new, alice.assertion(challenge(new)))
    assert got["by"] == "alice" and got["entry"]["id"] == "INT-4"
    assert _intents.load(ws.intents_file).get("INT-4").owned_scope == ("src/pay/**",)

    edit = _prepare(ws, "edit", "INT-4", {"owned_scope": ["src/pay/**", "tests/pay/**"], "owner": ""})
    assert edit["before"]["owner"] == "alice" and "owner" not in edit["after"]
    _commit(ws, edit, alice.assertion(challenge(edit)))
    assert _intents.load(ws.intents_file).get("INT-4").owned_scope == ("src/pay/**", "tests/pay/**")
    assert "owner: " not in ws.intents_file.read_text().split("INT-4")[1]

    done = _prepare(ws, "done", "INT-4", {"status": "CANCELLED"})
    assert done["after"]["status"] == "CANCELLED"
    _commit(ws, done, alice.assertion(challenge(done)))
    archive = _prepare(ws, "archive", "INT-4")
    assert archive["after"] is None
    _commit(ws, archive, alice.assertion(challenge(archive)))
    assert "INT-4" not in ws.intents_file.read_text()
    assert [a["id"] for a in IntentStore(ws).archived()] == ["INT-4"]
    events = _audit(ws)
    assert [(e["op"], e["intent"], e["by"], e["via"]) for e in events] == [
        ("new", "INT-4", "alice", "passkey"), ("edit", "INT-4", "alice", "passkey"),
        ("done", "INT-4", "alice", "passkey"), ("archive", "INT-4", "alice", "passkey")]
    # the audit keeps what was signed and the signature: the change can be checked again later
    first = events[0]["evidence"]
    assert first["fields"] == new and first["assertion"]["response"]["signature"]


@pytest.mark.parametrize("op, intent, fields, message", [
    ("new", None, {"name": "x", "owned_scope": []}, "owned_scope"),
    ("new", None, {"name": "", "owned_scope": ["a/**"]}, "name"),
    ("new", None, {"name": "x", "owned_scope": ["a/**"], "id": "INT-9"}, "cannot set id"),
    ("new", None, {"name": "x", "owned_scope": ["a/**"], "status": "SOMEDAY"}, "status"),
    ("new", None, {"name": "x", "owned_scope": [3]}, "owned_scope"),
    ("new", None, ["name"], "must be an object"),
    ("edit", "INT-1", {}, "nothing to change"),
    ("edit", "INT-1", {"name": "Clean the build"}, "nothing to change"),
    ("edit", "INT-9", {"name": "y"}, "no active intent"),
    ("edit", None, {"name": "y"}, "needs the intent's id"),
    ("done", "INT-1", {"status": "IN_PROGRESS"}, "not a finished status"),
    ("archive", "INT-1", {}, "only a finished intent is archived"),
    ("delete", "INT-1", {}, "op must be one of"),
])
def test_a_malformed_change_is_refused_before_anybody_signs(scene: tuple[Workspace, SoftKey], op: str,
                                                           intent: str | None, fields: Any, message: str) -> None:
    ws, _alice = scene
    before = ws.intents_file.read_text()
    with pytest.raises(OrchestratorError) as err:
        intentops.prepare(IntentStore(ws), op, intent, fields, now=NOW)
    assert message in err.value.message
    assert ws.intents_file.read_text() == before


def test_a_broken_intents_file_is_never_prepared_nor_changed(scene: tuple[Workspace, SoftKey]) -> None:
    ws, alice = scene
    op = _prepare(ws, "edit", "INT-2", {"name": "Docs and guides"})
    ws.intents_file.write_text(ws.intents_file.read_text() + "  - id: [\n")
    broken = ws.intents_file.read_text()
    with pytest.raises(OrchestratorError) as err:
        _prepare(ws, "edit", "INT-1", {"name": "y"})
    assert "active_intents.yaml" in str(err.value.to_dict())
    with pytest.raises(OrchestratorError):
        _commit(ws, op, alice.assertion(challenge(op)))
    assert ws.intents_file.read_text() == broken


def _refused(ws: Workspace, op: dict[str, Any], assertion: Any, message: str) -> None:
    before = ws.intents_file.read_text()
    with pytest.raises(OrchestratorError) as err:
        _commit(ws, op, assertion)
    assert message in err.value.message, err.value.message
    assert ws.intents_file.read_text() == before


def test_unsigned_forged_replayed_expired_or_foreign_changes_write_nothing(scene: tuple[Workspace, SoftKey]) -> None:
    ws, alice = scene
    op = _prepare(ws, "edit", "INT-2", {"owned_scope": ["**"]})
    _refused(ws, op, None, "no passkey assertion")
    _refused(ws, op, {"type": "public-key", "id": "x"}, "not a WebAuthn public-key credential")
    # signed by a passkey nobody registered
    _refused(ws, op, SoftKey("mallory").assertion(challenge(op)), "not a registered approver")
    # the person signed another operation: a harmless one; its assertion does not carry this one
    harmless = _prepare(ws, "edit", "INT-2", {"name": "Docs and guides"})
    signed_harmless = alice.assertion(challenge(harmless))
    _refused(ws, op, signed_harmless, "another request or another decision")
    # the signed fields tampered with after signing (the scope widened)
    tampered = {**harmless, "after": {**harmless["after"], "owned_scope": ["**"]}}
    _refused(ws, tampered, signed_harmless, "another request or another decision")
    # signed for another relying party / origin
    _refused(ws, op, alice.assertion(challenge(op), origin="http://evil.example"), "origin")
    # applied once; the same signed operation again is a replay
    _commit(ws, harmless, signed_harmless)
    assert _intents.load(ws.intents_file).get("INT-2").name == "Docs and guides"
    again = _prepare(ws, "edit", "INT-2", {"name": "Docs"})
    once = alice.assertion(challenge(again))
    _commit(ws, again, once)
    _refused(ws, again, once, "replay")
    # expired before it arrived
    late = intentops.prepare(IntentStore(ws), "edit", "INT-2", {"name": "Late"}, now=time.time() - 1000, ttl=10)
    _refused(ws, late, alice.assertion(challenge(late)), "expired")
    # an approval's signature is never an intent change (the canonical fields name what they are)
    with pytest.raises(PasskeyError, match="not an intent change"):
        _commit(ws, {**op, "item": "approval"}, alice.assertion(challenge({**op, "item": "approval"})))
    assert [e["op"] for e in _audit(ws)] == ["edit", "edit"]


def test_a_replayed_nonce_is_refused_even_if_the_intent_was_set_back(scene: tuple[Workspace, SoftKey]) -> None:
    ws, alice = scene
    op = _prepare(ws, "edit", "INT-3", {"status": "IN_PROGRESS"})
    signed = alice.assertion(challenge(op))
    _commit(ws, op, signed)
    IntentStore(ws).edit("INT-3", {"status": "PENDING"})  # a person sets it back with the CLI
    text = ws.intents_file.read_text()
    entry = next(i for i in IntentStore(ws).read().active.intents() if i["id"] == "INT-3")
    replay = {**op, "before": {**op["before"], **{k: v for k, v in entry.items() if k == "updated_at"}}}
    with pytest.raises(PasskeyError):
        _commit(ws, replay, signed)  # another hash: refused
    with pytest.raises(PasskeyError, match="replay|sign count"):
        _commit(ws, op, alice.assertion(challenge(op)))  # the very operation again: its nonce is used
    assert ws.intents_file.read_text() == text


def test_a_signature_never_applies_to_an_intent_that_changed_since(scene: tuple[Workspace, SoftKey]) -> None:
    ws, alice = scene
    op = _prepare(ws, "done", "INT-1", {"status": "COMPLETED"})
    IntentStore(ws).edit("INT-1", {"owned_scope": ["build/**"]})  # changed between signing and applying
    _refused(ws, op, alice.assertion(challenge(op)), "changed since")
    new = _prepare(ws, "new", None, {"name": "A", "owned_scope": ["a/**"]})
    IntentStore(ws).create({"name": "B", "owned_scope": ["b/**"]})  # took the id the signature names
    _refused(ws, new, alice.assertion(challenge(new)), "already used")
