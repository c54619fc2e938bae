"""The real pi extension (``.pi/extensions/orchestrator.js``), run by Node on the events pi 1.6.0 gave an extension
(tests/data/pi/), against the real launcher and daemon: it answers through one of them, blocks (``{block: true,
reason}``) on a refusal, whenever neither answers and on any error, rewrites a sandboxed command in
``event.input``, and appends orchestrator's warning to a tool's result.

pi runs extensions in its own Node process (through jiti); the extension uses only ``node:`` modules, so a plain Node
runs it the same way, with a stand-in for pi's ``ExtensionAPI`` (``pi.on``) and context (``cwd``,
``sessionManager.getSessionId()``, ``model``). Skipped without ``node`` (CI has it: the e2e tests need npm).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orchestrator.daemon import server as daemon
from orchestrator.adapters import installer, pi_setup
from orchestrator.adapters.managed import PI_EXTENSION
from tests.adapters.test_opencode_plugin import NODE, REPO_ROOT, records, run_plugin
from tests.adapters.test_pi import CODEMODE_SESSION, SESSION, captured
from tests.waiting import wait_until

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

#: loads the extension with a stand-in ``pi``, runs one handler per step (JSON lines on stdin), prints its result
DRIVER = """
import { readFileSync } from "node:fs"
import { pathToFileURL } from "node:url"
const [extension, root] = process.argv.slice(2)
const handlers = {}
const pi = { on: (name, handler) => { (handlers[name] ||= []).push(handler) } }
;(await import(pathToFileURL(extension).href)).default(pi)
for (const line of readFileSync(0, "utf8").split("\\n").filter(Boolean)) {
  const { hook, event, cwd, session, model } = JSON.parse(line)
  const ctx = { cwd: cwd || root, model,
                sessionManager: session === undefined ? undefined : { getSessionId: () => session } }
  try {
    const result = await handlers[hook][0](event, ctx)
    console.log(JSON.stringify({ ok: true, result: result ?? null, event }))
  } catch (exc) {
    console.log(JSON.stringify({ ok: false, error: String(exc && exc.message) }))
  }
}
"""


@pytest.fixture
def installed(ws: Path) -> Path:
    pi_setup.install(ws)
    yield ws
    daemon.stop(ws)


def run(ws: Path, steps: list[dict[str, Any]], **env: str) -> list[dict[str, Any]]:
    return run_plugin(ws, steps, plugin=PI_EXTENSION, driver_text=DRIVER, **env)


def step(entries: list[dict[str, Any]], hook: str, call_id: str) -> dict[str, Any]:
    """A captured handler call (``tool_result`` ones take the session and model of their ``tool_call``)."""
    call = next(e for e in entries if e["hook"] == "tool_call" and e["event"]["toolCallId"] == call_id)
    entry = next(e for e in entries if e["hook"] == hook and e["event"]["toolCallId"] == call_id)
    return {"hook": hook, "event": entry["event"], "cwd": call["cwd"], "session": call["session"],
            "model": call["model"]}


def test_through_the_launcher_refuses_selects_and_records(installed: Path) -> None:
    ws = installed
    entries = captured(ws)
    write = step(entries, "tool_call", "c1")
    select = step(entries, "tool_call", "c5")  # mcp__orchestrator__select_active_intent
    results = run(ws, [write, select, write], ORCH_NO_DAEMON="1")
    assert all(r["ok"] for r in results), results  # a handler never throws: it answers
    refused, selected, allowed = (r["result"] for r in results)
    assert refused["block"] is True and refused["reason"].startswith("[orchestrator:intent-required]")
    assert selected is None and allowed is None
    (ws / "src" / "new.py").write_text("def f():\n    return 1\n")
    [after] = run(ws, [step(entries, "tool_result", "c1")], ORCH_NO_DAEMON="1")
    assert after["ok"] and after["result"] is None
    [record] = records(ws)
    meta = record["metadata"]["dev.orchestrator"]
    assert meta["agent"] == "pi" and meta["session_id"] == SESSION and meta["tool_use_id"] == f"{SESSION}/c1"
    assert record["files"][0]["conversations"][0]["contributor"]["model_id"] == "fake/m1"


def test_a_codemode_scripts_calls_are_each_governed(installed: Path) -> None:
    ws = installed
    entries = captured(ws)
    nested = step(entries, "tool_call", "m1/1")  # tools.write from the script
    assert nested["event"]["parentToolCallId"] == "m1"
    results = run(ws, [step(entries, "tool_call", "m1"), nested, step(entries, "tool_call", "m1/4"), nested],
                  ORCH_NO_DAEMON="1")
    assert [r["result"] and r["result"]["block"] for r in results] == [None, True, None, None], results
    assert "[orchestrator:intent-required]" in results[1]["result"]["reason"]
    from orchestrator.engine.pipeline import Governor

    assert Governor(ws).sessions.get(CODEMODE_SESSION)["intent_id"] == "INT-1"


def test_a_sandboxed_command_is_rewritten_in_event_input(installed: Path) -> None:
    from orchestrator.sandbox import unwrap

    ws = installed
    entries = captured(ws)
    bash = {"hook": "tool_call", "session": SESSION, "event": {
        "type": "tool_call", "toolName": "bash", "toolCallId": "b1", "input": {"command": "python3 gen.py",
                                                                               "timeout": 9}}}
    select, result = run(ws, [step(entries, "tool_call", "c5"), bash], ORCH_NO_DAEMON="1",
                         ORCH_APPROVAL_CHANNEL="deny")
    assert select["result"] is None
    if result["result"] is not None:  # no Landlock on this machine: the approval channel "deny" refuses it
        assert "not sandboxed" in result["result"]["reason"]
        return
    assert unwrap(result["event"]["input"]["command"]) == "python3 gen.py"
    assert result["event"]["input"]["timeout"] == 9  # the other arguments are kept


def test_through_the_daemon_socket(installed: Path) -> None:
    ws = installed
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "serve", "--root", str(ws)],
                            env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "ORCH_DAEMON_IDLE": "30"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(lambda: daemon.is_alive(daemon.socket_path(ws)) or proc.poll() is not None,
               what="the daemon to answer on its socket")
    assert proc.poll() is None, f"orch serve exited (socket path {len(str(daemon.socket_path(ws)))} bytes)"
    # a launcher that would fail every call: an answer proves the daemon gave it
    (ws / installer.LAUNCHER).write_text("#!/bin/sh\nexit 1\n")
    entries = captured(ws)
    governance = {"hook": "tool_call", "session": SESSION, "event": {
        "type": "tool_call", "toolName": "edit", "toolCallId": "g1",
        "input": {"path": PI_EXTENSION, "edits": [{"oldText": "block: true", "newText": "block: false"}]}}}
    try:
        results = run(ws, [step(entries, "tool_call", "c5"), step(entries, "tool_call", "c1"), governance])
        assert [r["result"] for r in results[:2]] == [None, None], results
        assert "[orchestrator:governance-file]" in results[2]["result"]["reason"]
    finally:
        daemon.stop(ws)
        proc.wait(timeout=60)


def test_fails_closed_when_neither_daemon_nor_launcher_answers(installed: Path) -> None:
    ws = installed
    entries = captured(ws)
    (ws / installer.LAUNCHER).unlink()
    context = {"hook": "before_agent_start", "session": SESSION, "event": {"systemPrompt": "base"}}
    results = run(ws, [step(entries, "tool_call", "c7"), step(entries, "tool_call", "c1"), context])
    assert all(r["ok"] for r in results)
    for r in results[:2]:  # even a read: orchestrator must see every call
        assert r["result"]["block"] is True and "missing or not executable" in r["result"]["reason"]
        assert "fail closed" in r["result"]["reason"]
    assert results[2]["result"] is None  # the mandate is advice: no context, but no crash either


def test_a_crashing_launcher_or_a_broken_context_blocks(installed: Path) -> None:
    ws = installed
    entries = captured(ws)
    write = step(entries, "tool_call", "c1")
    (ws / installer.LAUNCHER).write_text("#!/bin/sh\necho boom >&2\nexit 1\n")
    [result] = run(ws, [write], ORCH_NO_DAEMON="1")
    assert result["result"]["block"] and "failed (exit 1)" in result["result"]["reason"]
    assert "boom" in result["result"]["reason"]
    (ws / installer.LAUNCHER).write_text("#!/bin/sh\necho not-json\n")
    [result] = run(ws, [write], ORCH_NO_DAEMON="1")
    assert result["result"]["block"] and "unreadable answer" in result["result"]["reason"]
    # a context without its session manager (a pi whose API changed): the event has no session, refused
    pi_setup.install(ws)
    no_manager = {k: v for k, v in write.items() if k != "session"}  # ctx.sessionManager.getSessionId() throws
    [result] = run(ws, [no_manager], ORCH_NO_DAEMON="1")
    assert result["result"]["block"] and "[orchestrator:session-required]" in result["result"]["reason"]


def test_the_mandate_joins_the_system_prompt_and_a_warning_the_result(installed: Path) -> None:
    ws = installed
    entries = captured(ws)
    context = {"hook": "before_agent_start", "session": SESSION, "event": {"systemPrompt": "pi's own prompt"}}
    [answer] = run(ws, [context], ORCH_NO_DAEMON="1")
    prompt = answer["result"]["systemPrompt"]
    assert prompt.startswith("pi's own prompt\n\n") and "mcp__orchestrator__select_active_intent" in prompt
    # a launcher that answers with a warning: the extension appends it to what the model reads, keeping the rest
    (ws / installer.LAUNCHER).write_text("#!/bin/sh\necho '{\"warning\": \"[orchestrator:out-of-scope] W\"}'\n")
    [result] = run(ws, [step(entries, "tool_result", "c3")], ORCH_NO_DAEMON="1")
    patch = result["result"]
    assert patch["content"][0]["text"] == "REPLACED\n"
    assert "[orchestrator:out-of-scope] W" in patch["content"][-1]["text"]
    assert patch["structuredContent"]["exit_code"] == 0
