"""The real Cline plugin (``.cline/plugins/orchestrator.js``), run by Node on the hook contexts Cline 3.0.65 handed a
plugin (tests/data/cline/plugin.jsonl), against the real launcher and daemon: it refuses by skipping (never by
throwing: a throw fails Cline's whole run), skips whenever orchestrator cannot answer in time, rewrites a sandboxed
command in ``input`` and hands an ask to Cline's own approval.

Cline runs plugins in a Bun subprocess; the plugin uses only ``node:`` modules, so Node runs it the same way.
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
from orchestrator.adapters import cline_setup, installer
from orchestrator.adapters.managed import CLINE_PLUGIN
from orchestrator.sandbox import landlock, unwrap
from tests.adapters.test_cline import captured, find, records
from tests.waiting import wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")
SESSION = "1795831611000_plugin"

#: sets the plugin up as Cline does, then runs its hooks on the steps (JSON lines on stdin), one result line each
DRIVER = """
import { readFileSync } from "node:fs"
import { pathToFileURL } from "node:url"
const [plugin, root, session] = process.argv.slice(2)
const mod = (await import(pathToFileURL(plugin).href)).default
mod.setup({}, { session: { sessionId: session }, workspaceInfo: { rootPath: root } })
for (const line of readFileSync(0, "utf8").split("\\n").filter(Boolean)) {
  const { hook, ctx } = JSON.parse(line)
  try {
    const out = await mod.hooks[hook](ctx)
    console.log(JSON.stringify({ ok: true, out: out ?? null }))
  } catch (exc) {
    console.log(JSON.stringify({ ok: false, error: String(exc && exc.message) }))
  }
}
"""


@pytest.fixture
def installed(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the user-level MCP entry goes to a throw-away HOME
    cline_setup.install(ws)
    yield ws
    daemon.stop(ws)


def run_plugin(ws: Path, steps: list[dict[str, Any]], **env: str) -> list[dict[str, Any]]:
    driver = ws.parent / "driver.mjs"
    driver.write_text(DRIVER)
    # a cold launcher on a loaded machine can outlast the plugin's 2.5 s: only the deadline test keeps it
    full = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "ORCH_DAEMON_IDLE": "30", "ORCH_CLINE_DEADLINE_MS": "120000",
            **env}
    proc = subprocess.run([str(NODE), str(driver), str(ws / CLINE_PLUGIN), str(ws), SESSION], cwd=ws, env=full,
                          input="\n".join(json.dumps(s) for s in steps), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(results) == len(steps), proc.stdout + proc.stderr
    assert all(r["ok"] for r in results), results  # the plugin never throws
    return [r["out"] for r in results]


def step(entries: list[dict[str, Any]], hook: str, call_id: str, **input_: Any) -> dict[str, Any]:
    entry = find(entries, hook, call_id)
    entry["ctx"]["input"] = {**entry["ctx"]["input"], **input_}
    return {"hook": hook, "ctx": entry["ctx"]}


def test_through_the_launcher_refuses_selects_records(installed: Path) -> None:
    ws = installed
    entries = captured(ws)
    write, select = step(entries, "beforeTool", "c_write"), step(entries, "beforeTool", "c_select")
    refused, selected, allowed = run_plugin(ws, [write, select, write], ORCH_NO_DAEMON="1")
    assert refused["skip"] is True and "[orchestrator:intent-required]" in refused["reason"]
    assert selected is None and allowed is None
    (ws / "src" / "new.py").write_text("a = 1\n")
    [after] = run_plugin(ws, [step(entries, "afterTool", "c_write")], ORCH_NO_DAEMON="1")
    assert after is None
    [record] = records(ws)
    meta = record["metadata"]["dev.orchestrator"]
    assert meta["session_id"] == SESSION and meta["agent"] == "cline" and record["files"][0]["path"] == "src/new.py"


def test_the_mandate_reaches_the_run(installed: Path) -> None:
    [out] = run_plugin(installed, [{"hook": "beforeRun", "ctx": {}}], ORCH_NO_DAEMON="1")
    assert "orchestrator__select_active_intent" in out["appendContext"]


def test_a_command_list_is_rewritten_into_the_sandbox_or_refused(installed: Path) -> None:
    ws = installed
    entries = captured(ws)
    scripts = step(entries, "beforeTool", "c_shell", commands=["python3 src/gen.py", "echo z > src/z.txt"])
    out_of_scope = step(entries, "beforeTool", "c_shell", commands=["echo z > src/z.txt", "echo h > README.md"])
    _, rewritten, refused = run_plugin(ws, [step(entries, "beforeTool", "c_select"), scripts, out_of_scope],
                                       ORCH_NO_DAEMON="1", ORCH_APPROVAL_CHANNEL="deny")
    if landlock.abi() >= 1:
        assert [unwrap(c) or c for c in rewritten["input"]["commands"]] == ["python3 src/gen.py", "echo z > src/z.txt"]
        assert unwrap(rewritten["input"]["commands"][0]) is not None
    else:
        assert rewritten["skip"] and "not sandboxed" in rewritten["reason"]
    assert refused["skip"] and "command 2 of 2" in refused["reason"] and "scope-violation" in refused["reason"]


def test_an_ask_goes_to_clines_approval_with_the_reason(installed: Path) -> None:
    ws = installed
    entries = captured(ws)
    push = step(entries, "beforeTool", "c_shell", commands=["git push --force origin main"])
    _, asked = run_plugin(ws, [step(entries, "beforeTool", "c_select"), push], ORCH_NO_DAEMON="1",
                          ORCH_APPROVAL_CHANNEL="agent-ask")
    assert asked["policy"] == {"autoApprove": False} and "[orchestrator:approval-required]" in asked["appendContext"]


def test_through_the_daemon_socket(installed: Path) -> None:
    ws = installed
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "serve", "--root", str(ws)],
                            env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "ORCH_DAEMON_IDLE": "30"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(lambda: daemon.is_alive(daemon.socket_path(ws)) or proc.poll() is not None,
               what="the daemon to answer on its socket")
    assert proc.poll() is None, f"orch serve exited (socket path {len(str(daemon.socket_path(ws)))} bytes)"
    (ws / installer.LAUNCHER).write_text("#!/bin/sh\nexit 1\n")  # an answer proves the daemon gave it
    entries = captured(ws)
    governance = step(entries, "beforeTool", "c_write", path=".cline/plugins/orchestrator.js", new_text="x")
    try:
        _, allowed, refused = run_plugin(ws, [step(entries, "beforeTool", "c_select"),
                                              step(entries, "beforeTool", "c_write"), governance])
        assert allowed is None and "[orchestrator:governance-file]" in refused["reason"]
    finally:
        daemon.stop(ws)
        proc.wait(timeout=60)


def test_skips_when_neither_daemon_nor_launcher_answers(installed: Path) -> None:
    ws = installed
    entries = captured(ws)
    (ws / installer.LAUNCHER).unlink()
    read, write = step(entries, "beforeTool", "c_read"), step(entries, "beforeTool", "c_write")
    results = run_plugin(ws, [read, write, {"hook": "beforeRun", "ctx": {}}, step(entries, "afterTool", "c_write")])
    for out in results[:2]:  # even a read: orchestrator must see every call
        assert out["skip"] is True and "missing or not executable" in out["reason"] and "fail closed" in out["reason"]
    assert results[2] is None  # the mandate is advice: no context, but no failure either
    assert "could not record" in results[3]["appendContext"]


def test_a_crashing_or_garbled_launcher_skips(installed: Path) -> None:
    ws = installed
    entries = captured(ws)
    (ws / installer.LAUNCHER).write_text("#!/bin/sh\necho boom >&2\nexit 1\n")
    [out] = run_plugin(ws, [step(entries, "beforeTool", "c_write")], ORCH_NO_DAEMON="1")
    assert out["skip"] and "failed (exit 1)" in out["reason"] and "boom" in out["reason"]
    (ws / installer.LAUNCHER).write_text("#!/bin/sh\necho not-json\n")
    [out] = run_plugin(ws, [step(entries, "beforeTool", "c_write")], ORCH_NO_DAEMON="1")
    assert out["skip"] and "unreadable answer" in out["reason"] and "not-json" in out["reason"]


def test_an_answer_that_comes_too_late_for_cline_is_a_skip(installed: Path) -> None:
    """Cline abandons a plugin hook after 3 s and fails the run: the plugin gives up first, refusing the call."""
    ws = installed
    entries = captured(ws)
    [out] = run_plugin(ws, [step(entries, "beforeTool", "c_write")], ORCH_NO_DAEMON="1", ORCH_CLINE_DEADLINE_MS="1")
    assert out["skip"] and "did not answer within 0.001 s" in out["reason"]
