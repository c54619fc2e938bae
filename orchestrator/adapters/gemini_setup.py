"""Gemini CLI setup notes and the ``orch doctor`` check: is the project folder trusted?

Gemini CLI (0.61.0, verified in tests/e2e/test_gemini_cli.py) loads a project's ``.gemini/settings.json`` — our
hooks and MCP server — only in a *trusted* folder. Headless (``gemini -p``) in an untrusted folder exits 55 with a
message; ``--skip-trust`` runs anyway **without the project settings** (no hooks: every write ungoverned, silently);
``GEMINI_CLI_TRUST_WORKSPACE=true`` trusts the folder for that run *with* its settings. Trust is kept in
``~/.gemini/trustedFolders.json`` (``{"<abs path>": "TRUST_FOLDER" | "TRUST_PARENT" | "DO_NOT_TRUST"}``), written
when the user answers the trust dialog of an interactive ``gemini``; ``security.folderTrust.enabled: false`` in the
user settings turns the check off.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from orchestrator.adapters.managed import MARK

SETTINGS_FILE = ".gemini/settings.json"


def gemini_dir(env: Mapping[str, str] | None = None) -> Path:
    """The user's Gemini CLI directory (``~/.gemini``)."""
    env = os.environ if env is None else env
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".gemini"


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def folder_trust(root: Path, env: Mapping[str, str] | None = None) -> tuple[bool | None, str]:
    """(trusted?, why). None: the user said nothing about this folder (Gemini will ask, or refuse headless)."""
    env = os.environ if env is None else env
    if env.get("GEMINI_CLI_TRUST_WORKSPACE", "").lower() == "true":
        return True, "GEMINI_CLI_TRUST_WORKSPACE=true in this environment"
    home = gemini_dir(env)
    settings = _json(home / "settings.json")
    sec = settings.get("security") if isinstance(settings, dict) else None
    ft = sec.get("folderTrust") if isinstance(sec, dict) else None
    if isinstance(ft, dict) and ft.get("enabled") is False:
        return True, "folder trust is disabled in ~/.gemini/settings.json"
    path = Path(env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or home / "trustedFolders.json")
    return folder_rule(root, path)


def folder_rule(root: Path, path: Path) -> tuple[bool | None, str]:
    """What a ``trustedFolders.json`` (Gemini CLI's, and Qwen Code's: the same format) says about ``root``: the
    most specific rule wins; None when no rule covers it."""
    rules = _json(path)
    if not isinstance(rules, dict):
        return None, f"{path} does not list it"
    root = Path(root).resolve()
    best: tuple[int, bool, str] | None = None  # the most specific rule wins
    for raw, level in rules.items():
        try:
            rule = Path(raw).resolve()
        except (OSError, RuntimeError):
            continue
        base = rule.parent if level == "TRUST_PARENT" else rule
        if root != base and base not in root.parents:
            continue
        depth = len(base.parts)
        verdict = level in ("TRUST_FOLDER", "TRUST_PARENT")
        if best is None or depth > best[0]:
            best = (depth, verdict, f"{raw}: {level} in {path}")
    if best is None:
        return None, f"{path} does not list it"
    return best[1], best[2]


def notes(root: Path) -> list[str]:
    """What `orch install gemini` tells the user about folder trust."""
    return [
        "Gemini CLI loads .gemini/settings.json (these hooks and the MCP server) only in a TRUSTED folder:",
        f"  - start `gemini` once in {root} and choose to trust the folder (saved in ~/.gemini/trustedFolders.json);",
        "  - headless/CI: `GEMINI_CLI_TRUST_WORKSPACE=true gemini -p ...`.",
        "  Never use `--skip-trust`: Gemini then runs WITHOUT the project settings, so nothing is governed.",
        "The agent selects its intent with the MCP tool mcp_orchestrator_select_active_intent. `orch doctor` checks "
        "the folder trust.",
    ]


def check_gemini(ws: Any) -> Iterable[Any]:
    """``orch doctor``: will Gemini CLI load orchestrator's hooks in this folder?"""
    from orchestrator.core.findings import Finding

    root = Path(ws.root)
    settings = _json(root / SETTINGS_FILE)
    if not isinstance(settings, dict) or MARK not in json.dumps(settings.get("hooks") or {}):
        return
    trusted, why = folder_trust(root)
    fix = (f"run `gemini` once in {root} and trust the folder (or set GEMINI_CLI_TRUST_WORKSPACE=true for "
           "headless runs); never pass --skip-trust")
    if trusted:
        yield Finding("gemini.trust", "ok", f"the folder is trusted ({why}): Gemini CLI loads the hooks")
    elif trusted is None:
        yield Finding("gemini.trust", "warn", f"the folder is not trusted yet ({why}): Gemini CLI will ask; headless "
                      "it refuses, and with --skip-trust it runs WITHOUT the hooks", fix)
    else:
        yield Finding("gemini.trust", "fail", f"the folder is marked untrusted ({why}): Gemini CLI ignores "
                      ".gemini/settings.json, so its tool calls are not governed", fix)
    servers = s if isinstance(s := settings.get("mcpServers"), dict) else {}
    if "orchestrator" in servers:
        yield Finding("gemini.mcp", "ok", f"MCP server `orchestrator` registered in {SETTINGS_FILE}")
    else:
        yield Finding("gemini.mcp", "warn", f"no `orchestrator` MCP server in {SETTINGS_FILE}: the agent cannot "
                      "select an intent", "orch install gemini")
