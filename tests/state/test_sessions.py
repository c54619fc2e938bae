"""Session identity fails closed (orchestrator/state/sessions.py): no usable session id, no mutation, no shared state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator import cli
from orchestrator.state import sessions
from orchestrator.adapters.base import run_hook
from orchestrator.engine.pipeline import Governor
from orchestrator.engine.tools import to_call

UNUSABLE = [None, "", "   ", 123, ["s1"], {"id": "s1"}, True, "a\nb", "x" * 257]


@pytest.mark.parametrize("value", UNUSABLE, ids=repr)
def test_an_unusable_session_id_is_no_session(value: object) -> None:
    assert not sessions.usable(value)
    assert sessions.session_from(value) == sessions.NO_SESSION


def test_usable_session_ids_are_kept_as_they_are() -> None:
    for value in ("ff186b18-6b37-4f8d-9234-24fb54551cf0", "default", "s1", "a/b", "x" * 256):
        assert sessions.session_from(value) == value


def test_two_session_ids_never_share_a_state_file(tmp_path: Path) -> None:
    store = sessions.SessionStore(tmp_path)
    names = {store.file_name(s) for s in ("a/b", "a_b", "a\\b", "", "default", "_", "~")}
    assert len(names) == 7
    assert store.file_name("default") == "default.json" and store.file_name("s1") == "s1.json"


def test_the_engine_refuses_a_mutating_call_without_a_session(gov: Governor) -> None:
    gov.select_intent("INT-001", "default")  # whatever `default` holds, an unnamed session does not inherit it
    v = gov.pre(to_call("Write", {"file_path": "src/app.py"}, session_id=sessions.NO_SESSION))
    assert v.decision == "deny" and v.error["type"] == "session-required" and v.error["hint"]
    # reads need no session (nothing to govern) and are not stamped for one
    read = to_call("Read", {"file_path": "src/app.py"}, session_id=sessions.NO_SESSION)
    assert gov.pre(read).allowed
    gov.post(read)
    assert not any(p.name.startswith(("~", "default~")) for p in gov.sessions.dir.glob("*.json"))


def test_no_intent_can_be_selected_for_no_session(gov: Governor) -> None:
    from orchestrator.core.errors import SessionError

    with pytest.raises(SessionError) as err:
        gov.select_intent("INT-001", sessions.NO_SESSION)
    assert err.value.to_dict()["type"] == "session-required"


def _decision(result) -> tuple[str, dict]:  # type: ignore[no-untyped-def]
    out = json.loads(result.stdout)["hookSpecificOutput"]
    reason = out["permissionDecisionReason"]
    return out["permissionDecision"], json.loads(reason[reason.index("{"):])


@pytest.mark.parametrize("agent,key", [("claude-code", "session_id"), ("codex", "session_id"),
                                       ("cursor", "conversation_id")])
@pytest.mark.parametrize("value", [None, "", 42, ["x"]], ids=repr)
def test_a_hook_event_without_a_usable_session_is_refused_not_defaulted(ws: Path, agent: str, key: str,
                                                                        value: object) -> None:
    Governor(ws).select_intent("INT-001", "default")  # the shared session a coercion would have picked
    if agent == "cursor":
        event = {"hook_event_name": "preToolUse", "tool_name": "Write", "cwd": str(ws),
                 "tool_input": {"file_path": str(ws / "src" / "app.py"), "content": "y = 2\n"}}
    else:
        event = {"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": str(ws),
                 "tool_input": {"file_path": str(ws / "src" / "app.py"), "content": "y = 2\n"}}
    if value is not None:
        event[key] = value
    result = run_hook(agent, json.dumps(event), env={"ORCH_ROOT": str(ws)})
    assert result.exit_code in (0, 2)
    text = result.stdout + result.stderr
    assert "session-required" in text, text


def test_the_selection_handshake_needs_a_session(ws: Path) -> None:
    event = {"hook_event_name": "PreToolUse", "tool_name": "mcp__orchestrator__select_active_intent",
             "cwd": str(ws), "tool_input": {"intent_id": "INT-001"}, "session_id": 7}
    decision, error = _decision(run_hook("claude-code", json.dumps(event), env={"ORCH_ROOT": str(ws)}))
    assert decision == "deny" and error["type"] == "session-required"


def test_orch_intent_select_says_which_session_it_selects_for(ws: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(ws)
    assert cli.main(["intent", "select", "INT-001"]) == 0
    err = capsys.readouterr().err
    assert "session 'default'" in err and "--session" in err
    assert cli.main(["intent", "select", "INT-001", "--session", "abc"]) == 0
    assert "session 'abc'" in capsys.readouterr().err
