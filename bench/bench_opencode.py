"""Per-call cost of orchestrator's opencode plugin, against the Claude Code hook on the same calls.

opencode keeps the plugin loaded in its own process: a governed call costs the plugin's hook (one round trip to
orchestrator), not a process start. Measured in one run, against a tmp workspace after ``orch install opencode`` and
``orch install claude-code`` (the real plugin file, run by Node, which runs it as opencode's Bun does: ``node:``
modules only), on four calls: a ``write`` refused before any intent, an allowed in-scope ``write`` (pre-image
captured), a ``read``, and an ``edit``'s ``tool.execute.after`` (ranges, classification, the ledger's dedupe check):

- plugin, daemon: ``orch serve`` running, the plugin talks to its socket (the normal case after the first call);
- plugin, no daemon: ``ORCH_NO_DAEMON=1``, the plugin runs the launcher per call (``sh`` + ``python -S`` client,
  evaluated in-process): the first call of a session, or a machine whose daemon cannot start;
- Claude Code hook, daemon: the installed hook command (``sh -c`` the launcher, the stdlib client, the socket) as
  Claude Code runs it per event, the same daemon answering. Its runs alternate with the plugin's (paired), so load
  drift hits both.

Prints min / median / max in ms per call and the plugin's median as a fraction of the Claude Code hook's.
Target (issue 24): the plugin no worse than the Claude Code hook.

``--agent kilo``: the same plugin as Kilo CLI loads it (``.kilo/plugin/orchestrator.js``, rendered for agent ``kilo``;
the calls go through the Kilo adapter, which is opencode's with Kilo as host).

Usage: PYTHONPATH=. python bench/bench_opencode.py [-n 30] [--agent kilo]
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

from orchestrator.daemon import server as daemon  # noqa: E402
from orchestrator.adapters import installer, opencode_setup  # noqa: E402
from orchestrator.adapters.managed import PLUGINS  # noqa: E402

#: times each step n times inside one Node process; prints {label: [ms, ...]}
DRIVER = """
import { pathToFileURL } from "node:url"
const [plugin, root, n] = process.argv.slice(2)
const hooks = await (await import(pathToFileURL(plugin).href)).OrchestratorPlugin({ directory: root, worktree: root })
const steps = JSON.parse(await new Promise((ok) => { let s = ""; process.stdin.on("data", (d) => s += d);
                                                      process.stdin.on("end", () => ok(s)) }))
const out = {}
for (const { label, hook, input, output } of steps) {
  out[label] = []
  for (let i = 0; i < Number(n); i++) {
    const copy = structuredClone(output)
    const t0 = performance.now()
    try { await hooks[hook](input, copy) } catch {}
    out[label].push(performance.now() - t0)
  }
}
console.log(JSON.stringify(out))
"""


def steps(root: Path) -> list[dict[str, Any]]:
    """The four calls, as opencode hands them to the plugin."""
    def before(session: str, call: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"hook": "tool.execute.before", "input": {"tool": tool, "sessionID": session, "callID": call},
                "output": {"args": args}}

    edit_args = {"filePath": "src/app.py", "oldString": "x = 1", "newString": "x = 1"}
    return [
        {"label": "write refused (no intent)", **before("ses_new", "c1", "write",
                                                         {"filePath": "src/new.py", "content": "x\n"})},
        {"label": "write allowed (in scope)", **before("ses_bench", "c2", "write",
                                                        {"filePath": "src/new.py", "content": "x\n"})},
        {"label": "read", **before("ses_bench", "c3", "read", {"filePath": "src/app.py"})},
        {"label": "edit, tool.execute.after", "hook": "tool.execute.after",
         "input": {"tool": "edit", "sessionID": "ses_bench", "callID": "c4", "args": edit_args},
         "output": {"title": "src/app.py", "output": "Edit applied successfully.", "metadata": {"truncated": False}}},
    ]


def claude_event(root: Path, step: dict[str, Any]) -> bytes:
    """The same call as Claude Code's hook receives it."""
    tool = {"write": "Write", "read": "Read", "edit": "Edit"}[step["input"]["tool"]]
    args = step["output"]["args"] if step["hook"] == "tool.execute.before" else step["input"]["args"]
    tool_input = {"file_path": args["filePath"], **({"content": args["content"]} if "content" in args else {}),
                  **({"old_string": args["oldString"], "new_string": args["newString"]} if tool == "Edit" else {})}
    event = {"session_id": step["input"]["sessionID"], "cwd": str(root), "tool_name": tool, "tool_input": tool_input,
             "tool_use_id": f"toolu_{step['input']['callID']}",
             "hook_event_name": "PreToolUse" if step["hook"] == "tool.execute.before" else "PostToolUse"}
    if event["hook_event_name"] == "PostToolUse":
        event["tool_response"] = {"filePath": args["filePath"]}
    return json.dumps(event).encode()


def plugin_times(node: str, root: Path, step: dict[str, Any], n: int, env: dict[str, str], agent: str = "opencode",
                 driver_text: str = DRIVER) -> list[float]:
    """Times of ``n`` runs of one step by ``agent``'s installed plugin, in one Node process (``driver_text``)."""
    driver = root.parent / "driver.mjs"
    driver.write_text(driver_text)
    proc = subprocess.run([node, str(driver), str(root / PLUGINS[agent]), str(root), str(n)], cwd=root, env=env,
                          input=json.dumps([step]), capture_output=True, text=True, timeout=600)
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


def measure(node: str, root: Path, agent: str, plugin_steps: list[dict[str, Any]], claude_events: list[bytes], n: int,
            driver_text: str = DRIVER) -> None:
    """Print the plugin's cost per step without a daemon, then, with ``orch serve`` running, paired with the Claude
    Code hook on the same calls (``claude_events``, one per step). ``root`` has both installed, intent selected."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "ORCH_DAEMON_IDLE": "300", "CLAUDE_PROJECT_DIR": str(root)}
    command = installer.launcher_command("claude-code")
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"bench ({agent}'s plugin): n={n} per measurement; node {version}")
    print("-- plugin, no daemon (the launcher per call, evaluated in-process)")
    for step in plugin_steps:
        print(fmt(step["label"], plugin_times(node, root, step, max(5, n // 3), {**env, "ORCH_NO_DAEMON": "1"}, agent,
                                              driver_text)))
    serve = subprocess.Popen([sys.executable, "-m", "orchestrator", "serve", "--root", str(root)], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not daemon.is_alive(daemon.socket_path(root)):
            if time.monotonic() > deadline or serve.poll() is not None:
                raise SystemExit("orch serve did not come up")
            time.sleep(0.05)
        print(f"-- daemon running: plugin (socket, in {agent}'s process) vs Claude Code hook (whole process), paired")
        for step, stdin in zip(plugin_steps, claude_events):
            plugin: list[float] = []
            hook: list[float] = []
            for _ in range(3):  # alternate in rounds, so load drift hits both
                plugin += plugin_times(node, root, step, max(1, n // 3), env, agent, driver_text)
                hook += hook_times(command, stdin, max(1, n // 3), env, root)
            print(fmt(f"plugin      {step['label']}", plugin))
            print(fmt(f"claude hook {step['label']}", hook))
            print(f"{'':<52} plugin p50 = {statistics.median(plugin) / statistics.median(hook):.2f} x the hook's")
    finally:
        daemon.stop(root)
        serve.wait(timeout=60)


def bench_root(prefix: str) -> Path:
    """A governed tmp repository with ``src/app.py`` (200 lines) and Claude Code's hooks installed."""
    root = governed(Path(tempfile.mkdtemp(prefix=prefix)) / "repo")
    (root / "src").mkdir()
    (root / "src/app.py").write_text("x = 1\n" * 200)
    installer.install("claude-code", root)
    return root


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=30, help="runs per measurement")
    parser.add_argument("--agent", choices=("opencode", "kilo"), default="opencode", help="whose plugin copy to run")
    args = parser.parse_args()
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is not installed: the plugin is JavaScript")
    root = bench_root("orch-bench-opencode-")
    opencode_setup.install(root, host=opencode_setup.HOSTS[args.agent])
    from orchestrator.engine.pipeline import Governor

    Governor(root).select_intent("INT-1", "ses_bench")
    plugin_steps = steps(root)
    measure(node, root, args.agent, plugin_steps, [claude_event(root, step) for step in plugin_steps], args.n)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
