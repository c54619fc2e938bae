"""Approval: destructive or un-analysable calls need a decision from an approval channel.

Channels (policy ``approval.channel``, overridden by ``ORCH_APPROVAL_CHANNEL``):
``allow`` (trust; for sandboxes), ``deny`` (CI and scripts), ``agent-ask`` (hand the question to the
agent's own prompt — Claude Code shows its permission dialog), ``tui`` (a person in ``orch tui``,
through the broker in :mod:`orchestrator.approvals`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from orchestrator.models import Kind, Verdict

if TYPE_CHECKING:
    from orchestrator.pipeline import Context

NAME = "approval"
CHANNELS = ("tui", "agent-ask", "deny", "allow")


def reasons(ctx: Context) -> list[str]:
    """Why the call needs a person, or [] if it does not."""
    call = ctx.call
    out = list(call.reasons) if call.destructive else []
    sh = call.shell
    if sh is not None:
        if sh.kind == "unknown":
            out.append("the command could not be shown to be safe: " + ("; ".join(sh.reasons) or "unknown program"))
        elif sh.unresolved:
            out.append("a target path uses a variable or glob that cannot be resolved before it runs")
        if "outside-world" in sh.risks and _outside_mode(ctx) != "allow":
            out.append(outside_reason(sh))
    if call.kind is Kind.UNKNOWN:
        out.append(f"unknown tool {call.tool!r}: it may change files")
    return list(dict.fromkeys(out))


def _outside_mode(ctx: Context) -> str:
    return getattr(ctx.policy, "outside_world", "ask")


def outside_reason(sh: object) -> str:
    """The approval reason of a command tagged ``outside-world`` (see :mod:`orchestrator.outside`)."""
    what = [r for r in getattr(sh, "reasons", ()) if "outside this machine" in r]
    return what[0] if what else "changes state outside this machine (cloud, cluster, registry or forge)"


def channel(ctx: Context) -> str:
    """The effective channel; an invalid environment value fails closed to ``deny``."""
    env = os.environ.get("ORCH_APPROVAL_CHANNEL")
    if env:
        return env if env in CHANNELS else "deny"
    return ctx.policy.approval.channel


def check(ctx: Context) -> Verdict | None:
    call = ctx.call
    if not call.destructive and call.shell is None and call.kind is not Kind.UNKNOWN:
        return None  # a file tool on a non-destructive path: the common case, decided without building lists
    why = reasons(ctx)
    if not why:
        return None
    chosen = channel(ctx)
    summary = call.command if call.command else f"{call.tool} {' '.join(call.resolved)}".strip()
    if call.shell is not None and "outside-world" in call.shell.risks and _outside_mode(ctx) == "deny":
        return Verdict.deny("outside-world", NAME, f"changes state outside this machine: {summary}",
                            reasons=why, hint="this workspace's policy (outside_world: deny) refuses deploys, "
                                              "publishes and cloud/cluster changes; ask a person to run it")
    if chosen == "allow":
        return None
    if chosen == "agent-ask":
        return Verdict.ask(
            "approval-required", NAME, f"needs a person's approval: {summary}",
            reasons=why, channel=chosen,
            hint="a person must approve this call; if refused, find a non-destructive way",
        )
    if chosen == "tui":
        from orchestrator.approvals import request_decision

        return request_decision(ctx, why, summary)
    return Verdict.deny(
        "approval-denied", NAME, f"not approved (channel {chosen!r}): {summary}",
        reasons=why, channel=chosen,
        hint="destructive or unanalysable commands are refused here; use the file tools, or ask a person "
             "to run it",
    )
