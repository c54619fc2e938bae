"""No governed repository open to another CLI: which agent CLI reads which of the files orchestrator writes.

Agent CLIs read each other's configuration: Qwen Code reads the ``.mcp.json`` written for Claude Code, GitHub
Copilot CLI runs Claude Code's hooks, Kilo reads opencode's ``opencode.json``. A CLI that gets orchestrator's MCP
server from such a file but none of its guards (hooks, plugin) is the worst case: its agent selects an intent, is
told it is governed, and every call then runs unchecked. So:

- :data:`READERS` — every project file orchestrator writes → every CLI that reads it (facts verified with the real
  binaries: docs/adapters.md, "Which CLI reads which file"); :data:`GUARDS` — what governs each CLI in a project
  (any of these files holding orchestrator's mark). One line per fact: a new CLI adds its entries here.
- :func:`exposed` lists ``(cli, file)`` for every file of ours that a CLI reads while nothing guards that CLI here;
  ``orch doctor`` reports each (:func:`check_exposure`), and ``orch install`` covers every exposed CLI it can
  install (:func:`cover`: its guard is installed too) and says which it cannot.

Standard library only (``orch doctor`` and ``orch install`` import it; no hook does).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterable, NamedTuple

#: a file orchestrator writes into a project -> the CLIs that read it (agent names as ``orch install`` spells them;
#: a CLI orchestrator cannot install yet is named all the same and is then always reported when exposed)
READERS: dict[str, tuple[str, ...]] = {
    # Claude Code's project MCP file: Copilot CLI reads it too, and Qwen Code (0.24.4) reads it, but not
    # .claude/settings.json (verified: tests/e2e/test_qwen_code.py)
    ".mcp.json": ("claude-code", "copilot", "qwen-code"),
    # Copilot CLI runs Claude Code's hooks (answered by the copilot adapter: base.copilot_shaped)
    ".claude/settings.json": ("claude-code", "copilot"),
    ".github/mcp.json": ("copilot",),
    ".gemini/settings.json": ("gemini",),  # not read by Qwen Code 0.24.4 (verified)
    ".codex/config.toml": ("codex",),
    ".cursor/mcp.json": ("cursor",),
    # Kilo CLI (an opencode fork) reads opencode.json, not .opencode/plugin/ (issue 30: 0 of 7 unsafe calls stopped)
    "opencode.json": ("opencode", "kilo"),
    ".qwen/settings.json": ("qwen-code",),
    "kilo.json": ("kilo",),
    ".pi/mcp.json": ("pi",),
    # Cline 3.0.65 reads no project MCP file (.mcp.json, .cursor/, .vscode/, opencode.json: verified); its MCP
    # server is user-level and starts only where its plugin is installed (cline_setup.mcp_entry)
}

#: what governs each CLI in a project: any of these files holding orchestrator's mark (hook commands ending in
#: ``# orch:managed``, a plugin whose first line says ``orch:managed``)
GUARDS: dict[str, tuple[str, ...]] = {
    "claude-code": (".claude/settings.json", ".claude/settings.local.json"),
    "copilot": (".github/hooks/orchestrator.json", ".claude/settings.json"),
    "codex": (".codex/hooks.json",),
    "gemini": (".gemini/settings.json",),
    "cursor": (".cursor/hooks.json",),
    "opencode": (".opencode/plugin/orchestrator.js",),
    "qwen-code": (".qwen/settings.json",),
    "cline": (".cline/plugins/orchestrator.js",),
    "kilo": (".kilo/plugin/orchestrator.js",),
    "pi": (".pi/extensions/orchestrator.js",),
}

#: the CLIs' names for people
LABELS: dict[str, str] = {
    "claude-code": "Claude Code", "copilot": "GitHub Copilot CLI", "codex": "Codex CLI", "gemini": "Gemini CLI",
    "cursor": "Cursor", "opencode": "opencode", "qwen-code": "Qwen Code", "cline": "Cline", "kilo": "Kilo CLI",
    "pi": "pi",
}

MARK = "orch:managed"
SERVER = "orchestrator"


class Exposure(NamedTuple):
    """A CLI that reads ``file`` (which holds orchestrator's ``what``) with nothing guarding it here."""

    cli: str
    file: str
    what: str


def label(cli: str) -> str:
    return LABELS.get(cli, cli)


def _ours(root: Path, rel: str) -> str | None:
    """What of orchestrator's the file holds ("the orchestrator MCP server", "orchestrator's hooks"), or None."""
    try:
        text = (root / rel).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if rel.endswith(".json"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            for key in ("mcpServers", "mcp", "servers"):
                servers = data.get(key)
                if isinstance(servers, dict) and SERVER in servers:
                    return "the orchestrator MCP server"
    elif rel.endswith(".toml") and f"[mcp_servers.{SERVER}]" in text:
        return "the orchestrator MCP server"
    return "orchestrator's hooks" if MARK in text else None


def guarded(root: Path, cli: str) -> bool:
    """Whether a guard of orchestrator governs ``cli`` in ``root`` (:data:`GUARDS`)."""
    for rel in GUARDS.get(cli, ()):
        try:
            if MARK in (root / rel).read_text(encoding="utf-8", errors="replace"):
                return True
        except OSError:
            continue
    return False


def exposed(root: str | Path) -> list[Exposure]:
    """Every CLI that reads a file of orchestrator's in ``root`` while nothing of orchestrator's guards it there."""
    root = Path(root)
    out: list[Exposure] = []
    seen: set[str] = set()
    for rel, clis in READERS.items():
        what = _ours(root, rel)
        if what is None:
            continue
        for cli in clis:
            if cli not in seen and not guarded(root, cli):
                seen.add(cli)
                out.append(Exposure(cli, rel, what))
    return out


def cover(root: str | Path, install: Callable[[str], Any], installable: Iterable[str]) -> tuple[list[Exposure],
                                                                                             list[Exposure]]:
    """Install the guard of every exposed CLI that ``installable`` names (``install(cli)``, e.g. without its MCP
    server: it reads ours already); returns (covered, still exposed)."""
    can = set(installable)
    covered: list[Exposure] = []
    for exposure in exposed(root):
        if exposure.cli in can:
            install(exposure.cli)
            covered.append(exposure)
    return covered, exposed(root)


def check_exposure(ws: Any) -> Iterable[Any]:
    """``orch doctor``: no CLI reads orchestrator's configuration here without orchestrator's guard."""
    from orchestrator.core.findings import Finding

    root = Path(ws.root)
    found = exposed(root)
    for e in found:
        yield Finding(f"exposure.{e.cli}", "fail", f"{label(e.cli)} reads {e.file} ({e.what}) but nothing of "
                      f"orchestrator's governs it here: its agent would select an intent and then run every call "
                      "ungoverned", f"orch install {e.cli}" if e.cli in GUARDS else
                      f"orchestrator cannot govern {label(e.cli)} yet: do not use it here, or remove {e.file}")
    governed = [c for c in GUARDS if guarded(root, c)]
    if governed and not found:
        yield Finding("exposure", "ok", f"every CLI that reads orchestrator's files here is governed ("
                      f"{', '.join(label(c) for c in governed)})")
    others = [label(c) for c in GUARDS if c not in governed and c not in {e.cli for e in found}]
    if governed and others:
        yield Finding("exposure.others", "info", f"not installed here, so ungoverned if someone runs them here "
                      f"(they read none of orchestrator's files): {', '.join(others)}",
                      "orch install <agent> for each one your team uses")


__all__ = ["Exposure", "GUARDS", "LABELS", "READERS", "check_exposure", "cover", "exposed", "guarded", "label"]
