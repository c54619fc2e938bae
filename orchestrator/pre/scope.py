"""Scope enforcer: every target path must lie inside the selected intent's ``owned_scope``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.core.models import Verdict

if TYPE_CHECKING:
    from orchestrator.pre.context import Context

NAME = "scope"


def check(ctx: Context) -> Verdict | None:
    intent = ctx.intent
    if intent is None:
        # the gatekeeper lets a command through without an intent only when it names no workspace target it could
        # resolve and runs in the sandbox's read plan: the kernel refuses every workspace write
        return None
    for path in ctx.call.resolved:
        if not intent.owns(path):
            return Verdict.deny(
                "scope-violation", NAME,
                f"{path} is outside the scope of intent {intent.id} ({intent.name})",
                path=path, intent=intent.id, patterns=list(intent.owned_scope),
                hint="change only files matching the intent's owned_scope, or select the intent that owns "
                     "this path; if none does, ask a person to extend the scope",
            )
    return None
