"""The real opencode plugin (``.opencode/plugin/orchestrator.js``), run by Node on the inputs opencode 1.18.33 gave a
plugin (tests/data/opencode/), against the real launcher and daemon: it answers through one of them, blocks (throws)
on a refusal and whenever neither answers, and rewrites a sandboxed command in ``output.args``.

opencode runs plugins in its embedded Bun; the plugin uses only ``node:`` modules, so Node runs it the same way.
Skipped without ``node`` (CI has it: the e2e tests need npm).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orchestrator.daemon import server as daemon
from orchestrator.adapters import installer, opencode_setup
from orchestrator.adapters.managed import OPENCODE_PLUGIN
from tests.adapters.test_opencode import captured, find
from tests.waiting import wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

#: runs the plugin's hooks on the steps (JSON lines on stdin), printing one result line per step
DRIVER = """
import { readFileSync } from "node:fs"
import { pathToFileURL } from "node:url"
const [plugin, root] = process.argv.slice(2)
const hooks = await (await import(pathToFileURL(plugin).href)).OrchestratorPlugin({ directory: root, worktree: root })
for (const line of readFileSync(0, "utf8").split("\\n").filter(Boolean)) {
  const { hook, input, output } = JSON.parse(line)
  try {
    await hooks[hook](input, output)
    console.log(JSON.stringify({ ok: true, output: output ?? null }))
  } catch (exc) {
    console.log(JSON.stringify({ ok: false, error: String(exc && exc.message), isError: exc instanceof Error }))
  }
}
"""


@pytest.fixture
def installed(ws: Path) -> Path:
    opencode_setup.install(ws)
    yield ws
    daemon.stop(ws)


def run_plugin(ws: Path, steps: list[dict[str, Any]], plugin: str = OPENCODE_PLUGIN, driver_text: str = DRIVER,
               **env: str) -> list[dict[str, Any]]:
    """Run the installed ``plugin``'s hooks on ``steps`` in one Node process (``driver_text``); one result each."""
    driver = ws.parent / "driver.mjs"
    driver.write_text(driver_text)
    full = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "ORCH_DAEMON_IDLE": "30", **env}
    proc = subprocess.run([NODE, str(driver), str(ws / plugin), str(ws)], cwd=ws, env=full,
                          input="\n".join(json.dumps(s) for s in steps), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(results) == len(steps), proc.stdout + proc.stderr
    return results


def select_step(session: str) -> dict[str, Any]:
    return {"hook": "tool.execute.before", "input": {"tool": "orchestrator_select_active_intent",
                                                     "sessionID": session, "callID": "sel"},
            "output": {"args": {"intent_id": "INT-1"}}}


def records(ws: Path) -> list[dict[str, Any]]:
    path = ws / ".orchestration" / "agent_trace.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def test_through_the_launcher_refuses_selects_and_records(installed: Path) -> None:
    ws = installed
    entries = captured(ws)
    write, written = find(entries, "tool.execute.before", "c1"), find(entries, "tool.execute.after", "c1")
    session = write["input"]["sessionID"]
    steps = [entries[1], write, select_step(session), write]  # chat.params (model), refused, select, allowed
    results = run_plugin(ws, steps, ORCH_NO_DAEMON="1")
    assert [r["ok"] for r in results] == [True, False, True, True]
    assert results[1]["isError"] and "[orchestrator:intent-required]" in results[1]["error"]
    (ws / "src" / "new.py").write_text("def f():\n    return 1\n")
    after = run_plugin(ws, [entries[1], written], ORCH_NO_DAEMON="1")
    assert after[1]["ok"]
    [record] = records(ws)
    assert record["files"][0]["path"] == "src/new.py"
    assert record["files"][0]["conversations"][0]["contributor"]["model_id"] == "fake/m1"


def test_a_sandboxed_command_is_rewritten_in_output_args(installed: Path) -> None:
    from orchestrator.sandbox import unwrap

    ws = installed
    session = "ses_sandbox"
    bash = {"hook": "tool.execute.before", "input": {"tool": "bash", "sessionID": session, "callID": "b1"},
            "output": {"args": {"command": "python3 gen.py", "description": "run", "workdir": "src"}}}
    select, result = run_plugin(ws, [select_step(session), bash], ORCH_NO_DAEMON="1", ORCH_APPROVAL_CHANNEL="deny")
    assert select["ok"]
    if not result["ok"]:  # no Landlock on this machine: the approval channel "deny" refuses it
        assert "not sandboxed" in result["error"]
        return
    args = result["output"]["args"]
    assert unwrap(args["command"]) == "python3 gen.py"
    assert args["workdir"] == "src" and args["description"] == "run"  # the other arguments are kept


def test_through_the_daemon_socket(installed: Path) -> None:
    ws = installed
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "serve", "--root", str(ws)],
                            env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "ORCH_DAEMON_IDLE": "30"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(lambda: daemon.is_alive(daemon.socket_path(ws)) or proc.poll() is not None,
               what="the daemon to answer on its socket")
    # a Unix socket path is at most 107 bytes: a deep TMPDIR keeps any daemon from binding
    assert proc.poll() is None, f"orch serve exited (socket path {len(str(daemon.socket_path(ws)))} bytes)"
    # a launcher that would fail every call: an answer proves the daemon gave it
    (ws / installer.LAUNCHER).write_text("#!/bin/sh\nexit 1\n")
    session = "ses_daemon"
    write = {"hook": "tool.execute.before", "input": {"tool": "write", "sessionID": session, "callID": "w1"},
             "output": {"args": {"filePath": "src/d.py", "content": "d = 1\n"}}}
    governance = {"hook": "tool.execute.before", "input": {"tool": "edit", "sessionID": session, "callID": "w2"},
                  "output": {"args": {"filePath": "opencode.json", "oldString": "{", "newString": "{ "}}}
    try:
        results = run_plugin(ws, [select_step(session), write, governance])
        assert [r["ok"] for r in results] == [True, True, False], results
        assert "[orchestrator:governance-file]" in results[2]["error"]
        assert daemon.is_alive(daemon.socket_path(ws))
    finally:
        daemon.stop(ws)
        proc.wait(timeout=60)


def test_fails_closed_when_neither_daemon_nor_launcher_answers(installed: Path) -> None:
    ws = installed
    entries = captured(ws)
    read, write = find(entries, "tool.execute.before", "c4"), find(entries, "tool.execute.before", "c1")
    (ws / installer.LAUNCHER).unlink()
    context = {"hook": "experimental.chat.system.transform", "input": {"sessionID": "s"},
               "output": {"system": []}}
    results = run_plugin(ws, [read, write, context])
    assert [r["ok"] for r in results] == [False, False, True]  # even a read: orchestrator must see every call
    assert all("missing or not executable" in r["error"] and "fail closed" in r["error"] for r in results[:2])
    assert results[2]["output"]["system"] == []  # the mandate is advice: no context, but no crash either


def test_a_crashing_launcher_blocks(installed: Path) -> None:
    ws = installed
    (ws / installer.LAUNCHER).write_text("#!/bin/sh\necho boom >&2\nexit 1\n")
    entries = captured(ws)
    [result] = run_plugin(ws, [find(entries, "tool.execute.before", "c1")], ORCH_NO_DAEMON="1")
    assert not result["ok"] and "failed (exit 1)" in result["error"] and "boom" in result["error"]
    (ws / installer.LAUNCHER).write_text("#!/bin/sh\necho not-json\n")
    [result] = run_plugin(ws, [find(entries, "tool.execute.before", "c1")], ORCH_NO_DAEMON="1")
    assert not result["ok"] and "unreadable answer" in result["error"]


def test_subagent_calls_carry_the_root_session(installed: Path) -> None:
    ws = installed
    entries = captured(ws)
    created = [e for e in entries if e["hook"] == "event"]
    child = find(entries, "tool.execute.before", "s1")
    root_session = created[0]["input"]["event"]["properties"]["info"]["id"]
    results = run_plugin(ws, [*created, select_step(root_session), child], ORCH_NO_DAEMON="1")
    assert all(r["ok"] for r in results), results  # the child's write is governed by the root's intent
