"""``.intentignore``: refuse a write to a protected path, naming the pattern that matched.

The rules are compiled by :mod:`orchestrator.config.intentignore`; the hook reads them through
:meth:`Context.ignore_rules` (the Governor's loader).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.core.models import Verdict

if TYPE_CHECKING:
    from orchestrator.pre.context import Context

NAME = "intentignore"


def check(ctx: Context) -> Verdict | None:
    rules = ctx.ignore_rules()
    for path in ctx.call.resolved:
        pattern = rules.protected_by(path)
        if pattern is not None:
            return Verdict.deny(
                "protected-path", NAME, f"{path} is protected by .intentignore pattern {pattern!r}",
                path=path, pattern=pattern, file=".orchestration/.intentignore",
                hint="protected paths cannot be changed by agents; leave this file alone or ask a person",
            )
    return None
