"""Shell command analysis (interim, conservative). Replaced by the tree-sitter analyzer (issue 6).

Contract: :func:`analyze` never raises; ``unknown`` is never treated as safe.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

_READ_ONLY = frozenset({"ls", "cat", "head", "tail", "wc", "grep", "pwd", "echo", "true", "stat", "git-status"})


@dataclass(frozen=True)
class ShellAnalysis:
    kind: str  # read_only | mutating | destructive | unknown
    writes: tuple[str, ...] = ()
    deletes: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    unresolved: bool = False


def analyze(command: str) -> ShellAnalysis:
    try:
        if any(c in command for c in ";&|><`$\n("):
            return ShellAnalysis("unknown", reasons=("compound command (interim analyzer)",))
        argv = shlex.split(command)
    except ValueError:
        return ShellAnalysis("unknown", reasons=("unparseable",))
    if not argv:
        return ShellAnalysis("unknown", reasons=("empty command",))
    if argv[0] in _READ_ONLY:
        return ShellAnalysis("read_only")
    if argv[0] == "rm" and any(a.startswith("-") and ("r" in a or "R" in a) for a in argv[1:]):
        return ShellAnalysis("destructive", deletes=tuple(a for a in argv[1:] if not a.startswith("-")),
                             reasons=("recursive delete",))
    return ShellAnalysis("unknown", reasons=(f"unknown program {argv[0]!r}",))
