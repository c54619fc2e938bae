"""The contract of an ``orch doctor`` check: a function ``(ws: Workspace) -> Iterable[Finding]``.

A leaf (standard library only) so that a check can live beside the code it checks (the sandbox, read protection,
git hooks, an adapter's setup) without that module importing the CLI: :mod:`orchestrator.commands.doctor` keeps
the list of checks (``CHECKS``), runs them and renders their findings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

#: status values, worst last
STATUSES = ("ok", "info", "warn", "fail")


@dataclass(frozen=True)
class Finding:
    """One result of one check. A finding that is not ``ok`` carries a ``fix``: the command or edit that resolves
    it."""

    check: str  #: short id, e.g. ``config.intents`` or ``hooks.claude-code``
    status: str  #: one of :data:`STATUSES`
    message: str
    fix: str = ""


#: a check: the workspace (an :class:`orchestrator.config.workspace.Workspace`) in, its findings out
Check = Callable[[Any], Iterable[Finding]]

__all__ = ["STATUSES", "Check", "Finding"]
