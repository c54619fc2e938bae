"""pi adapter: the events orchestrator's extension builds from what pi 1.6.0 hands it.

The handler inputs are real (captured from pi 1.6.0 with a logging extension: tests/data/pi/); the events here are
built from them as ``.pi/extensions/orchestrator.js`` builds them (``tests/adapters/test_pi_extension.py`` runs the
real extension on the same inputs).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from orchestrator.adapters import pi
from orchestrator.adapters.base import run_hook
from orchestrator.core.models import Kind
from orchestrator.engine.pipeline import Governor
from orchestrator.sandbox import unwrap
from orchestrator.engine.tools import to_call
from tests.adapters.test_opencode import denied
from tests.adapters.test_opencode_plugin import records

DATA = Path(__file__).resolve().parents[1] / "data" / "pi" / "extension_calls.jsonl"
DOC_ROOT = "/home/dev/project"
SESSION = "01a21fd2-1536-733c-8947-70adf85a7544"
CODEMODE_SESSION = "01a21fd2-2e33-77fa-a66b-6f8d921c3099"


def captured(ws: Path) -> list[dict[str, Any]]:
    """The captured handler inputs, their paths moved into ``ws``."""
    return [json.loads(line.replace(DOC_ROOT, str(ws))) for line in DATA.read_text().splitlines() if line.strip()]


def find(entries: list[dict[str, Any]], hook: str, call_id: str) -> dict[str, Any]:
    return next(e for e in entries if e["hook"] == hook and e["event"].get("toolCallId") == call_id)


def pi_event(entries: list[dict[str, Any]], hook: str, call_id: str, **extra: Any) -> dict[str, Any]:
    """The event the extension sends for a captured ``tool_call`` / ``tool_result`` (see its ``base``)."""
    call = find(entries, "tool_call", call_id)
    src = find(entries, hook, call_id)["event"]
    event: dict[str, Any] = {"hook_event_name": hook, "toolName": src["toolName"], "toolCallId": call_id,
                             "input": src["input"], "cwd": call["cwd"], "sessionID": call["session"],
                             "model": f"{call['model']['provider']}/{call['model']['id']}"}
    if src.get("parentToolCallId"):
        event["parentToolCallId"] = src["parentToolCallId"]
    if hook == "tool_result":
        result: dict[str, Any] = {"isError": src.get("isError") is True}
        structured = src.get("structuredContent")
        if isinstance(structured, dict) and isinstance(structured.get("exit_code"), int):
            result["exit_code"] = structured["exit_code"]
        event["result"] = result
    return {**event, **extra}


def hook(event: dict[str, Any], **env: str) -> dict[str, Any]:
    result = run_hook("pi", json.dumps(event), env=env)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def select(ws: Path, session: str = SESSION) -> None:
    event = {"hook_event_name": pi.BEFORE, "toolName": pi.SELECT_TOOL, "toolCallId": "sel", "sessionID": session,
             "input": {"intent_id": "INT-1"}, "cwd": str(ws)}
    assert hook(event) == {}


def test_registry_knows_every_tool_pi_offers() -> None:
    offered = {"read": Kind.READ, "bash": Kind.EXEC, "edit": Kind.EDIT, "write": Kind.WRITE, "grep": Kind.META,
               "find": Kind.META, "ls": Kind.META, "codemode": Kind.META, "tool_search": Kind.META,
               "mcp__orchestrator__select_active_intent": Kind.META, "mcp__orchestrator__list_intents": Kind.META,
               "list_mcp_resources": Kind.META, "read_mcp_resource": Kind.META}
    for tool, kind in offered.items():
        assert to_call(tool, {}).kind is kind, tool
    assert to_call("write", {"path": "src/a.py", "content": "x"}).paths == ["src/a.py"]
    assert to_call("edit", {"path": "src/a.py", "edits": []}).paths == ["src/a.py"]
    assert to_call("mcp__other__tool", {}).kind is Kind.UNKNOWN  # unknown tools are never silently safe
    assert to_call("powershell", {"command": "rm x"}).kind is Kind.UNKNOWN  # not a POSIX shell: no analysis


def test_write_before_intent_is_refused_then_allowed_and_recorded(ws: Path) -> None:
    entries = captured(ws)
    write = pi_event(entries, "tool_call", "c1")
    assert denied(hook(write))["type"] == "intent-required"
    select(ws)
    assert Governor(ws).sessions.get(SESSION)["intent_id"] == "INT-1"
    assert hook(write) == {}
    (ws / "src" / "new.py").write_text("def f():\n    return 1\n")  # what pi's write did
    assert hook(pi_event(entries, "tool_result", "c1")) == {}
    [record] = records(ws)
    conv = record["files"][0]["conversations"][0]
    assert record["files"][0]["path"] == "src/new.py" and conv["contributor"]["model_id"] == "fake/m1"
    assert [(r["start_line"], r["end_line"]) for r in conv["ranges"]] == [(1, 2)]
    meta = record["metadata"]["dev.orchestrator"]
    assert meta["agent"] == "pi" and meta["session_id"] == SESSION and meta["tool_use_id"] == f"{SESSION}/c1"


def test_an_edit_with_several_replacements_records_the_lines_they_changed(ws: Path) -> None:
    entries = captured(ws)
    select(ws)
    assert hook(pi_event(entries, "tool_call", "c2")) == {}
    (ws / "src" / "app.py").write_text("x = 2\ny = 3\nprint(y)\n")  # both replacements of c2
    assert hook(pi_event(entries, "tool_result", "c2")) == {}
    [record] = records(ws)
    ranges = record["files"][0]["conversations"][0]["ranges"]
    assert [(r["start_line"], r["end_line"]) for r in ranges] == [(1, 3)]


def test_a_failed_edit_is_not_recorded_but_a_command_with_a_non_zero_exit_is(ws: Path) -> None:
    entries = captured(ws)
    select(ws)
    assert hook(pi_event(entries, "tool_call", "c8")) == {}
    assert hook(pi_event(entries, "tool_result", "c8")) == {}  # isError: the edit found no oldText
    assert records(ws) == []
    assert pi.tool_result("edit", {"isError": True}).failed
    assert not pi.tool_result("bash", {"isError": True, "exit_code": 3}).failed  # it ran: its changes count


def test_bash_is_rewritten_into_the_sandbox_and_unwrapped_after(ws: Path) -> None:
    select(ws)
    before = {"hook_event_name": pi.BEFORE, "toolName": "bash", "toolCallId": "py", "sessionID": SESSION,
              "cwd": str(ws), "input": {"command": "python3 gen.py", "timeout": 30}}
    answer = hook(before, ORCH_APPROVAL_CHANNEL="deny")
    if "deny" in answer:  # no Landlock here: the approval channel decides, and "deny" refuses
        assert "not sandboxed" in answer["deny"]
        return
    wrapped = answer["input"]["command"]
    assert set(answer["input"]) == {"command"} and unwrap(wrapped) == "python3 gen.py"
    after = {**before, "hook_event_name": pi.AFTER, "input": {**before["input"], "command": wrapped},
             "result": {"isError": False, "exit_code": 0}}
    event, sandboxed = pi.unwrapped(after)
    assert sandboxed and event["input"] == {"command": "python3 gen.py", "timeout": 30}
    assert hook(after) == {}


def test_refusals_scope_governance_and_the_shells_working_directory(ws: Path) -> None:
    select(ws)
    base = {"hook_event_name": pi.BEFORE, "toolName": "write", "toolCallId": "w", "sessionID": SESSION,
            "cwd": str(ws)}
    for path, kind in ((".pi/extensions/orchestrator.js", "governance-file"), (".pi/mcp.json", "governance-file"),
                       (".pi/settings.json", "governance-file"), ("src/.pi/extensions/x.js", "governance-file"),
                       (".orchestration/active_intents.yaml", "governance-file"), ("README.md", "scope-violation")):
        assert denied(hook({**base, "input": {"path": path, "content": "x"}}))["type"] == kind, path
    shell = {**base, "toolName": "bash"}
    assert denied(hook({**shell, "input": {"command": "cd docs && echo q > notes.txt"}}))["type"] == "scope-violation"
    assert denied(hook({**shell, "input": {"command": "rm -rf src"}}, ORCH_APPROVAL_CHANNEL="deny"))["hook"] == \
        "approval"


def test_codemode_nested_calls_are_governed_like_direct_ones(ws: Path) -> None:
    """A codemode script's ``tools.write`` arrives as its own ``tool_call`` (``toolCallId`` ``m1/1``,
    ``parentToolCallId`` ``m1``): refused without an intent, selected through the nested handshake, recorded with
    its own id; the ``codemode`` call itself changes nothing."""
    entries = captured(ws)
    script = pi_event(entries, "tool_call", "m1")
    assert hook(script) == {}  # the script runs in QuickJS with no file system: its calls come one by one
    nested = pi_event(entries, "tool_call", "m1/1")
    assert nested["parentToolCallId"] == "m1" and nested["toolName"] == "write"
    assert denied(hook(nested))["type"] == "intent-required"
    assert hook(pi_event(entries, "tool_call", "m1/4")) == {}  # tools.mcp__orchestrator__select_active_intent
    assert Governor(ws).sessions.get(CODEMODE_SESSION)["intent_id"] == "INT-1"
    assert hook(nested) == {}
    (ws / "src" / "cm.py").write_text("c = 1\n")
    assert hook(pi_event(entries, "tool_result", "m1/1")) == {}
    assert hook(pi_event(entries, "tool_result", "m1")) == {}
    [record] = records(ws)
    assert record["metadata"]["dev.orchestrator"]["tool_use_id"] == f"{CODEMODE_SESSION}/m1/1"
    out = {**nested, "input": {"path": "README.md", "content": "x"}}
    assert denied(hook(out))["type"] == "scope-violation"


def test_session_context_names_pis_handshake_and_files(ws: Path) -> None:
    text = hook({"hook_event_name": pi.CONTEXT, "sessionID": SESSION, "cwd": str(ws)})["context"]
    assert pi.SELECT_TOOL in text and "INT-1" in text and ".pi/" in text and ".mcp.json" not in text


def structured_refusal(result: Any) -> dict[str, Any]:
    """The ``malformed-call`` error of a blocked hook answer (exit 2, the JSON at the end of stderr)."""
    assert result.exit_code == 2 and "blocked" in result.stderr, result.stderr
    return json.loads(result.stderr[result.stderr.index("{"):])


@pytest.mark.parametrize("event, missing", [
    ({"hook_event_name": "tool_call", "sessionID": "s", "input": {}}, "toolName"),
    ({"hook_event_name": "tool_call", "toolName": "write", "sessionID": "s"}, "input"),
    ({"hook_event_name": "tool_call", "toolName": "write", "sessionID": "s", "input": "nope"}, "input"),
    ({"hook_event_name": "tool_call", "toolName": 7, "sessionID": "s", "input": {}}, "toolName"),
    ({"hook_event_name": "tool_result", "sessionID": "s", "input": {}}, "toolName"),
    ({"hook_event_name": "turn_end"}, "hook_event_name"),
    ({"toolName": "write", "input": {}}, "hook_event_name"),
])
def test_malformed_events_get_a_structured_refusal_naming_pi_and_the_field(ws: Path, event: dict[str, Any],
                                                                           missing: str) -> None:
    """An event of an unknown shape, a missing field, a field of the wrong type (a pi whose format changed):
    refused with ``malformed-call`` naming the agent and the field, never allowed."""
    error = structured_refusal(run_hook("pi", json.dumps({**event, "cwd": str(ws)})))
    assert error["type"] == "malformed-call" and error["agent"] == "pi" and error["missing"] == missing, error


@pytest.mark.parametrize("session", [None, "", 7], ids=repr)
def test_an_event_without_a_usable_session_is_refused_not_defaulted(ws: Path, session: object) -> None:
    Governor(ws).select_intent("INT-1", "default")
    write = pi_event(captured(ws), "tool_call", "c1")
    write["sessionID"] = session
    assert denied(hook(write))["type"] == "session-required"
