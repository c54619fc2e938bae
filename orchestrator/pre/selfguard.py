"""Self-guard: governance files are never writable by an agent, whatever its intent.

Hard-coded (unlike ``.intentignore``, which a person edits) so that no configuration mistake can
let an agent rewrite its own rules, hooks or ledger. AGENTS.md is written only by ``record_lesson``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from orchestrator.models import Verdict

if TYPE_CHECKING:
    from orchestrator.pipeline import Context

NAME = "selfguard"

#: (pattern shown to the agent, regex over workspace-relative paths)
GOVERNANCE = (
    (".orchestration/**", r"\.orchestration(?:/.*)?"),
    (".claude/settings*.json", r"\.claude/settings[^/]*\.json"),
    (".mcp.json", r"\.mcp\.json"),
    (".codex/**", r"\.codex(?:/.*)?"),
    (".gemini/**", r"\.gemini(?:/.*)?"),
    (".cursor/hooks.json", r"\.cursor/hooks\.json"),
    ("AGENTS.md", r"AGENTS\.md"),
    (".gitattributes", r"\.gitattributes"),
    # git internals: hooks and config would run code or rewrite history outside any governance
    (".git/**", r"\.git(?:/.*)?"),
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


def check(ctx: Context) -> Verdict | None:
    for path in ctx.call.resolved:
        pattern = protected_by(path)
        if pattern is not None:
            return Verdict.deny(
                "governance-file", NAME,
                f"{path} is a governance file; agents may not change it",
                path=path, pattern=pattern,
                hint="intents, policy, hooks and the ledger are changed by people only; "
                     "use record_lesson to add to AGENTS.md",
            )
    return None
