"""Qwen Code setup: folder trust (``orch install qwen-code --trust``), the install notes and ``orch doctor``'s checks.

``orch install qwen-code`` writes Claude-style hooks and the ``orchestrator`` MCP server into ``.qwen/settings.json``
(:data:`orchestrator.adapters.installer.SPECS`). What decides whether Qwen Code (verified with 0.24.4) runs them:

- **MCP approval**: outside ``--yolo`` (an interactive or stream-json session) a project's MCP servers start only once
  the person approved them (``~/.qwen/mcpApprovals.json``, bound to a hash of the entry): until then the agent has
  no ``select_active_intent``, so every mutation is refused. ``--trust`` approves orchestrator's.
- **Folder trust** is off by default (project hooks and MCP servers load as they are). Turned on
  (``security.folderTrust.enabled: true`` in the user's or the system settings), an untrusted folder loads neither
  the project's hooks nor any MCP server: every call runs ungoverned. Trust lives in ``~/.qwen/trustedFolders.json``
  (``$QWEN_HOME``, or ``$QWEN_CODE_TRUSTED_FOLDERS_PATH``), Gemini CLI's format: ``{"<dir>": "TRUST_FOLDER"}``.
- ``disableAllHooks: true`` (user, system or project settings), ``--safe-mode`` and ``--bare`` run no hook at all.
- **Fail-open**: a PreToolUse hook that exits 1, is killed, outlives its timeout, exits 2 with nothing on stderr or
  prints a JSON object without a decision lets the call RUN (hookRunner/toolHookTriggers of 0.24.4). The installed
  command is the launcher behind ``|| … exit 2`` (a missing launcher blocks), the hook client turns every failure
  of its own into exit 2 with a text reason, and the PreToolUse timeout (660 s) outlasts the client's own deadline
  (``ORCH_HOOK_TIMEOUT``, 600 s).
- **No sandbox from PreToolUse**: Qwen ignores its ``updatedInput``. Only a PermissionRequest (an interactive session
  without ``--yolo``) can hand Qwen the sandboxed command; elsewhere the approval channel decides what the analyzer
  cannot vouch for, and ``allow`` does not waive it (:mod:`orchestrator.adapters.qwen_code`).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from orchestrator.adapters.managed import MARK, SERVER

AGENT = "qwen-code"
LABEL = "Qwen Code"
SETTINGS_FILE = ".qwen/settings.json"
#: the version tests/e2e/test_qwen_code.py runs (tests/e2e/package.json)
VERIFIED = "0.24.4"
#: the installed PreToolUse timeout must be at least this (the hook client's deadline plus a margin)
MIN_PRE_TIMEOUT = 660


def qwen_dir(env: Mapping[str, str] | None = None) -> Path:
    """The user's Qwen Code directory (``$QWEN_HOME``, default ``~/.qwen``)."""
    env = os.environ if env is None else env
    if env.get("QWEN_HOME"):
        return Path(env["QWEN_HOME"])
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".qwen"


def trusted_folders_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("QWEN_CODE_TRUSTED_FOLDERS_PATH") or qwen_dir(env) / "trustedFolders.json")


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _settings_files(root: Path, env: Mapping[str, str]) -> list[Path]:
    """The settings Qwen merges that can turn hooks or trust off: system, user, project."""
    system = Path(env.get("QWEN_CODE_SYSTEM_SETTINGS_PATH") or "/etc/qwen-code/settings.json")
    return [system, qwen_dir(env) / "settings.json", root / SETTINGS_FILE]


def folder_trust_enabled(root: Path, env: Mapping[str, str] | None = None) -> str | None:
    """The settings file that turns folder trust on, or None (off: Qwen's default)."""
    env = os.environ if env is None else env
    for path in _settings_files(root, env)[:2]:  # a project cannot turn trust on for itself
        data = _json(path)
        sec = data.get("security") if isinstance(data, dict) else None
        ft = sec.get("folderTrust") if isinstance(sec, dict) else None
        if isinstance(ft, dict) and ft.get("enabled") is True:
            return str(path)
    return None


def folder_trust(root: Path, env: Mapping[str, str] | None = None) -> tuple[bool | None, str]:
    """(trusted?, why): True when folder trust is off; else what ``trustedFolders.json`` says (None: nothing)."""
    env = os.environ if env is None else env
    enabled = folder_trust_enabled(root, env)
    if enabled is None:
        return True, "folder trust is off (Qwen Code's default)"
    from orchestrator.adapters.gemini_setup import folder_rule

    trusted, why = folder_rule(root, trusted_folders_path(env))
    return trusted, f"folder trust is on ({enabled}); {why}"


def write_trust(root: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """Trust ``root`` in Qwen Code's ``trustedFolders.json`` (``TRUST_FOLDER``) and approve orchestrator's MCP server
    for it in ``mcpApprovals.json``, keeping the user's other entries; returns the files written."""
    root = Path(root).resolve()
    written = [_merge(trusted_folders_path(env), str(root), "TRUST_FOLDER")]
    config = mcp_config(root)
    if config is not None:
        record = {"hash": mcp_hash(config), "status": "approved"}
        path = mcp_approvals_path(env)
        data = _object(path)
        project = data.get(str(root))
        written.append(_merge(path, str(root), {**(project if isinstance(project, dict) else {}), SERVER: record}))
    return written


def _object(path: Path) -> dict[str, Any]:
    from orchestrator.core.errors import ConfigError

    data = _json(path) if path.exists() else {}
    if not isinstance(data, dict):
        raise ConfigError("not a JSON object; fix or move it, then run `orch install qwen-code --trust` again",
                          file=path)
    return data


def _merge(path: Path, key: str, value: Any) -> Path:
    from orchestrator.core.fsutil import atomic_write

    data = _object(path)
    data[key] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
    path.chmod(0o600)
    return path


def mcp_approvals_path(env: Mapping[str, str] | None = None) -> Path:
    """Where Qwen Code keeps its approvals of project MCP servers (``$QWEN_CODE_MCP_APPROVALS_PATH``)."""
    env = os.environ if env is None else env
    return Path(env.get("QWEN_CODE_MCP_APPROVALS_PATH") or qwen_dir(env) / "mcpApprovals.json")


def mcp_config(root: Path) -> dict[str, Any] | None:
    """The ``orchestrator`` MCP server Qwen Code uses in ``root``: ``.qwen/settings.json``'s, else ``.mcp.json``'s."""
    for rel in (SETTINGS_FILE, ".mcp.json"):
        data = _json(Path(root) / rel)
        servers = data.get("mcpServers") if isinstance(data, dict) else None
        if isinstance(servers, dict) and isinstance(servers.get(SERVER), dict):
            return servers[SERVER]
    return None


def mcp_hash(config: Mapping[str, Any]) -> str:
    """Qwen Code 0.24.4's ``hashMcpServerConfig``: sha256 of the entry's JSON (keys sorted, no spaces) without the
    fields that do not change what runs (``scope``, ``extensionName``, ``description``). An approval holds only
    while the entry hashes the same: editing it asks again."""
    import hashlib

    behavioral = {k: v for k, v in config.items() if k not in ("scope", "extensionName", "description")}
    text = json.dumps(behavioral, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def mcp_approved(root: Path, env: Mapping[str, str] | None = None) -> bool | None:
    """Whether Qwen Code has approved orchestrator's MCP server here as it is now (None: there is none)."""
    config = mcp_config(root)
    if config is None:
        return None
    data = _json(mcp_approvals_path(env))
    project = data.get(str(Path(root).resolve())) if isinstance(data, dict) else None
    record = project.get(SERVER) if isinstance(project, dict) else None
    return isinstance(record, dict) and record.get("status") == "approved" and record.get("hash") == mcp_hash(config)


def hooks_disabled(root: Path, env: Mapping[str, str] | None = None) -> str | None:
    """The settings file that sets ``disableAllHooks: true``, or None."""
    env = os.environ if env is None else env
    for path in _settings_files(root, env):
        data = _json(path)
        if isinstance(data, dict) and data.get("disableAllHooks") is True:
            return str(path)
    return None


def notes(root: Path) -> list[str]:
    """What ``orch install qwen-code`` tells the user."""
    return [
        f"Qwen Code runs {SETTINGS_FILE} (these hooks and the MCP server) as it is while folder trust is off (its "
        "default). With security.folderTrust.enabled it loads them only in a TRUSTED folder:",
        f"  orch install qwen-code --trust   (writes {trusted_folders_path()}), or trust the folder when qwen asks.",
        "  Outside --yolo Qwen also asks once to approve the project's MCP server: --trust approves orchestrator's "
        f"({mcp_approvals_path()}).",
        "  Never run `qwen --safe-mode` or `--bare`, nor set disableAllHooks: Qwen then runs no hook (nothing governed).",
        "Qwen Code cannot run a shell command in orchestrator's sandbox from PreToolUse: commands the analyzer cannot "
        "vouch for go to the approval channel (with --yolo / -p a refusal); an interactive session without --yolo "
        "runs them in the sandbox (PermissionRequest). The agent selects its intent with "
        "mcp__orchestrator__select_active_intent. `orch doctor` checks all of this.",
    ]


def _our_pre_timeout(root: Path) -> tuple[bool, int | None]:
    """(our PreToolUse hook is installed behind the launcher's fail-closed wrapper, its timeout)."""
    data = _json(root / SETTINGS_FILE)
    groups = ((data or {}).get("hooks") or {}).get("PreToolUse") if isinstance(data, dict) else None
    for group in groups if isinstance(groups, list) else ():
        for hook in (group.get("hooks") or []) if isinstance(group, dict) else ():
            command = hook.get("command") if isinstance(hook, dict) else None
            if isinstance(command, str) and command.endswith(MARK):
                timeout = hook.get("timeout")
                return "exit 2" in command, timeout if isinstance(timeout, int) else None
    return False, None


def check_qwen(ws: Any, env: Mapping[str, str] | None = None) -> Iterable[Any]:
    """``orch doctor``: will Qwen Code run orchestrator's hooks here, and what fails open? (That the hook command
    runs and refuses a probe, and that the MCP server answers, is checked with every agent's.)"""
    from orchestrator.adapters.hostcli import version_finding
    from orchestrator.core.findings import Finding

    env = os.environ if env is None else env
    root = Path(ws.root)
    wrapped, timeout = _our_pre_timeout(root)
    if timeout is None and not wrapped:
        return
    disabled = hooks_disabled(root, env)
    if disabled:
        yield Finding("qwen-code.hooks", "fail", f"disableAllHooks is true in {disabled}: Qwen Code runs no hook, so "
                      "its tool calls are not governed", f"remove disableAllHooks from {disabled}")
    trusted, why = folder_trust(root, env)
    fix = f"orch install qwen-code --trust   (writes {trusted_folders_path(env)} and {mcp_approvals_path(env)})"
    if trusted:
        yield Finding("qwen-code.trust", "ok", f"Qwen Code loads {SETTINGS_FILE} here ({why})")
    else:
        yield Finding("qwen-code.trust", "fail", f"Qwen Code ignores {SETTINGS_FILE} here ({why}): no hook and no MCP "
                      "server, every call ungoverned", fix)
    approved = mcp_approved(root, env)
    if approved is False:
        yield Finding("qwen-code.mcp", "warn", "Qwen Code has not approved orchestrator's MCP server here (or it changed "
                      "since): outside --yolo it starts without it and asks, so until approved the agent cannot "
                      "select an intent and every mutation is refused", fix)
    elif approved:
        yield Finding("qwen-code.mcp", "ok", f"orchestrator's MCP server is approved in {mcp_approvals_path(env)}")
    if wrapped and (timeout or 0) >= MIN_PRE_TIMEOUT:
        yield Finding("qwen-code.failopen", "ok", "Qwen Code lets a call run when its PreToolUse hook exits 1, crashes "
                      f"or times out: the hook command turns every failure into exit 2 with a reason, and its timeout "
                      f"({timeout} s) outlasts the hook client's deadline")
    else:
        yield Finding("qwen-code.failopen", "fail", f"the PreToolUse hook in {SETTINGS_FILE} "
                      f"{'has no fail-closed wrapper' if not wrapped else f'times out after {timeout} s'}: Qwen Code "
                      "lets a call RUN when its hook fails or times out", "orch install qwen-code")
    from orchestrator.pre.approval import channel_of

    try:
        from orchestrator.config.policy import load

        channel = channel_of(load(ws.policy_file))
    except Exception:  # noqa: BLE001 - a broken policy is check_config's to report
        channel = "unknown: the policy does not load"
    yield Finding("qwen-code.sandbox", "info", "Qwen Code ignores updatedInput in PreToolUse: shell commands run "
                  "outside orchestrator's kernel sandbox except through PermissionRequest (interactive, not --yolo). "
                  f"What the analyzer cannot vouch for goes to the approval channel ({channel}; `allow` asks here "
                  "instead); with --yolo / -p it is refused")
    yield version_finding("qwen-code.version", LABEL, "qwen", VERIFIED, env)
