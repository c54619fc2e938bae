"""``orch install <agent>`` / ``orch uninstall <agent>``: wire orchestrator's hooks and MCP server into an agent's
project configuration, merging with what the user already has.

Rules:
- the user's settings are kept: we only add hook entries and one MCP server named ``orchestrator``;
- idempotent: installing twice leaves one copy (our entries are replaced, not duplicated);
- uninstall removes only what install added. Our hook entries are recognised by a trailing shell comment
  ``# orch:managed`` in their command (agents run hook commands through a shell, so the comment is inert, and no
  unknown key is added to a schema-validated settings file); our MCP server by its name plus ``orchestrator`` in
  its arguments;
- two scopes. ``shared`` (default): the files teams commit (``.claude/settings.json``, ``.mcp.json``, ``.codex/``,
  ``.gemini/``, ``.cursor/``) name only the committed launcher ``.orchestration/bin/orch-hook``, which finds an
  interpreter with orchestrator on each machine (remembering it in ``.orchestration/run/hook-python``) and fails
  closed with exit 2 and a clear message when there is none. The hook command itself ends in ``|| … exit 2`` so a
  launcher that is missing or not executable also blocks instead of being a non-blocking error. ``local``: machine
  paths (this interpreter, by absolute path: a pyenv shim adds ~43 ms per call) go to ``.claude/settings.local.json``,
  which Claude Code keeps out of git; nothing shared is changed but the MCP entry;
- either way the hook runs the stdlib-only fast client ``orchestrator/hookclient.py`` with ``-S`` (see
  :mod:`orchestrator.daemon.server`).

For other installers (Codex, Gemini): :func:`launcher_command` is the portable hook command, :func:`mcp_server_entry`
the portable MCP entry, :func:`write_launcher` writes the launcher (and remembers this interpreter); see
docs/adapters.md.
"""
from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from orchestrator.adapters.managed import MARK, PLUGINS, SERVER

#: the committed launcher, relative to the project root
LAUNCHER = ".orchestration/bin/orch-hook"
#: this machine's interpreter for the launcher (runtime state: .orchestration/run/ is never committed)
REMEMBERED = ".orchestration/run/hook-python"
SCOPES = ("shared", "local")
#: the environment variable each agent sets to the project root when it runs a hook (None: not known to exist)
PROJECT_VAR: dict[str, str | None] = {"claude-code": "CLAUDE_PROJECT_DIR", "gemini": "GEMINI_PROJECT_DIR",
                                      "cursor": "CURSOR_PROJECT_DIR", "codex": None,
                                      "copilot": "COPILOT_PROJECT_DIR", "qwen-code": "QWEN_PROJECT_DIR"}
#: Claude Code keeps this file out of git (it writes it to .gitignore itself); machine paths go there
LOCAL_SETTINGS = {"claude-code": ".claude/settings.local.json"}
#: seconds (ms for Gemini) a PreToolUse hook may take: an approval asked in the TUI waits for a person. A hook that
#: times out is treated as a non-blocking error by Claude Code, and lets the call run in Copilot CLI, i.e.
#: fail-open, so this must be generous — and above the hook client's own deadline (``ORCH_HOOK_TIMEOUT``, 570 s),
#: which answers "blocked" first whatever hangs.
PRE_TIMEOUT_S = 600


@dataclass(frozen=True)
class Event:
    name: str
    matcher: str | None = None  # None: the event takes no matcher
    timeout: int | None = None
    #: Claude Code's ``onFailure``: "block" makes a hook that cannot start, times out, is killed or exits with
    #: another code than 0 or 2 block the call (its default, "continue", runs the call without the hook)
    on_failure: str | None = None


@dataclass(frozen=True)
class AgentSpec:
    """Where an agent keeps its project hooks and MCP servers, and in which shape."""

    agent: str
    hooks_file: str  # relative to the project root
    events: tuple[Event, ...]
    # "claude" ({hooks: {Event: [{matcher, hooks: [{type, command}]}]}}), "cursor" ({version, hooks: {event:
    # [{command}]}}) or "copilot" ({version, hooks: {event: [{type, bash, timeoutSec}]}})
    shape: str
    mcp_file: str | None = None
    timeout_unit_ms: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


SPECS: dict[str, AgentSpec] = {
    "claude-code": AgentSpec(
        "claude-code", ".claude/settings.json",
        (Event("SessionStart"), Event("UserPromptSubmit"), Event("PreToolUse", "*", PRE_TIMEOUT_S, "block"),
         Event("PostToolUse", "*"), Event("PostToolUseFailure", "*"), Event("Stop")),
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
    # a file of its own in .github/hooks/ (Copilot CLI and the cloud agent read every *.json there); one identical
    # command per event, which the adapter tells apart by the payload's shape. A preToolUse that outlives its
    # timeoutSec lets the call RUN in Copilot: the hook client's own deadline (ORCH_HOOK_TIMEOUT, 600 s, fails
    # closed) must come first, hence the margin
    "copilot": AgentSpec(
        "copilot", ".github/hooks/orchestrator.json",
        (Event("sessionStart"), Event("userPromptSubmitted"), Event("preToolUse", None, PRE_TIMEOUT_S + 60),
         Event("postToolUse")),
        "copilot", mcp_file=".github/mcp.json"),
    # Claude Code's events in .qwen/settings.json (mcpServers there too). Timeouts are seconds; a PreToolUse that
    # outlives its timeout lets the call RUN in Qwen Code: the hook client's own deadline must come first. The
    # PermissionRequest hook is what lets an interactive session run a command in the kernel sandbox
    # (adapters/qwen_code.py)
    "qwen-code": AgentSpec(
        "qwen-code", ".qwen/settings.json",
        (Event("SessionStart"), Event("UserPromptSubmit"), Event("PreToolUse", "*", PRE_TIMEOUT_S + 60),
         Event("PermissionRequest", "run_shell_command", PRE_TIMEOUT_S + 60), Event("PostToolUse", "*"),
         Event("PostToolUseFailure", "*")),
        "claude", mcp_file=".qwen/settings.json"),
}
#: shapes whose events hold a flat list of hook entries (no matcher groups)
_FLAT = ("cursor", "copilot")

#: agents installed by a module of their own rather than as hook entries in a settings file (opencode runs no hook
#: commands: it loads a plugin). Each module has ``install(root, python=, mcp=, scope=)``, ``uninstall(root)`` and
#: ``notes(root)``; named, not imported, so that this module stays below them in the import graph.
OWN_SETUP: dict[str, str] = {"opencode": "orchestrator.adapters.opencode_setup",
                              "kilo": "orchestrator.adapters.kilo_setup", "pi": "orchestrator.adapters.pi_setup",
                              "cline": "orchestrator.adapters.cline_setup"}
#: every agent ``orch install`` knows
AGENTS: tuple[str, ...] = tuple(sorted([*SPECS, *OWN_SETUP]))


def own_setup(agent: str) -> Any:
    """The setup module of an agent installed by a module of its own (:data:`OWN_SETUP`), else None."""
    import importlib

    name = OWN_SETUP.get(agent)
    return importlib.import_module(name) if name else None


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


def _project_dir_expr(agent: str) -> str:
    """Shell text for the project root in a hook command: the agent's own variable, else the git top level."""
    top = '$(git rev-parse --show-toplevel 2>/dev/null || pwd)'
    var = PROJECT_VAR.get(agent)
    return f'"${{{var}:-{top}}}"' if var else f'"{top}"'


def launcher_command(agent: str, *, fast: bool = True) -> str:
    """The portable hook command: the committed launcher, found from the project root, failing closed.

    ``|| { …; exit 2; }``: any failure of the launcher (missing, not executable: exit 126/127; a crash) becomes exit
    2, which blocks the call, where Claude Code would treat 126/127/1 as a non-blocking error and run it
    ungoverned. The launcher's own exit 2 passes through unchanged.
    """
    msg = (f"orchestrator: the hook launcher {LAUNCHER} is missing or failed; this call is blocked. Restore it "
           f"(git checkout {LAUNCHER}, or orch install {agent}) and run orch doctor")
    cmd = (f"{_project_dir_expr(agent)}/{LAUNCHER} {agent} || {{ rc=$?; [ $rc -eq 2 ] || "
           f"echo {shlex.quote(msg)} >&2; exit 2; }}")
    if not fast:
        cmd = f"ORCH_NO_DAEMON=1 {cmd}"
    return f"{cmd} {MARK}"


def launcher_text() -> str:
    """The launcher script (``orchestrator/data/templates/orch-hook``)."""
    from importlib import resources

    return resources.files("orchestrator.data").joinpath("templates").joinpath("orch-hook").read_text(encoding="utf-8")


def write_launcher(root: str | os.PathLike[str], *, python: str | None = None) -> list[Path]:
    """Write ``.orchestration/bin/orch-hook`` (executable, to be committed) and remember ``python`` (default: this
    interpreter) for this machine in ``.orchestration/run/hook-python``; returns the committed files written."""
    from orchestrator.core.fsutil import atomic_write

    root = Path(root)
    written: list[Path] = []
    path = root / LAUNCHER
    text = launcher_text()
    try:
        same = path.read_text(encoding="utf-8") == text and os.access(path, os.X_OK)
    except (OSError, UnicodeDecodeError):
        same = False
    if not same:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text.encode("utf-8"))
        path.chmod(0o755)
        written.append(path)
    remember(root, python=python)
    return written


def remember(root: str | os.PathLike[str], *, python: str | None = None) -> Path:
    """Record this machine's interpreter and hook client for the launcher (runtime state, not committed)."""
    from orchestrator.core.fsutil import atomic_write

    path = Path(root) / REMEMBERED
    path.parent.mkdir(parents=True, exist_ok=True)
    client = package_parent() / "orchestrator" / "hookclient.py"
    atomic_write(path, f"{python or sys.executable}\n{client}\n".encode())
    return path


def mcp_server_entry(agent: str, *, python: str | None = None, scope: str = "local") -> dict[str, Any]:
    """The ``orchestrator`` MCP server entry (stdio) for an agent's MCP configuration.

    ``scope="shared"``: through the committed launcher, found from the server's working directory (the project),
    so the entry holds no machine path; ``"local"``: this interpreter by absolute path.
    """
    env: dict[str, str] = {}
    if agent in ("claude-code", "codex", "gemini", "copilot", "opencode", "qwen-code", "cline"):
        env["ORCH_MCP_HOOKED"] = "1"  # the PreToolUse hook records the selection per session (see adapters.mcp)
    if scope == "shared":
        script = f'exec "$(git rev-parse --show-toplevel 2>/dev/null || pwd)/{LAUNCHER}" mcp'
        shared: dict[str, Any] = {"command": "sh", "args": ["-c", script, "orchestrator"], "env": env}
        if agent == "qwen-code":
            shared["trust"] = True  # its tools only select and list intents: no confirmation prompt in Qwen Code
        return {"type": "stdio", **shared} if agent == "claude-code" else shared
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


def command_of(hook: Any) -> str | None:
    """The shell command of a hook entry (``command``; Copilot CLI's ``bash``)."""
    if not isinstance(hook, dict):
        return None
    command = hook.get("command", hook.get("bash"))
    return command if isinstance(command, str) else None


def _is_ours(hook: Any) -> bool:
    command = command_of(hook)
    return command is not None and command.endswith(MARK)


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        from orchestrator.core.errors import ConfigError

        raise ConfigError(f"not valid JSON ({exc}); fix or move it, then install again", file=path) from exc
    if not isinstance(data, dict):
        from orchestrator.core.errors import ConfigError

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
    from orchestrator.core.fsutil import atomic_write

    atomic_write(path, text.encode("utf-8"))
    return True


def save_mcp_server(path: Path, entry: dict[str, Any]) -> Path | None:
    """Register (or refresh) orchestrator's MCP server ``entry`` in the JSON file ``path`` (``mcpServers``, the other
    servers kept); ``path`` when the file changed."""
    data = _load(path)
    servers = data.get("mcpServers")
    if not isinstance(servers, dict):
        servers = data["mcpServers"] = {}
    servers[SERVER] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    return path if _save(path, data) else None


def drop_mcp_server(data: dict[str, Any]) -> None:
    """Remove orchestrator's server from a settings object's ``mcpServers`` (and the key once it is empty)."""
    servers = data.get("mcpServers")
    if not isinstance(servers, dict):
        return
    if _is_our_server(servers.get(SERVER)):
        del servers[SERVER]
    if not servers:
        del data["mcpServers"]


def _strip_hooks(hooks: dict[str, Any], shape: str) -> None:
    """Remove our entries from a ``hooks`` mapping, dropping groups and events left empty."""
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            if shape in _FLAT:
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
            mcp: bool = True, scope: str = "shared") -> list[Path]:
    """Write or merge the agent's hook configuration (and MCP server) under ``root``; returns the files written
    (none when everything was already installed exactly so).

    ``scope`` (see the module docstring): ``shared`` writes the launcher and names it in the committed files;
    ``local`` writes this interpreter's absolute path into the agent's machine-local settings (Claude Code only).
    """
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {SCOPES}, not {scope!r}")
    spec = SPECS[agent]
    root = Path(root)
    written: list[Path] = []
    hooks_file = spec.hooks_file
    if scope == "local":
        local = LOCAL_SETTINGS.get(agent)
        if local is None:
            from orchestrator.core.errors import UsageError

            raise UsageError(f"{agent} has no machine-local settings file; install it with --scope shared",
                             hint="the shared install names only the committed launcher .orchestration/bin/orch-hook")
        hooks_file = local
    written.extend(_drop_other_scope(spec, root, hooks_file))
    written.extend(write_launcher(root, python=python))
    path = root / hooks_file
    data = _load(path)
    hooks = data.get("hooks")
    if hooks is None:
        hooks = data["hooks"] = {}
    if not isinstance(hooks, dict):
        from orchestrator.core.errors import ConfigError

        raise ConfigError("`hooks` is not an object", file=path)
    _strip_hooks(hooks, spec.shape)  # idempotent: replace our previous entries
    command = launcher_command(agent, fast=fast) if scope == "shared" else hook_command(agent, python=python,
                                                                                         fast=fast)
    _add_hooks(hooks, spec, command)
    if spec.shape in _FLAT:
        data.setdefault("version", 1)
    if mcp and spec.mcp_file == hooks_file:
        data.setdefault("mcpServers", {})[SERVER] = mcp_server_entry(agent, python=python, scope=scope)
    if _save(path, data):
        written.append(path)
    if mcp:
        written.extend(_install_mcp_elsewhere(spec, root, hooks_file, python=python, scope=scope))
    return written


def _drop_other_scope(spec: AgentSpec, root: Path, hooks_file: str) -> list[Path]:
    """One install at a time: drop our hooks from the other scope's settings file, or every call would run twice;
    returns the files changed (or deleted, when nothing else was left in them)."""
    changed: list[Path] = []
    for other in {spec.hooks_file, LOCAL_SETTINGS.get(spec.agent)} - {hooks_file, None}:
        opath = root / cast(str, other)  # None was taken out by the set difference
        if opath.exists():
            odata = _load(opath)
            if isinstance(odata.get("hooks"), dict):
                before = json.dumps(odata, sort_keys=True)
                _strip_hooks(odata["hooks"], spec.shape)
                if not odata["hooks"]:
                    del odata["hooks"]
                if json.dumps(odata, sort_keys=True) != before:
                    if odata:
                        _save(opath, odata)
                    else:
                        opath.unlink()
                    changed.append(opath)
    return changed


def _add_hooks(hooks: dict[str, Any], spec: AgentSpec, command: str) -> None:
    """Append one hook running ``command`` per event of ``spec``, in the agent's shape."""
    for event in spec.events:
        entry: dict[str, Any]
        if spec.shape == "cursor":
            entry = {"command": command}
            if event.timeout:
                entry["timeout"] = event.timeout
            hooks.setdefault(event.name, []).append(entry)
            continue
        if spec.shape == "copilot":
            entry = {"type": "command", "bash": command}
            if event.timeout:
                entry["timeoutSec"] = event.timeout
            hooks.setdefault(event.name, []).append(entry)
            continue
        hook: dict[str, Any] = {"type": "command", "command": command}
        if spec.agent == "gemini":
            hook["name"] = "orchestrator"
        if event.timeout:
            hook["timeout"] = event.timeout * (1000 if spec.timeout_unit_ms else 1)
        if event.on_failure:
            hook["onFailure"] = event.on_failure
        group: dict[str, Any] = {"hooks": [hook]}
        if event.matcher is not None:
            group = {"matcher": event.matcher, **group}
        hooks.setdefault(event.name, []).append(group)


def _install_mcp_elsewhere(spec: AgentSpec, root: Path, hooks_file: str, *, python: str | None,
                           scope: str) -> list[Path]:
    """The MCP server where it does not live in the hooks file: Codex's TOML, or a separate JSON file."""
    written: list[Path] = []
    if spec.agent == "codex":
        # Codex reads MCP servers from TOML, not JSON: its own module writes a managed block
        from orchestrator.adapters import codex_setup

        changed = codex_setup.install_mcp(root, mcp_server_entry(spec.agent, python=python, scope=scope))
        if changed is not None:
            written.append(changed)
    if spec.mcp_file and spec.mcp_file != hooks_file:
        mpath = root / spec.mcp_file
        mdata = _load(mpath)
        servers = mdata.setdefault("mcpServers", {})
        # the MCP file is shared in both scopes (Claude Code's local MCP servers live in ~/.claude.json)
        servers[SERVER] = mcp_server_entry(spec.agent, python=python, scope="shared")
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
    for rel in dict.fromkeys(f for f in (spec.hooks_file, LOCAL_SETTINGS.get(agent), spec.mcp_file) if f):
        path = root / rel
        if not path.exists():
            continue
        data = _load(path)
        before = json.dumps(data, sort_keys=True)
        if rel in (spec.hooks_file, LOCAL_SETTINGS.get(agent)) and isinstance(data.get("hooks"), dict):
            _strip_hooks(data["hooks"], spec.shape)
            if not data["hooks"]:
                del data["hooks"]
            if spec.shape in _FLAT and set(data) == {"version"}:
                data = {}
        if rel == spec.mcp_file:
            drop_mcp_server(data)
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
    launcher = root / LAUNCHER
    if changed and launcher.exists() and not _launcher_in_use(root):
        launcher.unlink()  # the last agent that named it is gone
        if not any(launcher.parent.iterdir()):
            launcher.parent.rmdir()
        changed.append(launcher)
    return changed


def _launcher_in_use(root: Path) -> bool:
    """Whether any agent's hook settings (or one of orchestrator's plugins: opencode, Kilo, pi, Cline) still name the
    launcher."""
    if any((root / plugin).exists() for plugin in PLUGINS.values()):
        return True
    for agent, spec in SPECS.items():
        for rel in dict.fromkeys(f for f in (spec.hooks_file, LOCAL_SETTINGS.get(agent)) if f):
            try:
                text = (root / rel).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if LAUNCHER in text:
                return True
    return False


def notes(agent: str, root: str | os.PathLike[str]) -> list[str]:
    """What a user must still do by hand after ``install`` for the hooks to actually run (trust, mostly)."""
    if agent == "codex":
        from orchestrator.adapters import codex_setup

        return codex_setup.notes(Path(root))
    if agent == "gemini":
        from orchestrator.adapters import gemini_setup

        return gemini_setup.notes(Path(root))
    if agent == "copilot":
        from orchestrator.adapters import copilot_setup

        return copilot_setup.notes(Path(root))
    if agent == "qwen-code":
        from orchestrator.adapters import qwen_setup

        return qwen_setup.notes(Path(root))
    return []
