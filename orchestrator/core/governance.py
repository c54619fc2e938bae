"""Governance files: the hard-coded paths no agent may change, whatever its intent (and no sandbox grants).

A leaf (only :mod:`re`): the self-guard pre-hook (:mod:`orchestrator.pre.selfguard`) refuses writes to these
paths, the sandbox (:mod:`orchestrator.sandbox`) never grants them, and the trace marks calls that touched one.
"""

from __future__ import annotations

import re

#: (pattern shown to the agent, regex over workspace-relative paths)
GOVERNANCE = (
    (".orchestration/**", r"\.orchestration(?:/.*)?"),
    # at any depth too: a nested one must never become a governance root (nor look like one to a person's `orch`)
    ("**/.orchestration/**", r".*/\.orchestration(?:/.*)?"),
    (".claude/settings*.json", r"\.claude/settings[^/]*\.json"),
    (".mcp.json", r"\.mcp\.json"),
    (".codex/**", r"\.codex(?:/.*)?"),
    (".gemini/**", r"\.gemini(?:/.*)?"),
    (".cursor/hooks.json", r"\.cursor/hooks\.json"),
    # GitHub Copilot (CLI and cloud agent): repository hooks, MCP servers, repository settings (which can hold
    # hooks and ``disableAllHooks``), and the workflow that installs orchestrator for the cloud agent
    (".github/hooks/**", r"\.github/hooks(?:/.*)?"),
    (".github/mcp.json", r"\.github/mcp\.json"),
    (".github/copilot/settings*.json", r"\.github/copilot/settings[^/]*\.json"),
    (".github/workflows/copilot-setup-steps.yml", r"\.github/workflows/copilot-setup-steps\.ya?ml"),
    # opencode: its plugins (orchestrator's own), custom tools, agents and commands, and the project config (MCP
    # servers, permissions, plugins to load), which it reads from opencode.json(c) at the root and in .opencode/
    (".opencode/**", r"\.opencode(?:/.*)?"),
    ("opencode.json", r"opencode\.jsonc?"),
    # Qwen Code: .qwen/settings.json holds its hooks and MCP servers (agents and commands live beside them)
    (".qwen/**", r"\.qwen(?:/.*)?"),
    # Cline: .cline/plugins/ (orchestrator's plugin; another one could rewrite a call after it), and its hook files,
    # which can rewrite a call's input too (.clinerules/hooks/)
    (".cline/**", r"\.cline(?:/.*)?"),
    (".clinerules/hooks/**", r"\.clinerules/hooks(?:/.*)?"),
    # Kilo CLI (an opencode fork): its plugins, agents, commands and config in .kilo/ and the legacy .kilocode/, and
    # kilo.json(c) (MCP servers, plugins to load); it reads opencode.json too
    (".kilo/**", r"\.kilo(?:/.*)?"),
    (".kilocode/**", r"\.kilocode(?:/.*)?"),
    ("kilo.json", r"kilo\.jsonc?"),
    # pi: its extensions (code pi runs in its own process), MCP servers, settings (packages to install) and prompts
    (".pi/**", r"\.pi(?:/.*)?"),
    ("AGENTS.md", r"AGENTS\.md"),
    (".gitattributes", r"\.gitattributes"),
    # git internals: hooks and config would run code or rewrite history outside any governance
    (".git/**", r"\.git(?:/.*)?"),
    # the same two in any nested repository (and `.git/config` named from a subdirectory: git looks upwards for
    # the repository, a shell analysis cannot; see orchestrator/shell/rules/git_writes.py)
    ("**/.git/config", r".*/\.git/config(?:\.worktree)?"),
    ("**/.git/hooks/**", r".*/\.git/hooks(?:/.*)?"),
    # host configuration at any depth (issue 21, the remaining gaps): a host reads its project configuration from
    # the directory it is started in (Claude Code, Gemini CLI, Cursor, Copilot CLI), and Codex and opencode from
    # every directory between it and the repository top, so `cd src && claude` would load `src/.claude/
    # settings.json`'s hooks or `src/.mcp.json`'s servers with the person's rights. Nested copies are governance
    # like the root's: no tool writes them, and what a sandboxed command creates is removed (post/revert.py)
    ("**/.claude/settings*.json", r".*/\.claude/settings[^/]*\.json"),
    ("**/.mcp.json", r".*/\.mcp\.json"),
    ("**/.codex/**", r".*/\.codex(?:/.*)?"),
    ("**/.gemini/**", r".*/\.gemini(?:/.*)?"),
    ("**/.cursor/hooks.json", r".*/\.cursor/hooks\.json"),
    ("**/.github/hooks/**", r".*/\.github/hooks(?:/.*)?"),
    ("**/.github/mcp.json", r".*/\.github/mcp\.json"),
    ("**/.github/copilot/settings*.json", r".*/\.github/copilot/settings[^/]*\.json"),
    ("**/.opencode/**", r".*/\.opencode(?:/.*)?"),
    ("**/opencode.json", r".*/opencode\.jsonc?"),
    ("**/.qwen/**", r".*/\.qwen(?:/.*)?"),
    ("**/.cline/**", r".*/\.cline(?:/.*)?"),
    ("**/.clinerules/hooks/**", r".*/\.clinerules/hooks(?:/.*)?"),
    # Kilo reads them from every directory between where it starts and the project root, pi from the one it starts
    # in: `cd src && pi` loads src/.pi/extensions/ (in a trusted folder)
    ("**/.kilo/**", r".*/\.kilo(?:/.*)?"),
    ("**/.kilocode/**", r".*/\.kilocode(?:/.*)?"),
    ("**/kilo.json", r".*/kilo\.jsonc?"),
    ("**/.pi/**", r".*/\.pi(?:/.*)?"),
)
# one alternation, one named group per pattern: a single fullmatch answers for all of them
_RE = re.compile("|".join(f"(?P<g{i}>{rx})" for i, (_shown, rx) in enumerate(GOVERNANCE)),
                 re.IGNORECASE | re.DOTALL)


def protected_by(path: str) -> str | None:
    """The governance pattern ``path`` falls under, or None."""
    m = _RE.fullmatch(path)
    if m is None:
        return None
    return GOVERNANCE[int(m.lastgroup[1:])][0]  # type: ignore[index]


__all__ = ["GOVERNANCE", "protected_by"]
