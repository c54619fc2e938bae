"""``orch doctor`` checks of the agent installs: the hook commands resolve and *run*, the MCP server starts, and no
machine-specific path sits in a file teams commit.

Each check executes what the agent would execute: the installed hook command string, through ``sh -c`` with the
environment Claude Code gives it (``CLAUDE_PROJECT_DIR``), fed a harmless probe event (a ``Write`` to a governance
file, which orchestrator must refuse: so a pass proves the hook both runs and blocks); the MCP server command with an
MCP ``initialize`` request. The probe never starts a daemon (``ORCH_NO_DAEMON=1``) and never changes a file.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from orchestrator.adapters import installer
from orchestrator.adapters.managed import PLUGINS
from orchestrator.core.findings import Finding
from orchestrator.config.workspace import Workspace

#: seconds one probe may take (a cold hook is ~0.1 s; an interpreter search a few tenths)
PROBE_TIMEOUT = 30.0
#: session id of the probes (never a real agent's; the pipeline does not log their refusals)
from orchestrator.engine.pipeline import PROBE_SESSION  # noqa: E402


def _our_commands(data: dict[str, Any]) -> list[str]:
    out: list[str] = []
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for groups in hooks.values():
        for group in groups if isinstance(groups, list) else ():
            inner = group.get("hooks", [group]) if isinstance(group, dict) else []
            for hook in inner if isinstance(inner, list) else ():
                command = installer.command_of(hook)
                if command is not None and installer._is_ours(hook):
                    out.append(command)
    return list(dict.fromkeys(out))


def _load(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def installed(root: Path) -> list[tuple[str, Path, list[str]]]:
    """``(agent, settings file, our hook commands)`` for every agent file that holds orchestrator's hooks."""
    found = []
    for agent, spec in installer.SPECS.items():
        for rel in dict.fromkeys(f for f in (spec.hooks_file, installer.LOCAL_SETTINGS.get(agent)) if f):
            data = _load(root / rel)
            commands = _our_commands(data) if data else []
            if commands:
                found.append((agent, root / rel, commands))
    return found


def _probe_event(agent: str, root: Path) -> dict[str, Any]:
    target = str(root / ".orchestration" / "doctor-probe.txt")
    if agent == "cursor":
        return {"hook_event_name": "preToolUse", "conversation_id": PROBE_SESSION, "tool_name": "Write",
                "tool_input": {"path": target, "contents": "probe"}, "workspace_roots": [str(root)]}
    if agent == "copilot":  # .github/hooks payloads name no event: a tool call without a result is a preToolUse
        return {"sessionId": PROBE_SESSION, "timestamp": 0, "cwd": str(root), "toolName": "create",
                "toolArgs": {"path": target, "file_text": "probe"}}
    if agent == "qwen-code":  # Qwen Code's own shape (a tool_use_id; its adapter refuses an event without one)
        return {"hook_event_name": "PreToolUse", "session_id": PROBE_SESSION, "tool_name": "write_file",
                "cwd": str(root), "tool_use_id": "doctor-probe", "tool_input": {"file_path": target, "content": "probe"}}
    name = "BeforeTool" if agent == "gemini" else "PreToolUse"
    tool = "write_file" if agent == "gemini" else "Write"
    return {"hook_event_name": name, "session_id": PROBE_SESSION, "tool_name": tool, "cwd": str(root),
            "tool_input": {"file_path": target, "content": "probe"}}


def run_hook_command(command: str, agent: str, root: Path, event: dict[str, Any] | None = None,
                     env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run an installed hook command as the agent would: through a shell, in the project (or ``cwd``, where the
    agent was started), the event on stdin."""
    full_env = dict(os.environ if env is None else env)
    var = installer.PROJECT_VAR.get(agent)
    if var:
        full_env[var] = str(root)
    full_env["ORCH_NO_DAEMON"] = "1"  # a probe must not leave a daemon behind
    return subprocess.run(["sh", "-c", command], input=json.dumps(event or _probe_event(agent, root)),
                          capture_output=True, text=True, cwd=cwd or root, env=full_env, timeout=PROBE_TIMEOUT)


def judge_probe(proc: subprocess.CompletedProcess[str]) -> tuple[bool, str]:
    """(the hook answered and refused the probe, what it said)."""
    said = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
    first = said[0] if said else f"exit {proc.returncode}, no output"
    for line in said:
        if "orchestrator:" in line and ("BLOCKED" in line or "launcher" in line or "no Python" in line):
            first = line
            break
    if proc.returncode not in (0, 2) or "BLOCKED (fail closed)" in proc.stderr or "hook launcher" in proc.stderr \
            or "hook client failed" in proc.stderr:
        return False, first
    text = proc.stdout + proc.stderr
    if "deny" in text or "governance" in text or proc.returncode == 2:
        return True, "refused the probe write, as it must"
    return False, f"answered without refusing a write to a governance file: {first}"


_MACHINE_PATH = re.compile(r"(?:^|[\s\"'=])(/(?:home|Users|usr|opt|root|nix|private|tmp|var|srv|mnt)/[^\s\"']+)")


def check_hooks(ws: Workspace) -> Iterable[Finding]:
    """Every installed agent hook resolves, runs and refuses a probe; shared files hold no machine paths."""
    root = Path(ws.root)
    found = installed(root)
    if not found and any((root / plugin).exists() for plugin in PLUGINS.values()):
        return  # opencode, Kilo, pi and Cline run a plugin, not hook commands: their own checks probe it
    if not found:
        yield Finding("hooks", "warn", "no agent hooks are installed: agents working here are not governed",
                      f"orch install claude-code   (or {', '.join(a for a in installer.AGENTS if a != 'claude-code')})")
        return
    for agent, path, commands in found:
        rel = path.relative_to(root)
        label = f"hooks.{agent}"
        shared = str(rel) == installer.SPECS[agent].hooks_file
        for command in commands:
            paths = [p for p in _MACHINE_PATH.findall(command)]
            missing = [p for p in paths if not os.path.exists(p)]
            if missing:
                yield Finding(label, "fail", f"{rel}: the hook command names {missing[0]}, which does not exist on "
                              "this machine (a clone, or a moved venv): the agent cannot run it",
                              f"orch install {agent}   (writes the portable launcher {installer.LAUNCHER})")
            elif paths and shared:
                yield Finding(label, "warn", f"{rel} is meant to be committed but names a path of this machine "
                              f"({paths[0]}): a teammate's clone would not run it",
                              f"orch install {agent}   (shared scope), or orch install {agent} --scope local")
        try:
            proc = run_hook_command(commands[0], agent, root)
        except subprocess.TimeoutExpired:
            yield Finding(label, "fail", f"{rel}: the hook did not answer within {PROBE_TIMEOUT:.0f} s",
                          "run `orch doctor` again; if it persists, reinstall: orch install " + agent)
            continue
        except OSError as exc:
            yield Finding(label, "fail", f"{rel}: cannot run a shell for the hook ({exc})", "install /bin/sh")
            continue
        ok, said = judge_probe(proc)
        if ok:
            yield Finding(label, "ok", f"{rel}: the hook runs and refused the probe")
        else:
            yield Finding(label, "fail", f"{rel}: the hook does not govern calls: {said}",
                          _fix_for(said, agent))


def _fix_for(said: str, agent: str) -> str:
    if "no Python interpreter" in said or "ORCH_PYTHON" in said:
        return ("create the project's environment with orchestrator in it (e.g. `python3 -m venv .venv && "
                ".venv/bin/pip install orchestrator`), or put `orch` on PATH, or set ORCH_PYTHON")
    if "launcher" in said:
        return f"git checkout {installer.LAUNCHER}   (or orch install {agent}); make sure it is committed"
    return f"orch install {agent}; then run orch doctor again"


def check_launcher(ws: Workspace) -> Iterable[Finding]:
    """The committed launcher exists, is executable, is this version's, and is tracked by git."""
    root = Path(ws.root)
    uses = [agent for agent, _path, commands in installed(root) if any(installer.LAUNCHER in c for c in commands)]
    # a plugin calls the launcher when no daemon answers
    uses += [agent for agent, plugin in PLUGINS.items() if (root / plugin).exists()]
    path = root / installer.LAUNCHER
    if not uses and not path.exists():
        return
    if not path.exists():
        yield Finding("install.launcher", "fail", f"{installer.LAUNCHER} is missing but the hooks of "
                      f"{', '.join(uses)} name it: every call is blocked", f"orch install {uses[0]}")
        return
    if not os.access(path, os.X_OK):
        yield Finding("install.launcher", "fail", f"{installer.LAUNCHER} is not executable: every call is blocked",
                      f"chmod +x {installer.LAUNCHER}   (and commit the mode: git update-index --chmod=+x)")
        return
    if path.read_text(encoding="utf-8", errors="replace") != installer.launcher_text():
        yield Finding("install.launcher", "warn", f"{installer.LAUNCHER} differs from this orchestrator version's",
                      f"orch install {uses[0] if uses else 'claude-code'}")
    if (root / ".git").exists():
        try:
            tracked = subprocess.run(["git", "ls-files", "--error-unmatch", installer.LAUNCHER], cwd=root,
                                     capture_output=True, timeout=10).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            tracked = True
        if not tracked:
            yield Finding("install.launcher", "warn", f"{installer.LAUNCHER} is not committed: the committed "
                          "settings name it, so teammates' clones would block every call",
                          f"git add {installer.LAUNCHER} && git commit")
            return
    yield Finding("install.launcher", "ok", f"{installer.LAUNCHER} is in place")


def check_mcp(ws: Workspace) -> Iterable[Finding]:
    """Each installed ``orchestrator`` MCP server starts and answers ``initialize``."""
    root = Path(ws.root)
    files = dict.fromkeys(spec.mcp_file for spec in installer.SPECS.values() if spec.mcp_file)
    for rel in files:
        data = _load(root / rel)
        server = (data or {}).get("mcpServers", {}).get(installer.SERVER) if data else None
        if not isinstance(server, dict) or not installer._is_our_server(server):
            continue
        label = "mcp"
        ok, said = probe_mcp(server, root)
        if ok:
            yield Finding(label, "ok", f"the orchestrator MCP server in {rel} starts and answers ({said})")
        else:
            yield Finding(label, "fail", f"the orchestrator MCP server in {rel} does not start: {said}: agents "
                          "cannot select an intent, so every mutation is refused",
                          "orch install claude-code (or the agent whose file this is); see docs/troubleshooting.md")


def probe_mcp(server: dict[str, Any], root: Path) -> tuple[bool, str]:
    """Start the server, send ``initialize``, read one answer line."""
    command = server.get("command")
    args = server.get("args") or []
    if not isinstance(command, str) or not isinstance(args, list):
        return False, "the entry has no command"
    env = {**os.environ, **{str(k): str(v) for k, v in (server.get("env") or {}).items()}}
    env["CLAUDE_PROJECT_DIR"] = str(root)
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "orch-doctor", "version": "1"}}}
    try:
        proc = subprocess.Popen([command, *map(str, args)], cwd=root, env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as exc:
        return False, f"cannot start {command!r} ({exc})"
    try:
        out, err = proc.communicate(json.dumps(request) + "\n", timeout=PROBE_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    for line in out.splitlines():
        try:
            answer = json.loads(line)
        except ValueError:
            continue
        if isinstance(answer, dict) and answer.get("id") == 1 and "result" in answer:
            info = answer["result"].get("serverInfo", {})
            return True, f"{info.get('name', 'server')} {info.get('version', '')}".strip()
    last = (err.strip().splitlines() or [f"exit {proc.returncode}, no answer"])[-1]
    return False, last[:300]
