"""Kilo CLI adapter: opencode's plugin events as Kilo 7.7.7 hands them (captured: tests/data/kilo/), governed as
agent ``kilo``; Kilo's ``background_process``; and the rendered plugin run by Node, talking to the launcher as
``kilo``."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from orchestrator.daemon import server as daemon
from orchestrator.adapters import kilo, kilo_setup, opencode
from orchestrator.adapters.base import run_hook
from orchestrator.adapters.managed import KILO_PLUGIN
from orchestrator.core.models import Kind
from orchestrator.engine.pipeline import Governor
from orchestrator.sandbox import unwrap
from orchestrator.engine.tools import to_call
from tests.adapters.test_opencode import denied, plugin_event
from tests.adapters.test_opencode_plugin import NODE, records, run_plugin
from tests.adapters.test_pi import structured_refusal

DATA = Path(__file__).resolve().parents[1] / "data" / "kilo" / "plugin_calls.jsonl"
DOC_ROOT = "/home/dev/project"
#: the session of the first capture (the tools); the second (background_process, task) is BG_SESSION
SESSION = "ses_de02e7f46ffepO0RxJAPXeKko7"
BG_SESSION = "ses_de02c7467ffeicRtpZ9udXwRX8"


def captured(ws: Path) -> list[dict[str, Any]]:
    """The captured Kilo plugin inputs, their paths moved into ``ws``."""
    return [json.loads(line.replace(DOC_ROOT, str(ws))) for line in DATA.read_text().splitlines() if line.strip()]


def find(entries: list[dict[str, Any]], hook: str, call_id: str) -> dict[str, Any]:
    return next(e for e in entries if e["hook"] == hook and e["input"].get("callID") == call_id)


def hook(event: dict[str, Any], **env: str) -> dict[str, Any]:
    result = run_hook("kilo", json.dumps(event), env=env)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def select(ws: Path, session: str = SESSION) -> None:
    event = {"hook_event_name": opencode.BEFORE, "tool": opencode.SELECT_TOOL, "sessionID": session,
             "callID": "sel", "args": {"intent_id": "INT-1"}, "cwd": str(ws)}
    assert hook(event) == {}


def test_registry_knows_every_tool_kilo_offers() -> None:
    offered = {"background_process": Kind.EXEC, "bash": Kind.EXEC, "board_post": Kind.META, "board_read": Kind.META,
               "cancel_wakeup": Kind.META, "edit": Kind.EDIT, "glob": Kind.META, "grep": Kind.META,
               "kilo_local_recall": Kind.META, "list_mcp_resource_templates": Kind.META,
               "list_mcp_resources": Kind.META, "orchestrator_list_intents": Kind.META,
               "orchestrator_record_lesson": Kind.META, "orchestrator_select_active_intent": Kind.META,
               "read": Kind.READ, "read_mcp_resource": Kind.META, "schedule_wakeup": Kind.META, "skill": Kind.META,
               "task": Kind.META, "todowrite": Kind.META, "webfetch": Kind.META, "write": Kind.WRITE,
               "apply_patch": Kind.EDIT}
    for tool, kind in offered.items():
        assert to_call(tool, {}).kind is kind, tool


def test_the_captured_calls_are_governed_and_recorded_as_kilo(ws: Path) -> None:
    entries = captured(ws)
    write = plugin_event(find(entries, "tool.execute.before", "c1"), ws, model="fake/m1")
    assert denied(hook(write))["type"] == "intent-required"
    select(ws)
    assert Governor(ws).sessions.get(SESSION)["intent_id"] == "INT-1"
    assert hook(write) == {}
    (ws / "src" / "new.py").write_text("def f():\n    return 1\n")  # what Kilo's write did
    assert hook(plugin_event(find(entries, "tool.execute.after", "c1"), ws, model="fake/m1")) == {}
    [record] = records(ws)
    meta = record["metadata"]["dev.orchestrator"]
    assert meta["agent"] == "kilo" and meta["session_id"] == SESSION and meta["tool_use_id"] == f"{SESSION}/c1"
    assert record["files"][0]["conversations"][0]["contributor"]["model_id"] == "fake/m1"


def test_background_process_start_is_a_shell_command_in_its_workdir(ws: Path) -> None:
    entries = captured(ws)
    start = plugin_event(find(entries, "tool.execute.before", "b1"), ws)
    call = opencode.call_of(start, kilo.KILO)
    assert call.kind is Kind.EXEC and call.command == "echo ORIGINAL; sleep 30" and call.cwd == str(ws / "src")
    listing = plugin_event(find(entries, "tool.execute.before", "b2"), ws)
    assert opencode.call_of(listing, kilo.KILO).kind is Kind.META
    assert hook(listing) == {}  # no intent needed to list processes
    select(ws, BG_SESSION)
    answer = hook(start, ORCH_APPROVAL_CHANNEL="deny")
    assert answer == {} or unwrap(answer["args"]["command"]) == start["args"]["command"], answer
    out = {**start, "args": {**start["args"], "command": "echo q > notes.txt", "workdir": "docs"}}
    assert denied(hook(out))["type"] == "scope-violation"  # the workdir escape, as bash's


def test_a_sandboxed_background_process_is_unwrapped_after(ws: Path) -> None:
    select(ws)
    before = {"hook_event_name": opencode.BEFORE, "tool": "background_process", "sessionID": SESSION, "callID": "bg",
              "cwd": str(ws), "args": {"action": "start", "command": "python3 serve.py", "workdir": "src"}}
    answer = hook(before, ORCH_APPROVAL_CHANNEL="deny")
    if "deny" in answer:  # no Landlock here: the approval channel decides, and "deny" refuses
        assert "not sandboxed" in answer["deny"]
        return
    wrapped = answer["args"]["command"]
    assert set(answer["args"]) == {"command"} and unwrap(wrapped) == "python3 serve.py"
    after = {**before, "hook_event_name": opencode.AFTER, "args": {**before["args"], "command": wrapped},
             "result": {"title": "Started"}}
    event, sandboxed = opencode.unwrapped(after)
    assert sandboxed and event["args"]["command"] == "python3 serve.py"
    assert hook(after) == {}


def test_kilo_files_are_refused_and_named_in_the_mandate(ws: Path) -> None:
    select(ws)
    base = {"hook_event_name": opencode.BEFORE, "tool": "write", "sessionID": SESSION, "callID": "w", "cwd": str(ws)}
    for path in (KILO_PLUGIN, "kilo.json", ".kilocode/plugin/x.js", "src/.kilo/plugin/x.js", "opencode.json"):
        assert denied(hook({**base, "args": {"filePath": path, "content": "x"}}))["type"] == "governance-file", path
    text = hook({"hook_event_name": opencode.CONTEXT, "sessionID": SESSION, "cwd": str(ws)})["context"]
    assert "orchestrator_select_active_intent" in text and ".kilo/" in text and "kilo.json" in text


@pytest.mark.parametrize("event, missing", [
    ({"hook_event_name": "tool.execute.before", "sessionID": "s", "args": {}}, "tool"),
    ({"hook_event_name": "tool.execute.before", "tool": "write", "sessionID": "s", "args": "nope"}, "args"),
    ({"hook_event_name": "tool.execute.after", "tool": ["write"], "sessionID": "s", "args": {}}, "tool"),
    ({"hook_event_name": "session.idle"}, "hook_event_name"),
])
def test_malformed_events_get_a_structured_refusal_naming_kilo(ws: Path, event: dict[str, Any], missing: str) -> None:
    error = structured_refusal(run_hook("kilo", json.dumps({**event, "cwd": str(ws)})))
    assert error["type"] == "malformed-call" and error["agent"] == "kilo" and error["missing"] == missing, error


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_rendered_plugin_asks_as_kilo(ws: Path) -> None:
    """The same template as opencode's, rendered for Kilo: its requests name agent ``kilo`` (the launcher runs the
    Kilo adapter), so the records say ``kilo``."""
    kilo_setup.install(ws)
    try:
        text = (ws / KILO_PLUGIN).read_text()
        assert 'const AGENT = "kilo"' in text and "@ORCH_AGENT@" not in text and "@orch-include" not in text
        entries = captured(ws)
        steps = [find(entries, "tool.execute.before", "c5"), find(entries, "tool.execute.before", "c1")]
        results = run_plugin(ws, steps, plugin=KILO_PLUGIN, ORCH_NO_DAEMON="1")
        assert [r["ok"] for r in results] == [True, True], results
        (ws / "src" / "new.py").write_text("def f():\n    return 1\n")
        [after] = run_plugin(ws, [find(entries, "tool.execute.after", "c1")], plugin=KILO_PLUGIN, ORCH_NO_DAEMON="1")
        assert after["ok"]
        assert [r["metadata"]["dev.orchestrator"]["agent"] for r in records(ws)] == ["kilo"]
    finally:
        daemon.stop(ws)
