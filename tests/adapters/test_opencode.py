"""opencode adapter: the events orchestrator's plugin builds from what opencode 1.18.33 hands it.

The plugin inputs are real (captured from opencode 1.18.33 with a logging plugin: tests/data/opencode/); the events
here are built from them as ``.opencode/plugin/orchestrator.js`` builds them (``tests/adapters/
test_opencode_plugin.py`` runs the real plugin on the same inputs).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from orchestrator.adapters import opencode
from orchestrator.adapters.base import run_hook
from orchestrator.core.models import Kind
from orchestrator.engine.pipeline import Governor
from orchestrator.sandbox import unwrap
from orchestrator.engine.tools import to_call

DATA = Path(__file__).resolve().parents[1] / "data" / "opencode" / "plugin_calls.jsonl"
DOC_ROOT = "/home/dev/project"
SESSION = "ses_dec17f72fffe7tKpRGmJNVSE4f"


def captured(ws: Path) -> list[dict[str, Any]]:
    """The captured plugin inputs, their paths moved into ``ws``."""
    return [json.loads(line.replace(DOC_ROOT, str(ws))) for line in DATA.read_text().splitlines() if line.strip()]


def plugin_event(entry: dict[str, Any], ws: Path, **extra: Any) -> dict[str, Any]:
    """The event the plugin sends for a captured ``tool.execute.*`` input (see the plugin's ``base``)."""
    inp, out = entry["input"], entry.get("output") or {}
    before = entry["hook"] == "tool.execute.before"
    event = {"hook_event_name": entry["hook"], "tool": inp["tool"], "sessionID": inp["sessionID"],
             "callID": inp["callID"], "args": out["args"] if before else inp["args"], "cwd": str(ws)}
    if not before:
        meta = out.get("metadata") or {}
        event["result"] = {"title": out.get("title"), **{k: meta.get(k, out.get(k)) for k in ("exit", "exists",
                                                                                                  "isError")
                                                          if k in meta or k in out}}
    return {**event, **extra}


def find(entries: list[dict[str, Any]], hook: str, call_id: str) -> dict[str, Any]:
    return next(e for e in entries if e["hook"] == hook and e["input"].get("callID") == call_id)


def hook(event: dict[str, Any], **env: str) -> dict[str, Any]:
    result = run_hook("opencode", json.dumps(event), env=env)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def denied(answer: dict[str, Any]) -> dict[str, Any]:
    reason = answer["deny"]
    return json.loads(reason[reason.index("{"):])


def select(ws: Path, session: str = SESSION) -> None:
    event = {"hook_event_name": opencode.BEFORE, "tool": "orchestrator_select_active_intent", "sessionID": session,
             "callID": "sel", "args": {"intent_id": "INT-1"}, "cwd": str(ws)}
    assert hook(event) == {}


def test_registry_knows_every_tool_opencode_offers() -> None:
    offered = {"bash": Kind.EXEC, "edit": Kind.EDIT, "glob": Kind.META, "grep": Kind.META, "read": Kind.READ,
               "skill": Kind.META, "task": Kind.META, "todowrite": Kind.META, "webfetch": Kind.META,
               "write": Kind.WRITE, "invalid": Kind.META, "apply_patch": Kind.EDIT, "list": Kind.META,
               "websearch": Kind.META, "question": Kind.META, "orchestrator_select_active_intent": Kind.META}
    for tool, kind in offered.items():
        assert to_call(tool, {}).kind is kind, tool
    patch = to_call("apply_patch", {"patchText": "*** Begin Patch\n*** Add File: src/p.py\n+b = 2\n*** End Patch"})
    assert patch.paths == ["src/p.py"]
    assert to_call("edit", {"filePath": "src/a.py", "oldString": "a", "newString": "b"}).paths == ["src/a.py"]
    assert to_call("other_mcp_tool", {}).kind is Kind.UNKNOWN  # unknown tools are never silently safe


def test_write_before_intent_is_refused_then_allowed_and_recorded(ws: Path) -> None:
    entries = captured(ws)
    write = plugin_event(find(entries, "tool.execute.before", "c1"), ws, model="fake/m1")
    assert denied(hook(write))["type"] == "intent-required"
    select(ws)
    assert Governor(ws).sessions.get(SESSION)["intent_id"] == "INT-1"
    assert hook(write) == {}
    (ws / "src" / "new.py").write_text("def f():\n    return 1\n")  # what opencode's write did
    assert hook(plugin_event(find(entries, "tool.execute.after", "c1"), ws, model="fake/m1")) == {}
    record = json.loads((ws / ".orchestration" / "agent_trace.jsonl").read_text().splitlines()[-1])
    conv = record["files"][0]["conversations"][0]
    assert record["files"][0]["path"] == "src/new.py"
    assert [(r["start_line"], r["end_line"]) for r in conv["ranges"]] == [(1, 2)]
    assert conv["contributor"]["model_id"] == "fake/m1"
    meta = record["metadata"]["dev.orchestrator"]
    assert meta["session_id"] == SESSION and meta["agent"] == "opencode" and meta["tool_use_id"] == f"{SESSION}/c1"


def test_edit_records_exact_ranges_from_the_pre_image(ws: Path) -> None:
    entries = captured(ws)
    select(ws)
    assert hook(plugin_event(find(entries, "tool.execute.before", "c2"), ws)) == {}
    (ws / "src" / "app.py").write_text("x = 2\ny = 3\nprint(x)\n")
    assert hook(plugin_event(find(entries, "tool.execute.after", "c2"), ws)) == {}
    record = json.loads((ws / ".orchestration" / "agent_trace.jsonl").read_text().splitlines()[-1])
    ranges = record["files"][0]["conversations"][0]["ranges"]
    assert [(r["start_line"], r["end_line"]) for r in ranges] == [(1, 2)]


def test_bash_workdir_is_the_shells_cwd(ws: Path) -> None:
    entries = captured(ws)
    before = plugin_event(find(entries, "tool.execute.before", "c3"), ws)  # echo z > other.py in workdir src
    call = opencode.call_of(before)
    assert call.cwd == str(ws / "src")
    select(ws)
    answer = hook(before)  # every shell command runs in the sandbox (issue 21): the plugin gets the wrapped command
    assert answer == {} or unwrap(answer["args"]["command"]) == before["args"]["command"], answer
    (ws / "src" / "other.py").write_text("z\n")
    assert hook(plugin_event(find(entries, "tool.execute.after", "c3"), ws)) == {}
    record = json.loads((ws / ".orchestration" / "agent_trace.jsonl").read_text().splitlines()[-1])
    assert record["files"][0]["path"] == "src/other.py"
    # the same write from the project directory, or a workdir outside the scope, is refused
    outside = {**before, "args": {**before["args"], "workdir": "docs"}}
    assert denied(hook(outside))["type"] == "scope-violation"
    escape = {**before, "args": {**before["args"], "workdir": ".."}}
    assert denied(hook(escape))["type"] in ("path-outside-workspace", "scope-violation")


def test_read_stamps_the_file(ws: Path) -> None:
    entries = captured(ws)
    assert hook(plugin_event(find(entries, "tool.execute.before", "c4"), ws)) == {}  # reads need no intent
    assert hook(plugin_event(find(entries, "tool.execute.after", "c4"), ws)) == {}
    assert list(Governor(ws).sessions.get(SESSION)["reads"]) == ["src/app.py"]


def test_governance_and_out_of_scope_writes_are_refused(ws: Path) -> None:
    select(ws)
    base = {"hook_event_name": opencode.BEFORE, "tool": "write", "sessionID": SESSION, "callID": "w",
            "cwd": str(ws)}
    for path, kind in ((".opencode/plugin/orchestrator.js", "governance-file"), ("opencode.json", "governance-file"),
                       (".opencode/tool/mine.ts", "governance-file"), ("README.md", "scope-violation")):
        assert denied(hook({**base, "args": {"filePath": path, "content": "x"}}))["type"] == kind, path
    rm = {**base, "tool": "bash", "args": {"command": "rm -rf src", "description": "clean"}}
    assert denied(hook(rm, ORCH_APPROVAL_CHANNEL="deny"))["hook"] == "approval"


def test_sandboxed_bash_is_rewritten_and_unwrapped_after(ws: Path) -> None:
    from orchestrator.sandbox import unwrap

    select(ws)
    before = {"hook_event_name": opencode.BEFORE, "tool": "bash", "sessionID": SESSION, "callID": "py",
              "cwd": str(ws), "args": {"command": "python3 gen.py", "description": "run it"}}
    answer = hook(before, ORCH_APPROVAL_CHANNEL="deny")
    if "deny" in answer:  # no Landlock here: the approval channel decides, and "deny" refuses
        assert "not sandboxed" in answer["deny"]
        return
    wrapped = answer["args"]["command"]
    assert set(answer["args"]) == {"command"} and unwrap(wrapped) == "python3 gen.py"
    after = {**before, "hook_event_name": opencode.AFTER, "args": {**before["args"], "command": wrapped},
             "result": {"title": "python3 gen.py", "exit": 0}}
    event, sandboxed = opencode.unwrapped(after)
    assert sandboxed and event["args"]["command"] == "python3 gen.py"
    assert hook(after) == {}


def test_subagent_calls_are_governed_by_the_root_session(ws: Path) -> None:
    entries = captured(ws)
    child = find(entries, "tool.execute.before", "s1")
    parent = next(e["input"]["event"]["properties"]["info"] for e in entries
                  if e["hook"] == "event" and "parentID" in e["input"]["event"]["properties"]["info"])
    assert parent["id"] == child["input"]["sessionID"]
    select(ws, parent["parentID"])
    # the plugin sends the root session, and the subagent's own session as "subagent"
    event = plugin_event(child, ws, sessionID=parent["parentID"], subagent=parent["id"])
    assert hook(event) == {}
    assert opencode.call_of(event).agent_id == parent["id"]


def test_mcp_failure_is_not_recorded_and_new_file_is_a_create() -> None:
    assert opencode.tool_result({"isError": True}).failed
    assert opencode.tool_result({"exists": False}).created
    assert not opencode.tool_result({"exit": 3}).failed  # a command that ran may have changed files
    assert not opencode.tool_result(None).failed


def test_session_context_names_opencodes_handshake(ws: Path) -> None:
    text = hook({"hook_event_name": opencode.CONTEXT, "sessionID": SESSION, "cwd": str(ws)})["context"]
    assert "orchestrator_select_active_intent" in text and "mcp__" not in text
    assert "INT-1" in text and ".opencode/, opencode.json" in text


@pytest.mark.parametrize("event", [
    {"hook_event_name": "tool.execute.before", "sessionID": "s", "args": {}},
    {"hook_event_name": "tool.execute.before", "tool": "write", "sessionID": "s", "args": "nope"},
    {"hook_event_name": "session.idle"},
])
def test_malformed_events_block(ws: Path, event: dict[str, Any]) -> None:
    result = run_hook("opencode", json.dumps({**event, "cwd": str(ws)}))
    assert result.exit_code == 2 and "blocked" in result.stderr


@pytest.mark.parametrize("session", [None, "", 7], ids=repr)
def test_an_event_without_a_usable_session_is_refused_not_defaulted(ws: Path, session: object) -> None:
    """The one session rule (orchestrator.state.sessions.session_from): never the shared ``default`` session."""
    Governor(ws).select_intent("INT-1", "default")
    write = plugin_event(find(captured(ws), "tool.execute.before", "c1"), ws)
    write["sessionID"] = session
    assert denied(hook(write))["type"] == "session-required"
