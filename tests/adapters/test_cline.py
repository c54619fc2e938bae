"""The Cline adapter on the hook contexts Cline 3.0.65 really handed a plugin (tests/data/cline/plugin.jsonl, captured
by tests/data/capture_hosts.py), turned into the events orchestrator's plugin sends (``plugin_event``, the plugin's
``toolEvent`` in Python; tests/adapters/test_cline_plugin.py runs the real plugin), through ``run_hook`` in a real
governed workspace: every entry of a ``run_commands`` list governed, ``read_files`` checked per file, subagents,
``apply_patch``, the sandbox rewrite, and events bent into shapes Cline never sent (refused, never allowed)."""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from orchestrator.adapters import cline
from orchestrator.adapters.base import run_hook
from orchestrator.core.models import Kind
from orchestrator.engine.pipeline import Governor
from orchestrator.sandbox import landlock, unwrap
from orchestrator.engine.tools import to_call

DATA = Path(__file__).resolve().parents[1] / "data" / "cline" / "plugin.jsonl"
DOC_ROOT = "/home/dev/project"
SESSION = "1795831611000_abcde"


def captured(ws: Path) -> list[dict[str, Any]]:
    return [json.loads(line.replace(DOC_ROOT, str(ws))) for line in DATA.read_text().splitlines() if line]


def find(entries: list[dict[str, Any]], hook: str, call_id: str) -> dict[str, Any]:
    return copy.deepcopy(next(e for e in entries if e["hook"] == hook and
                              (e["ctx"].get("toolCall") or {}).get("toolCallId") == call_id))


def plugin_event(entry: dict[str, Any], ws: Path, session: str = SESSION) -> dict[str, Any]:
    """The event orchestrator's plugin sends for a captured context (cline-plugin.js ``toolEvent``/``resultOf``)."""
    ctx = entry["ctx"]
    call, snapshot = ctx["toolCall"], ctx["snapshot"]
    event = {"hook_event_name": entry["hook"], "tool": call["toolName"], "toolCallId": call["toolCallId"],
             "input": ctx["input"], "sessionID": session, "agentId": snapshot["agentId"], "cwd": str(ws),
             "model": call["metadata"]["toolSource"]["modelId"]}
    if snapshot.get("parentAgentId"):
        event["parentAgentId"] = snapshot["parentAgentId"]
    if entry["hook"] == "afterTool":
        result = ctx["result"]
        output = result.get("output")

        def ok(e: Any) -> dict[str, Any]:
            return {"success": e.get("success")} if isinstance(e, dict) and isinstance(e.get("success"), bool) else {}

        event["result"] = {"isError": bool(result.get("isError")),
                           "output": [ok(e) for e in output] if isinstance(output, list) else ok(output)}
    return event


def hook(event: dict[str, Any], **env: str) -> dict[str, Any]:
    result = run_hook("cline", json.dumps(event), env=env)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def refused(answer: dict[str, Any], key: str = "skip") -> dict[str, Any]:
    reason = answer[key]
    return json.loads(reason[reason.index("{"):])


def select(ws: Path, entries: list[dict[str, Any]], session: str = SESSION) -> None:
    assert hook(plugin_event(find(entries, "beforeTool", "c_select"), ws, session)) == {}


def records(ws: Path) -> list[dict[str, Any]]:
    path = ws / ".orchestration" / "agent_trace.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_registry_knows_every_tool_cline_offers() -> None:
    offered = {"editor": Kind.EDIT, "apply_patch": Kind.EDIT, "run_commands": Kind.EXEC, "read_files": Kind.READ,
               "search_codebase": Kind.META, "fetch_web_content": Kind.META, "ask_question": Kind.META,
               "spawn_agent": Kind.META, "team_run_task": Kind.META, "team_status": Kind.META,
               cline.SELECT_TOOL: Kind.META}
    for tool, kind in offered.items():
        assert to_call(tool, {}).kind is kind, tool
    assert to_call("apply_patch", {"input": "*** Begin Patch\n*** Add File: src/p.py\n+p\n*** End Patch"}).paths == \
        ["src/p.py"]
    assert to_call("orchestrator__other", {}).kind is Kind.UNKNOWN


def test_editor_write_refused_before_intent_then_allowed_and_recorded(ws: Path) -> None:
    entries = captured(ws)
    write = plugin_event(find(entries, "beforeTool", "c_write"), ws)
    assert refused(hook(write))["type"] == "intent-required"
    select(ws, entries)
    assert Governor(ws).sessions.get(SESSION)["intent_id"] == "INT-1"
    assert hook(write) == {}
    (ws / "src" / "new.py").write_text("a = 1\n")
    assert hook(plugin_event(find(entries, "afterTool", "c_write"), ws)) == {}
    [record] = records(ws)
    meta = record["metadata"]["dev.orchestrator"]
    assert record["files"][0]["path"] == "src/new.py" and meta["agent"] == "cline"
    assert meta["tool_use_id"] == f"{SESSION}/c_write" and meta["files"][0]["op"] == "create"
    assert record["files"][0]["conversations"][0]["contributor"]["model_id"] == "scripted-1"


def test_a_failed_edit_and_a_skipped_call_record_nothing(ws: Path) -> None:
    entries = captured(ws)
    select(ws, entries)
    assert hook(plugin_event(find(entries, "beforeTool", "c_edit_fails"), ws)) == {}
    assert hook(plugin_event(find(entries, "afterTool", "c_edit_fails"), ws)) == {}
    assert hook(plugin_event(find(entries, "afterTool", "c_skipped"), ws)) == {}
    assert not (ws / ".orchestration" / "agent_trace.jsonl").read_text().strip()


def test_every_entry_of_run_commands_is_governed_and_recorded(ws: Path) -> None:
    entries = captured(ws)
    select(ws, entries)
    before = plugin_event(find(entries, "beforeTool", "c_shell"), ws)  # echo z > src/other.txt, false
    answer = hook(before)
    wrapped = answer.get("input", {}).get("commands", before["input"]["commands"])
    assert [unwrap(c) or c for c in wrapped] == before["input"]["commands"]
    (ws / "src" / "other.txt").write_text("z\n")
    after = plugin_event(find(entries, "afterTool", "c_shell"), ws)
    after["input"] = {"commands": wrapped}
    assert hook(after) == {}
    [record] = records(ws)
    meta = record["metadata"]["dev.orchestrator"]
    assert record["files"][0]["path"] == "src/other.txt" and meta["tool_use_id"] == f"{SESSION}/c_shell#0"
    assert "orch-sandbox" not in json.dumps(record)


def test_one_refused_entry_refuses_the_whole_list_naming_it(ws: Path) -> None:
    entries = captured(ws)
    select(ws, entries)
    before = plugin_event(find(entries, "beforeTool", "c_shell"), ws)
    before["input"]["commands"] = ["echo z > src/other.txt", "echo h > README.md", "rm -rf src"]
    error = refused(hook(before))
    assert error["type"] == "scope-violation" and error["entry"] == 2
    assert "command 2 of 3" in error["message"] and "none of the 3 was run" in error["message"]
    assert not Governor(ws).sessions.get(SESSION).get("leases")


@pytest.mark.skipif(landlock.abi() < 1, reason="no Landlock on this kernel: nothing is wrapped")
def test_a_script_runs_in_the_sandbox_through_input_rewriting(ws: Path) -> None:
    entries = captured(ws)
    select(ws, entries)
    before = plugin_event(find(entries, "beforeTool", "c_shell"), ws)
    before["input"]["commands"] = ["python3 src/tool.py"]
    answer = hook(before)
    [command] = answer["input"]["commands"]
    assert unwrap(command) == "python3 src/tool.py"


def test_read_files_are_each_checked_for_secrets(ws: Path) -> None:
    entries = captured(ws)
    before = plugin_event(find(entries, "beforeTool", "c_read"), ws)
    assert hook(before) == {}  # reads need no intent
    (ws / ".env").write_text("TOKEN=1\n")
    before["input"]["files"].append({"path": ".env"})
    assert refused(hook(before))["type"] == "secret-read"


def test_apply_patch_targets_are_governed(ws: Path) -> None:
    entries = captured(ws)
    select(ws, entries)
    patch = plugin_event(find(entries, "beforeTool", "c_patch"), ws)
    assert hook(patch) == {}
    patch["input"]["input"] = "*** Begin Patch\n*** Add File: docs/p.md\n+out\n*** End Patch"
    assert refused(hook(patch))["type"] == "scope-violation"
    patch["input"]["input"] = "*** Begin Patch\n*** End Patch"  # names no file: refused, never allowed
    assert refused(hook(patch))["type"] == "malformed-call"


def test_a_subagents_calls_are_governed_by_the_sessions_intent_and_attributed(ws: Path) -> None:
    entries = captured(ws)
    select(ws, entries)
    sub = plugin_event(find(entries, "beforeTool", "c_sub"), ws)
    assert sub["parentAgentId"] and hook(sub) == {}
    (ws / "src" / "sub.py").write_text("s = 1\n")
    assert hook(plugin_event(find(entries, "afterTool", "c_sub"), ws)) == {}
    meta = records(ws)[-1]["metadata"]["dev.orchestrator"]
    assert meta["agent_id"] == sub["agentId"] and meta["session_id"] == SESSION


def test_an_ask_is_handed_to_clines_own_approval(ws: Path) -> None:
    entries = captured(ws)
    select(ws, entries)
    before = plugin_event(find(entries, "beforeTool", "c_shell"), ws)
    before["input"]["commands"] = ["git push --force origin main"]
    answer = hook(before, ORCH_APPROVAL_CHANNEL="agent-ask")
    assert refused(answer, "ask")["type"] == "approval-required"


def test_context_names_clines_handshake(ws: Path) -> None:
    answer = hook({"hook_event_name": "session.context", "sessionID": SESSION, "cwd": str(ws)})
    assert "orchestrator__select_active_intent" in answer["context"] and "run_commands" in answer["context"]


def _mutations(entries: list[dict[str, Any]], ws: Path) -> list[tuple[str, dict[str, Any], str]]:
    before = plugin_event(find(entries, "beforeTool", "c_shell"), ws)
    out: list[tuple[str, dict[str, Any], str]] = []
    for key in ("tool", "input", "sessionID", "cwd", "toolCallId", "hook_event_name"):
        e = copy.deepcopy(before)
        del e[key]
        out.append((f"no {key}", e, key))
    out.append(("commands a string", {**before, "input": {"commands": "echo x"}}, "commands"))
    out.append(("commands missing", {**before, "input": {"command": "echo x"}}, "commands"))
    out.append(("an entry an object", {**before, "input": {"commands": ["ls", {"cmd": "rm -rf /"}]}}, "commands[1]"))
    out.append(("renamed event", {**before, "hook_event_name": "preTool"}, "hook_event_name"))
    read = plugin_event(find(entries, "beforeTool", "c_read"), ws)
    out.append(("a file without a path", {**read, "input": {"files": [{"file": "x"}]}}, "path"))
    after = plugin_event(find(entries, "afterTool", "c_write"), ws)
    del after["result"]
    out.append(("after without a result", after, "result"))
    return out


def test_malformed_events_are_refused_naming_the_agent_and_the_field(ws: Path) -> None:
    entries = captured(ws)
    select(ws, entries)
    for label, event, missing in _mutations(entries, ws):
        result = run_hook("cline", json.dumps(event))
        assert result.exit_code == 2 and not result.stdout, label  # the plugin turns exit 2 into a skip
        error = json.loads(result.stderr[result.stderr.index("{"):])
        assert error["type"] == "malformed-call" and error["agent"] == "cline" and error["missing"] == missing, \
            (label, error)
    assert not (ws / ".orchestration" / "agent_trace.jsonl").read_text().strip()
