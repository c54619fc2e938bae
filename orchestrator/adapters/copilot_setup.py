"""GitHub Copilot CLI setup notes and ``orch doctor``'s checks: is the folder trusted, are hooks enabled?

Copilot CLI (1.0.102, verified in tests/e2e/test_copilot_cli.py) runs a repository's hooks (``.github/hooks/*.json``
and, Claude-shaped, ``.claude/settings.json``) and its MCP servers (``.github/mcp.json``, ``.mcp.json``) only in a
*trusted* folder. Untrusted, ``copilot -p`` runs anyway, WITHOUT them: every call ungoverned, silently. Trust is
kept in ``$COPILOT_HOME/config.json`` (default ``~/.copilot/config.json``, JSON with ``//`` comments) as
``"trustedFolders": ["<abs path>", …]``, written when the user answers the trust prompt of an interactive
``copilot``; ``--trust-folder`` trusts the folder for one prompt-mode session, and ``COPILOT_ALLOW_ALL=true``
(exactly ``true``) trusts it for that run. ``"disableAllHooks": true`` in the user's ``settings.json`` or the
repository's ``.github/copilot/settings*.json`` turns every hook off (the latter is a governance file).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from orchestrator.adapters.managed import MARK

HOOKS_FILE = ".github/hooks/orchestrator.json"
REPO_SETTINGS = (".github/copilot/settings.json", ".github/copilot/settings.local.json")


def copilot_home(env: Mapping[str, str] | None = None) -> Path:
    """The user's Copilot CLI directory (``$COPILOT_HOME``, default ``~/.copilot``)."""
    env = os.environ if env is None else env
    if env.get("COPILOT_HOME"):
        return Path(env["COPILOT_HOME"])
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".copilot"


def _jsonc(path: Path) -> Any:
    """A JSON file that may carry ``//`` comment lines (Copilot's config.json does); None when unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    try:
        return json.loads("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//")))
    except ValueError:
        return None


def folder_trust(root: Path, env: Mapping[str, str] | None = None) -> tuple[bool, str]:
    """(trusted?, why): ``COPILOT_ALLOW_ALL=true``, or the folder or a parent in ``trustedFolders``."""
    env = os.environ if env is None else env
    if env.get("COPILOT_ALLOW_ALL") == "true":
        return True, "COPILOT_ALLOW_ALL=true in this environment"
    path = copilot_home(env) / "config.json"
    config = _jsonc(path)
    folders = config.get("trustedFolders") if isinstance(config, dict) else None
    root = Path(root).resolve()
    for raw in folders if isinstance(folders, list) else ():
        if not isinstance(raw, str):
            continue
        try:
            folder = Path(raw).resolve()
        except (OSError, RuntimeError):
            continue
        if folder == root or folder in root.parents:
            return True, f"{raw} is in trustedFolders of {path}"
    return False, f"{path} does not list it in trustedFolders"


def hooks_disabled(root: Path, env: Mapping[str, str] | None = None) -> str | None:
    """The settings file that sets ``disableAllHooks: true``, or None."""
    for path in (copilot_home(env) / "settings.json", *(Path(root) / rel for rel in REPO_SETTINGS)):
        data = _jsonc(path)
        if isinstance(data, dict) and data.get("disableAllHooks") is True:
            return str(path)
    return None


def notes(root: Path) -> list[str]:
    """What ``orch install copilot`` tells the user about folder trust."""
    return [
        "Copilot CLI runs .github/hooks/ (these hooks) and .github/mcp.json only in a TRUSTED folder; untrusted, it "
        "runs WITHOUT them (nothing governed, no warning):",
        f"  - start `copilot` once in {root} and choose to trust the folder (saved in ~/.copilot/config.json);",
        "  - headless/CI: `copilot -p ... --trust-folder` (or COPILOT_ALLOW_ALL=true).",
        "The agent selects its intent with the MCP tool orchestrator-select_active_intent. For GitHub's cloud coding "
        "agent, commit .github/hooks/ to the default branch and install orchestrator in "
        ".github/workflows/copilot-setup-steps.yml (docs/adapters.md). `orch doctor` checks the trust.",
    ]


def _ours(root: Path) -> bool:
    try:
        return MARK in (root / HOOKS_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False


def _claude_hooks(root: Path) -> bool:
    try:
        return MARK in (root / ".claude" / "settings.json").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False


def check_copilot(ws: Any) -> Iterable[Any]:
    """``orch doctor``: will Copilot CLI run orchestrator's hooks in this folder? (That they run and refuse a
    probe, and that the MCP server answers, is checked with every agent's: ``hooks.copilot``, ``mcp``.)"""
    from orchestrator.core.findings import Finding

    root = Path(ws.root)
    if not _ours(root):
        if _claude_hooks(root):
            yield Finding("copilot.hooks", "ok", "Copilot CLI also runs the Claude Code hooks of .claude/settings.json "
                          "(recognised as Copilot's); `orch install copilot` adds .github/hooks/ for the cloud agent")
        return
    disabled = hooks_disabled(root)
    if disabled:
        yield Finding("copilot.hooks", "fail", f"disableAllHooks is true in {disabled}: Copilot CLI runs no hook, so "
                      "its tool calls are not governed", f"remove disableAllHooks from {disabled}")
    trusted, why = folder_trust(root)
    if trusted:
        yield Finding("copilot.trust", "ok", f"the folder is trusted ({why}): Copilot CLI runs the hooks")
    else:
        yield Finding("copilot.trust", "warn", f"the folder is not trusted ({why}): an interactive `copilot` asks; "
                      "`copilot -p` without --trust-folder runs WITHOUT the hooks (nothing governed)",
                      f"run `copilot` once in {root} and trust the folder (or pass --trust-folder to `copilot -p`)")
