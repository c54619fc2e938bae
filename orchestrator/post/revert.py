"""Undo what a shell command created on a governance path inside the scope (issue 21, "what remains uncovered").

Landlock only allows: a right granted on a scope directory holds for every name beneath it, so a sandboxed script
can *create* ``src/.orchestration/policy.yaml`` even though no tool and no analysed command may. The post-hook's
change scan sees the new file (it is flagged ``governance`` by :func:`post.trace._mark_scope`); this module removes
it, and the governance directories the removal leaves empty, so nothing planted survives the command to be read
later by a person's own ``orch`` run from inside that folder. The same holds for a host's configuration at any depth
(``src/.claude/settings.json``, ``src/.mcp.json``, ``src/.codex/``, ``src/.github/hooks/``, …: the nested
patterns of :mod:`orchestrator.core.governance`), which a host started from that folder would load with its hooks and
MCP servers. Only *creations* are undone: the file did not exist
before the command, so removing it restores exactly the state before. A governance file that existed and was
modified is reported, never silently rewritten (its pre-image may be unknown).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from orchestrator.core import beneath
from orchestrator.core.governance import protected_by

#: directory names that only hold governance or host configuration (orchestrator.core.governance's nested patterns):
#: such a directory left empty by a removal goes too. ``.github`` itself is not one (it holds workflows, templates):
#: only its ``hooks/`` and ``copilot/`` go, as governance paths of their own.
_GOVERNANCE_DIRS = frozenset({".orchestration", ".claude", ".codex", ".gemini", ".opencode", ".cursor", ".kilo",
                              ".kilocode", ".pi"})


def _governance_dir(rel: str) -> bool:
    """Whether directory ``rel`` is (inside) a governance directory, so it may go once a removal empties it."""
    return any(part in _GOVERNANCE_DIRS for part in rel.split("/")) or protected_by(rel + "/x") is not None \
        and protected_by(rel) is not None


def created_governance(changes: Iterable[dict]) -> list[str]:
    """The paths of ``changes`` that a command created on a governance path (relative to the workspace)."""
    return [c["path"] for c in changes
            if c.get("op") == "create" and c.get("governance") and protected_by(c["path"])]


def remove(root: str, paths: list[str]) -> list[str]:
    """Remove each created governance file and the governance directories left empty above it; return the paths
    removed. No link is followed at any component (:mod:`orchestrator.core.beneath`): a command still running may swap a
    directory above the file for a link (``src/a`` → ``~``), and the removal must not reach the link's target. A path
    that is a directory, sits below a link now, or cannot be removed is left and not listed."""
    removed: list[str] = []
    for rel in paths:
        try:
            st = beneath.lstat(root, rel)
            if st is None or stat.S_ISDIR(st.st_mode):
                continue
            beneath.unlink(root, rel)
        except OSError:  # beneath.Refused included: a link above it now
            continue
        removed.append(rel)
        parent = os.path.dirname(rel)
        # an emptied governance directory goes too (src/.orchestration/, src/.claude/), and anything empty below one
        while parent and _governance_dir(parent):
            try:
                beneath.remove_dir(root, parent)
            except OSError:
                break
            parent = os.path.dirname(parent)
    return removed


__all__ = ["created_governance", "remove"]
