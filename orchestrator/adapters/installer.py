"""``orch install <agent>`` / ``orch uninstall <agent>``: wire orchestrator's hooks and MCP server into an agent's
project configuration, merging with what the user already has.

Rules:
- the user's settings are kept: we only add hook entries and one MCP server named ``orchestrator``;
- idempotent: installing twice leaves one copy (our entries are replaced, not duplicated);
- uninstall removes only what install added. Our hook entries are recognised by a trailing shell comment
  ``# orch:managed`` in their command (agents run hook commands through a shell, so the comment is inert, and no
  unknown key is added to a schema-validated settings file); our MCP server by its name plus ``orchestrator`` in
  its arguments;
- commands use the current interpreter by absolute path (a pyenv shim adds ~43 ms per call) and, by default, the
  stdlib-only fast client ``orchestrator/hookclient.py`` run with ``-S`` (see :mod:`orchestrator.daemon`).
"""
from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MARK = "# orch:managed"
SERVER = "orchestrator"
#: seconds (ms for Gemini) a PreToolUse hook may take: an approval asked in the TUI waits for a person. A hook that
#: times out is treated as a non-blocking error by Claude Code, i.e. fail-open, so this must be generous.
PRE_TIMEOUT_S = 600


@dataclass(frozen=True)
class Event:
    name: str
    matcher: str | None = None  # None: the event takes no matcher
    timeout: int | None = None


@dataclass(frozen=True)
class AgentSpec:
    """Where an agent keeps its project hooks and MCP servers, and in which shape."""

    agent: str
    hooks_file: str  # relative to the project root
    events: tuple[Event, ...]
    shape: str  # "claude" ({hooks: {Event: [{matcher, hooks: [{type, command}]}]}}) or "cursor"
    mcp_file: str | None = None
    timeout_unit_ms: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


SPECS: dict[str, AgentSpec] = {
    "claude-code": AgentSpec(
        "claude-code", ".claude/settings.json",
        (Event("SessionStart"), Event("UserPromptSubmit"), Event("PreToolUse", "*", PRE_TIMEOUT_S),
         Event("PostToolUse", "*"), Event("Stop")),
        "claude", mcp_file=".mcp.json"),
    "codex": AgentSpec(
        "codex", ".codex/hooks.json",
        # Codex matchers are regexes and an omitted matcher matches every tool
        (Event("SessionStart", "startup|resume|clear"), Event("UserPromptSubmit"),
         Event("PreToolUse", None, PRE_TIMEOUT_S), Event("PostToolUse"), Event("Stop")),
        "claude"),
    "gemini": AgentSpec(
        "gemini", ".gemini/settings.json",
        (Event("SessionStart"), Event("BeforeAgent"), Event("BeforeTool", ".*", PRE_TIMEOUT_S),
         Event("AfterTool", ".*")),
        "claude", mcp_file=".gemini/settings.json", timeout_unit_ms=True),
    "cursor": AgentSpec(
        "cursor", ".cursor/hooks.json",
        (Event("sessionStart"), Event("preToolUse"), Event("beforeShellExecution"), Event("beforeMCPExecution"),
         Event("beforeReadFile"), Event("afterFileEdit"), Event("postToolUse")),
        "cursor", mcp_file=".cursor/mcp.json"),
}


def package_parent() -> Path:
    """The directory that contains the ``orchestrator`` package (a source checkout or site-packages)."""
    return Path(__file__).resolve().parent.parent.parent


def _in_site_packages(path: Path) -> bool:
    return path.name in ("site-packages", "dist-packages")


def hook_command(agent: str, *, python: str | None = None, fast: bool = True) -> str:
    """The shell command an agent runs for every hook event.

    Always the stdlib-only client, whose own boundary turns any failure into exit 2 (``python -m orchestrator
    hook`` would go through the CLI's error boundary, whose exit 3 for a bug is "non-blocking", i.e. fail-open, in
    Claude Code). ``fast=False`` only disables the daemon: every call is evaluated in-process.
    """
    python = python or sys.executable
    client = package_parent() / "orchestrator" / "hookclient.py"
    cmd = f"{shlex.quote(python)} -S {shlex.quote(str(client))} {agent}"
    if not fast:
        cmd = f"ORCH_NO_DAEMON=1 {cmd}"
    return f"{cmd} {MARK}"


def mcp_server_entry(agent: str, *, python: str | None = None) -> dict[str, Any]:
    """The ``orchestrator`` MCP server entry (stdio) for an agent's MCP configuration."""
    env: dict[str, str] = {}
    if agent in ("claude-code", "codex", "gemini"):
        env["ORCH_MCP_HOOKED"] = "1"  # the PreToolUse hook records the selection per session (see adapters.mcp)
    parent = package_parent()
    # Gemini CLI refuses PYTHONPATH in an MCP server's env ("dangerous environment variable override")
    if not _in_site_packages(parent) and agent != "gemini":
        env["PYTHONPATH"] = str(parent)
    entry: dict[str, Any] = {"command": python or sys.executable, "args": ["-m", "orchestrator", "mcp"]}
    if agent == "claude-code":
        entry = {"type": "stdio", **entry}
    if env:
        entry["env"] = env
    return entry


def _is_ours(hook: Any) -> bool:
    return isinstance(hook, dict) and isinstance(hook.get("command"), str) and hook["command"].endswith(MARK)


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        from orchestrator.errors import ConfigError

        raise ConfigError(f"not valid JSON ({exc}); fix or move it, then install again", file=path) from exc
    if not isinstance(data, dict):
        from orchestrator.errors import ConfigError

        raise ConfigError("expected a JSON object", file=path)
    return data


def _save(path: Path, data: dict[str, Any]) -> bool:
    """Write ``data`` as JSON atomically; False (and no write) when the file already says exactly that."""
    text = json.dumps(data, indent=2) + "\n"
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    from orchestrator.fsutil import atomic_write

    atomic_write(path, text.encode("utf-8"))
    return True


def _strip_hooks(hooks: dict[str, Any], shape: str) -> None:
    """Remove our entries from a ``hooks`` mapping, dropping groups and events left empty."""
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            if shape == "cursor":
                if not _is_ours(group):
                    kept.append(group)
                continue
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                inner = [h for h in group["hooks"] if not _is_ours(h)]
                if not inner and group["hooks"]:
                    continue  # the group held only our hooks
                group = {**group, "hooks": inner}
            kept.append(group)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]


def install(agent: str, root: str | os.PathLike[str], *, python: str | None = None, fast: bool = True,
            mcp: bool = True) -> list[Path]:
    """Write or merge the agent's hook configuration (and MCP server) under ``root``; returns the files written
    (none when everything was already installed exactly so)."""
    spec = SPECS[agent]
    root = Path(root)
    written: list[Path] = []
    path = root / spec.hooks_file
    data = _load(path)
    hooks = data.get("hooks")
    if hooks is None:
        hooks = data["hooks"] = {}
    if not isinstance(hooks, dict):
        from orchestrator.errors import ConfigError

        raise ConfigError("`hooks` is not an object", file=path)
    _strip_hooks(hooks, spec.shape)  # idempotent: replace our previous entries
    command = hook_command(agent, python=python, fast=fast)
    for event in spec.events:
        entry: dict[str, Any]
        if spec.shape == "cursor":
            entry = {"command": command}
            if event.timeout:
                entry["timeout"] = event.timeout
            hooks.setdefault(event.name, []).append(entry)
            continue
        hook: dict[str, Any] = {"type": "command", "command": command}
        if agent == "gemini":
            hook["name"] = "orchestrator"
        if event.timeout:
            hook["timeout"] = event.timeout * (1000 if spec.timeout_unit_ms else 1)
        group: dict[str, Any] = {"hooks": [hook]}
        if event.matcher is not None:
            group = {"matcher": event.matcher, **group}
        hooks.setdefault(event.name, []).append(group)
    if spec.shape == "cursor":
        data.setdefault("version", 1)
    if mcp and spec.mcp_file == spec.hooks_file:
        data.setdefault("mcpServers", {})[SERVER] = mcp_server_entry(agent, python=python)
    if _save(path, data):
        written.append(path)
    if mcp and agent == "codex":
        # Codex reads MCP servers from TOML, not JSON: its own module writes a managed block
        from orchestrator.adapters import codex_setup

        changed = codex_setup.install_mcp(root, mcp_server_entry(agent, python=python))
        if changed is not None:
            written.append(changed)
    if mcp and spec.mcp_file and spec.mcp_file != spec.hooks_file:
        mpath = root / spec.mcp_file
        mdata = _load(mpath)
        servers = mdata.setdefault("mcpServers", {})
        servers[SERVER] = mcp_server_entry(agent, python=python)
        if _save(mpath, mdata):
            written.append(mpath)
    return written


def _is_our_server(entry: Any) -> bool:
    return isinstance(entry, dict) and "orchestrator" in " ".join(map(str, entry.get("args") or []))


def uninstall(agent: str, root: str | os.PathLike[str]) -> list[Path]:
    """Remove what :func:`install` added (files left empty are deleted); returns the files changed."""
    spec = SPECS[agent]
    root = Path(root)
    changed: list[Path] = []
    for rel in dict.fromkeys(f for f in (spec.hooks_file, spec.mcp_file) if f):
        path = root / rel
        if not path.exists():
            continue
        data = _load(path)
        before = json.dumps(data, sort_keys=True)
        if rel == spec.hooks_file and isinstance(data.get("hooks"), dict):
            _strip_hooks(data["hooks"], spec.shape)
            if not data["hooks"]:
                del data["hooks"]
            if spec.shape == "cursor" and set(data) == {"version"}:
                data = {}
        if rel == spec.mcp_file and isinstance(data.get("mcpServers"), dict):
            if _is_our_server(data["mcpServers"].get(SERVER)):
                del data["mcpServers"][SERVER]
            if not data["mcpServers"]:
                del data["mcpServers"]
        if json.dumps(data, sort_keys=True) == before:
            continue
        if data:
            _save(path, data)
        else:
            path.unlink()
            if path.parent != root and not any(path.parent.iterdir()):
                path.parent.rmdir()  # e.g. the .claude/ or .cursor/ that install created
        changed.append(path)
    if agent == "codex":
        from orchestrator.adapters import codex_setup

        for removed in (codex_setup.uninstall_mcp(root), codex_setup.remove_trust(root)):
            if removed is not None:
                changed.append(removed)
    return changed


def notes(agent: str, root: str | os.PathLike[str]) -> list[str]:
    """What a user must still do by hand after ``install`` for the hooks to actually run (trust, mostly)."""
    if agent == "codex":
        from orchestrator.adapters import codex_setup

        return codex_setup.notes(Path(root))
    if agent == "gemini":
        from orchestrator.adapters import gemini_setup

        return gemini_setup.notes(Path(root))
    return []
