"""Per-call cost of orchestrator's pi extension, against the Claude Code hook on the same calls.

pi keeps the extension loaded in its own Node process: a governed call costs the extension's ``tool_call`` /
``tool_result`` handler (one round trip to orchestrator), not a process start. Measured as bench_opencode.py measures
opencode's plugin (its ``measure``): against a tmp workspace after ``orch install pi`` and ``orch install
claude-code``, the real extension file run by Node with a stand-in for pi's ``ExtensionAPI`` and context, on four
calls in pi's shape: a ``write`` refused before any intent, an allowed in-scope ``write`` (pre-image captured), a
``read``, and an ``edit``'s ``tool_result`` (ranges, classification, the ledger's dedupe check) — without a daemon
(the launcher per call), then with ``orch serve`` running, paired with the Claude Code hook.

Prints min / median / max in ms per call and the extension's median as a fraction of the Claude Code hook's.
Target: the extension no worse than the Claude Code hook (the budget of every adapter, docs/performance.md).

Usage: PYTHONPATH=. python bench/bench_pi.py [-n 30]
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_opencode import bench_root, measure  # noqa: E402

from orchestrator.adapters import pi_setup  # noqa: E402

#: times each step n times inside one Node process, with a stand-in for pi; prints {label: [ms, ...]}
DRIVER = """
import { pathToFileURL } from "node:url"
const [extension, root, n] = process.argv.slice(2)
const handlers = {}
await (await import(pathToFileURL(extension).href)).default({ on: (name, fn) => { handlers[name] = fn } })
const steps = JSON.parse(await new Promise((ok) => { let s = ""; process.stdin.on("data", (d) => s += d);
                                                      process.stdin.on("end", () => ok(s)) }))
const out = {}
for (const { label, hook, event, session } of steps) {
  const ctx = { cwd: root, sessionManager: { getSessionId: () => session }, model: { provider: "fake", id: "m1" } }
  out[label] = []
  for (let i = 0; i < Number(n); i++) {
    const copy = structuredClone(event)
    const t0 = performance.now()
    await handlers[hook](copy, ctx)
    out[label].push(performance.now() - t0)
  }
}
console.log(JSON.stringify(out))
"""


def steps() -> list[dict[str, Any]]:
    """The four calls, as pi hands them to the extension."""
    def call(label: str, session: str, tool: str, call_id: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"label": label, "hook": "tool_call", "session": session,
                "event": {"type": "tool_call", "toolName": tool, "toolCallId": call_id, "input": args}}

    edit = {"path": "src/app.py", "edits": [{"oldText": "x = 1", "newText": "x = 1"}]}
    return [
        call("write refused (no intent)", "pi_new", "write", "c1", {"path": "src/new.py", "content": "x\n"}),
        call("write allowed (in scope)", "pi_bench", "write", "c2", {"path": "src/new.py", "content": "x\n"}),
        call("read", "pi_bench", "read", "c3", {"path": "src/app.py"}),
        {"label": "edit, tool_result", "hook": "tool_result", "session": "pi_bench",
         "event": {"type": "tool_result", "toolName": "edit", "toolCallId": "c4", "input": edit,
                   "content": [{"type": "text", "text": "Successfully replaced 1 block(s) in src/app.py."}],
                   "isError": False}},
    ]


def claude_event(root: Path, step: dict[str, Any]) -> bytes:
    """The same call as Claude Code's hook receives it."""
    event = step["event"]
    args = event["input"]
    tool = {"write": "Write", "read": "Read", "edit": "Edit"}[event["toolName"]]
    tool_input: dict[str, Any] = {"file_path": args["path"]}
    if "content" in args:
        tool_input["content"] = args["content"]
    if tool == "Edit":
        tool_input.update(old_string=args["edits"][0]["oldText"], new_string=args["edits"][0]["newText"])
    out = {"session_id": step["session"], "cwd": str(root), "tool_name": tool, "tool_input": tool_input,
           "tool_use_id": f"toolu_{event['toolCallId']}",
           "hook_event_name": "PreToolUse" if step["hook"] == "tool_call" else "PostToolUse"}
    if out["hook_event_name"] == "PostToolUse":
        out["tool_response"] = {"filePath": args["path"]}
    return json.dumps(out).encode()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=30, help="runs per measurement")
    args = parser.parse_args()
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is not installed: the extension is JavaScript")
    root = bench_root("orch-bench-pi-")
    pi_setup.install(root)
    from orchestrator.engine.pipeline import Governor

    Governor(root).select_intent("INT-1", "pi_bench")
    plugin_steps = steps()
    measure(node, root, "pi", plugin_steps, [claude_event(root, step) for step in plugin_steps], args.n, DRIVER)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
