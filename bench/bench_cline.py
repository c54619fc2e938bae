"""Per-call cost of orchestrator's Cline plugin, against the Claude Code hook on the same calls.

Cline keeps its plugins loaded in a plugin subprocess: a governed call costs the plugin's ``beforeTool`` /
``afterTool`` (one round trip to orchestrator), not a process start. Measured in one run, against a tmp workspace
after ``orch install cline`` and ``orch install claude-code`` (the real plugin file, run by Node as Cline's plugin
host runs it: ``node:`` modules only), on four calls: an ``editor`` write refused before any intent, an allowed
in-scope ``editor`` edit (pre-image captured), a two-command ``run_commands`` (each entry judged, and wrapped in the
sandbox), and the edit's ``afterTool`` (ranges, classification, the ledger's dedupe check):

- plugin, no daemon: ``ORCH_NO_DAEMON=1``, the plugin runs the launcher per call: the first call of a session;
- plugin vs Claude Code hook, daemon running, in alternating rounds (load drift hits both).

Prints min / median / max in ms per call and the plugin's median as a fraction of the Claude Code hook's.
Budget (issue 30): within the other adapters' (the opencode plugin's 0.03–0.11x of the Claude Code hook), and under
Cline's 3 s plugin-hook deadline with a wide margin.

Usage: PYTHONPATH=. python bench/bench_cline.py [-n 30]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from _util import governed  # noqa: E402

from orchestrator.adapters import cline_setup, installer  # noqa: E402
from orchestrator.adapters.managed import CLINE_PLUGIN  # noqa: E402
from orchestrator.daemon import server as daemon  # noqa: E402

SESSION = "1795800000000_bench"

#: sets the plugin up as Cline does, times each step n times; prints {label: [ms, ...]}
DRIVER = """
import { pathToFileURL } from "node:url"
const [plugin, root, session, n] = process.argv.slice(2)
const mod = (await import(pathToFileURL(plugin).href)).default
mod.setup({}, { session: { sessionId: session }, workspaceInfo: { rootPath: root } })
const steps = JSON.parse(await new Promise((ok) => { let s = ""; process.stdin.on("data", (d) => s += d);
                                                      process.stdin.on("end", () => ok(s)) }))
const out = {}
for (const { label, hook, ctx } of steps) {
  out[label] = []
  for (let i = 0; i < Number(n); i++) {
    const t0 = performance.now()
    const answer = await mod.hooks[hook](structuredClone(ctx))
    out[label].push(performance.now() - t0)
    if (answer && answer.skip && !label.includes("refused")) throw new Error(`${label}: ${answer.reason}`)
  }
}
console.log(JSON.stringify(out))
"""


def ctx(call_id: str, tool: str, tool_input: dict[str, Any], agent: str = "agent_bench") -> dict[str, Any]:
    """A hook context as Cline 3.0.65 hands it to a plugin (tests/data/cline/plugin.jsonl, cut to what is read)."""
    return {"snapshot": {"agentId": agent, "conversationId": "conv_bench"}, "tool": {"name": tool},
            "toolCall": {"type": "tool-call", "toolCallId": call_id, "toolName": tool, "input": tool_input,
                         "metadata": {"toolSource": {"providerId": "openai-compatible", "modelId": "bench-1"}}},
            "input": tool_input}


def steps() -> list[dict[str, Any]]:
    edit = {"path": "src/app.py", "old_text": "x = 1", "new_text": "x = 1"}
    after = ctx("c4", "editor", edit)
    after["result"] = {"output": {"query": "edit:src/app.py", "result": "Edited", "success": True}}
    refused = ctx("c1", "editor", {"path": "src/new.py", "new_text": "x\n"})
    refused["snapshot"]["agentId"] = "agent_other"
    return [
        {"label": "editor refused (no intent)", "hook": "beforeTool", "ctx": refused, "session": "1795800000000_none"},
        {"label": "editor edit allowed (in scope)", "hook": "beforeTool", "ctx": ctx("c2", "editor", edit)},
        {"label": "run_commands, 2 entries (sandboxed)", "hook": "beforeTool",
         "ctx": ctx("c3", "run_commands", {"commands": ["python3 src/gen.py", "echo z > src/z.txt"]})},
        {"label": "editor edit, afterTool", "hook": "afterTool", "ctx": after},
    ]


def claude_event(root: Path, step: dict[str, Any]) -> bytes:
    """The same call as Claude Code's hook receives it (Bash for the command list: its first entry)."""
    inp = step["ctx"]["input"]
    if step["ctx"]["toolCall"]["toolName"] == "run_commands":
        tool, tool_input = "Bash", {"command": inp["commands"][0]}
    else:
        tool = "Edit" if "old_text" in inp else "Write"
        tool_input = {"file_path": str(root / inp["path"]), "content": inp["new_text"]} if tool == "Write" else \
            {"file_path": str(root / inp["path"]), "old_string": inp["old_text"], "new_string": inp["new_text"]}
    event = {"session_id": step.get("session", SESSION), "cwd": str(root), "tool_name": tool, "tool_input": tool_input,
             "tool_use_id": f"toolu_{step['ctx']['toolCall']['toolCallId']}",
             "hook_event_name": "PreToolUse" if step["hook"] == "beforeTool" else "PostToolUse"}
    if step["hook"] == "afterTool":
        event["tool_response"] = {"filePath": tool_input["file_path"]}
    return json.dumps(event).encode()


def plugin_times(node: str, root: Path, step: dict[str, Any], n: int, env: dict[str, str]) -> list[float]:
    driver = root.parent / "driver.mjs"
    driver.write_text(DRIVER)
    proc = subprocess.run([node, str(driver), str(root / CLINE_PLUGIN), str(root), step.get("session", SESSION),
                           str(n)], cwd=root, env=env, input=json.dumps([step]), capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"plugin driver failed: {proc.stderr}")
    return json.loads(proc.stdout)[step["label"]]


def hook_times(command: str, stdin: bytes, n: int, env: dict[str, str], root: Path) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        proc = subprocess.run(["sh", "-c", command], input=stdin, capture_output=True, env=env, cwd=root)
        out.append((time.perf_counter() - start) * 1000)
        if proc.returncode not in (0, 2):
            raise SystemExit(f"hook failed: {proc.stderr.decode()}")
    return out


def fmt(label: str, times: list[float]) -> str:
    s = sorted(times)
    return f"{label:<52} min {s[0]:7.2f}  p50 {statistics.median(s):7.2f}  max {s[-1]:7.2f} ms"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=30, help="runs per measurement")
    args = parser.parse_args()
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is not installed: the plugin is JavaScript")
    tmp = Path(tempfile.mkdtemp(prefix="orch-bench-cline-"))
    root = governed(tmp / "repo")
    (root / "src").mkdir()
    (root / "src/app.py").write_text("x = 1\n" * 200)
    home = tmp / "home"  # the user-level MCP entry goes to a throw-away HOME
    env = {**os.environ, "PYTHONPATH": str(REPO), "ORCH_DAEMON_IDLE": "300", "CLAUDE_PROJECT_DIR": str(root),
           "ORCH_APPROVAL_CHANNEL": "deny", "ORCH_CLINE_DEADLINE_MS": "60000"}
    os.environ["HOME"] = str(home)
    cline_setup.install(root)
    installer.install("claude-code", root)
    from orchestrator.engine.pipeline import Governor

    Governor(root).select_intent("INT-1", SESSION)
    command = installer.launcher_command("claude-code")
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"bench_cline: n={args.n} per measurement; node {version}")
    print("-- plugin, no daemon (the launcher per call, evaluated in-process)")
    for step in steps():
        print(fmt(step["label"], plugin_times(node, root, step, max(5, args.n // 3), {**env, "ORCH_NO_DAEMON": "1"})))
    serve = subprocess.Popen([sys.executable, "-m", "orchestrator", "serve", "--root", str(root)], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not daemon.is_alive(daemon.socket_path(root)):
            if time.monotonic() > deadline or serve.poll() is not None:
                raise SystemExit("orch serve did not come up")
            time.sleep(0.05)
        print("-- daemon running: plugin (socket, in Cline's plugin host) vs Claude Code hook (whole process), paired")
        for step in steps():
            plugin: list[float] = []
            hook: list[float] = []
            stdin = claude_event(root, step)
            for _ in range(3):  # alternate in rounds, so load drift hits both
                plugin += plugin_times(node, root, step, max(1, args.n // 3), env)
                hook += hook_times(command, stdin, max(1, args.n // 3), env, root)
            print(fmt(f"plugin      {step['label']}", plugin))
            print(fmt(f"claude hook {step['label']}", hook))
            print(f"{'':<52} plugin p50 = {statistics.median(plugin) / statistics.median(hook):.2f} x the hook's")
    finally:
        daemon.stop(root)
        serve.wait(timeout=60)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
