"""Gatekeeper: a mutating call needs a selected intent whose status is IN_PROGRESS."""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.config.intents import IN_PROGRESS
from orchestrator.core.models import Verdict

if TYPE_CHECKING:
    from orchestrator.pre.context import Context

NAME = "gatekeeper"


def check(ctx: Context) -> Verdict | None:
    call = ctx.call
    selected = ctx.session.get("intent_id")
    declared = call.intent_id
    if declared and selected and declared != selected:
        return Verdict.deny(
            "intent-mismatch", NAME,
            f"the call declares intent {declared!r} but this session selected {selected!r}",
            intent=declared, selected=selected,
            hint=f"call select_active_intent({declared!r}) first, or drop the declared intent",
        )
    intent_id = selected or declared
    if not intent_id:
        if _read_plan_without_intent(ctx):
            return None  # runs in the kernel sandbox with no workspace write at all: it can still read and test
        available = [i.id for i in ctx.intents.in_progress()]
        return Verdict.deny(
            "intent-required", NAME,
            f"{call.tool} changes files, but no intent is selected for this session",
            tool=call.tool, available=available,
            hint="call select_active_intent(intent_id) with one of the IN_PROGRESS intents, then retry",
        )
    intent = ctx.intents.get(intent_id)
    if intent is None or intent.status != IN_PROGRESS:
        available = [i.id for i in ctx.intents.in_progress()]
    if intent is None:
        return Verdict.deny(
            "intent-required", NAME, f"intent {intent_id!r} does not exist (any more)",
            intent=intent_id, available=available,
            hint="select one of the available IN_PROGRESS intents",
        )
    if intent.status != IN_PROGRESS:
        return Verdict.deny(
            "intent-required", NAME, f"intent {intent_id!r} is {intent.status}, not IN_PROGRESS",
            intent=intent_id, status=intent.status, available=available,
            hint="select an IN_PROGRESS intent, or ask a person to change the intent's status",
        )
    ctx.intent = intent
    # the ledger attributes the change to the effective intent
    call.intent_id = intent.id
    return None


def _read_plan_without_intent(ctx: Context) -> bool:
    """True for a shell command that the host runs wrapped, that names no workspace target, and that therefore gets
    the sandbox's read plan when no intent is selected (``orchestrator.sandbox``: tmp and devices only)."""
    call = ctx.call
    if not ctx.sandbox_requested or call.shell is None:
        return False
    from orchestrator import sandbox

    if sandbox.writes_workspace(call) or sandbox.writes_git(call.shell) or \
            sandbox.exempt(call.shell, call.command or "") is not None:
        return False
    return sandbox.unavailable_reason(ctx.policy) is None
