"""Approval: destructive or un-analysable calls need a decision from an approval channel.

Channels (policy ``approval.channel``, overridden by ``ORCH_APPROVAL_CHANNEL``):
``allow`` (trust; for sandboxes), ``deny`` (CI and scripts), ``agent-ask`` (hand the question to the
agent's own prompt — Claude Code shows its permission dialog), ``tui`` (a person in ``orch tui``,
through the broker in :mod:`orchestrator.approvals`), ``passkey`` (a person anywhere, in the web console: the
decision must carry the approver's passkey signature over this very call, which this hook verifies itself before
it lets the call through — :mod:`orchestrator.approvals.signed`; pushes through ntfy / a webhook reach the person).

Two ways around a person (docs/configuration.md, docs/security.md):

- **the sandbox**: a shell command whose only risks (``ShellAnalysis.risks``) are ``runs-code`` and
  ``unresolved-target`` does not ask when it will run in the kernel sandbox (the host asked for it and Landlock is
  available): the kernel holds its writes to the intent's scope. A rename inside the scope (``mv a b``: "deletes"
  ``a``) does not count as destructive there either. Destructive, outside-world, hijack, unparseable and
  unclassified risks still ask.
- **the allowlist** ``approval.allow_commands`` (``"pytest:*"``, ``"make test"``; :mod:`orchestrator.config.allowlist`): a
  matching command does not ask unless it is destructive. It still runs sandboxed where available and still
  passes every other hook.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from orchestrator.core.models import Kind, ToolCall, Verdict

if TYPE_CHECKING:
    from orchestrator.pre.context import Context

NAME = "approval"
CHANNELS = ("tui", "passkey", "agent-ask", "deny", "allow")


def reasons(ctx: Context) -> list[str]:
    """Why the call needs a person, or [] if it does not."""
    return call_reasons(ctx.call, ctx.policy)


def call_reasons(call: ToolCall, policy: Any) -> list[str]:
    """:func:`reasons` of a prepared call under ``policy`` (for an adapter that must know what the analyzer could not
    vouch for: :func:`waived`)."""
    out = list(call.reasons) if call.destructive else []
    sh = call.shell
    if sh is not None:
        if sh.kind == "unknown":
            out.append("the command could not be shown to be safe: " + ("; ".join(sh.reasons) or "unknown program"))
        elif sh.unresolved:
            out.append("a target path uses a variable or glob that cannot be resolved before it runs")
        if "outside-world" in sh.risks and _outside_mode(policy) != "allow":
            out.append(outside_reason(sh))
        if "upload" in sh.risks:
            out.append(upload_reason(sh))
        if "secret-read" in sh.risks:
            from orchestrator.pre.secrets import TRACKED_REASON

            out.extend(r for r in sh.reasons if r.startswith(TRACKED_REASON))
    if call.kind is Kind.UNKNOWN:
        out.append(f"unknown tool {call.tool!r}: it may change files")
    return list(dict.fromkeys(out))


def _outside_mode(policy: Any) -> str:
    return getattr(policy, "outside_world", "ask")


def outside_reason(sh: object) -> str:
    """The approval reason of a command tagged ``outside-world`` (see :mod:`orchestrator.shell.rules.outside`)."""
    what = [r for r in getattr(sh, "reasons", ()) if "outside this machine" in r]
    return what[0] if what else "changes state outside this machine (cloud, cluster, registry or forge)"


def upload_reason(sh: object) -> str:
    """The approval reason of a command tagged ``upload`` (local data sent to another host; shell/rules/net.py)."""
    what = [r for r in getattr(sh, "reasons", ()) if any(k in r for k in ("sends", "to remote", "push"))]
    return "sends local data to another host" + (f" ({what[0]})" if what else "") + \
        ": the sandbox's network rule cannot tell an upload from a download, so a person decides"


def channel(ctx: Context) -> str:
    """The effective channel; an invalid environment value fails closed to ``deny``."""
    return channel_of(ctx.policy)


def channel_of(policy: Any) -> str:
    """:func:`channel` under ``policy``."""
    env = os.environ.get("ORCH_APPROVAL_CHANNEL")
    if env:
        return env if env in CHANNELS else "deny"
    return policy.approval.channel


def waived(call: ToolCall, policy: Any) -> list[str]:
    """Why a person would have been asked about a shell call that the channel ``allow`` let through, on a host that
    runs it unsandboxed (it cannot replace the command: Qwen Code's PreToolUse): the reasons, or [] when nothing was
    waived (another channel, a command the analyzer vouched for, or one a person listed in
    ``approval.allow_commands``). Such a host asks instead: ``allow`` trusts the kernel sandbox, which is not there."""
    if call.shell is None or channel_of(policy) != "allow":
        return []
    why = call_reasons(call, policy)
    if not why:
        return []
    entries = getattr(policy.approval, "allow_commands", None) or ()
    if entries and "destructive" not in call.shell.risks and not call.destructive:
        from orchestrator.config.allowlist import allowlisted

        if allowlisted(call.command, entries):
            return []
    return why


def _rename_only(ctx: Context) -> bool:
    """True when every path the command "deletes" is the source of an ``mv`` (a rename; scope checked both ends)."""
    sh = ctx.call.shell
    if sh is None or sh.kind == "destructive" or not sh.deletes:
        return False
    moved = {src for e in sh.entries if e.op == "mv" for src in e.sources}
    return set(sh.deletes) <= moved


def _contained(ctx: Context) -> bool:
    """True when the kernel sandbox holds everything this call still needs a person for."""
    call = ctx.call
    sh = call.shell
    if sh is None or call.kind is not Kind.EXEC:
        return False
    from orchestrator.sandbox import CONTAINED
    from orchestrator.shell.analysis import APPROVAL_CLASSES, INFO_RISKS

    # the approval-class keys only refine what is already destructive or mutating (see APPROVAL_CLASSES);
    # whether the kernel holds the command is decided on the others, as before they existed
    risks = sh.risks - APPROVAL_CLASSES - INFO_RISKS
    if not risks <= CONTAINED or (call.destructive and not _rename_only(ctx)):
        return False
    if sh.kind == "mutating" and not sh.unresolved and not risks:
        # fully analysed (an in-scope `mv`): nothing for the kernel to hold. Only where the sandbox model is in
        # force, so that the fallback (no sandbox) asks exactly as before
        from orchestrator.sandbox import unavailable_reason

        return ctx.sandbox_requested and unavailable_reason(ctx.policy) is None
    plan = ctx.sandbox_plan()
    return plan is not None and plan.enabled


def check(ctx: Context) -> Verdict | None:
    call = ctx.call
    if not call.destructive and call.shell is None and call.kind is not Kind.UNKNOWN:
        return None  # a file tool on a non-destructive path: the common case, decided without building lists
    why = reasons(ctx)
    if not why:
        return None
    if call.shell is not None:
        if _contained(ctx):
            return None  # runs in the kernel sandbox: its writes cannot leave the scope
        entries = getattr(ctx.policy.approval, "allow_commands", None) or ()
        if entries and "destructive" not in call.shell.risks and not (call.destructive and not _rename_only(ctx)):
            from orchestrator.config.allowlist import allowlisted  # only where a policy lists commands

            if allowlisted(call.command, entries):
                return None
    chosen = channel(ctx)
    summary = call.command if call.command else f"{call.tool} {' '.join(call.resolved)}".strip()
    if call.shell is not None and "outside-world" in call.shell.risks and _outside_mode(ctx.policy) == "deny":
        return Verdict.deny("outside-world", NAME, f"changes state outside this machine: {summary}",
                            reasons=why, hint="this workspace's policy (outside_world: deny) refuses deploys, "
                                              "publishes and cloud/cluster changes; ask a person to run it")
    if chosen == "allow":
        return None
    plan = ctx.sandbox_plan() if call.shell is not None else None
    if plan is not None and not plan.enabled:
        # say why the kernel could not hold it instead (fallback: the analyzer and a person decide, as before)
        why = [*why, f"not sandboxed: {plan.reason}"]
    if chosen == "agent-ask":
        return Verdict.ask(
            "approval-required", NAME, f"needs a person's approval: {summary}",
            reasons=why, channel=chosen,
            hint="a person must approve this call; if refused, find a non-destructive way",
        )
    if chosen in ("tui", "passkey"):
        return request_decision(ctx, why, summary)
    return Verdict.deny(
        "approval-denied", NAME, f"not approved (channel {chosen!r}): {summary}",
        reasons=why, channel=chosen,
        hint="destructive or unanalysable commands are refused here; use the file tools, or ask a person "
             "to run it",
    )


def request_decision(ctx: Context, reasons: list[str], summary: str) -> Verdict:
    """Ask a person about the call in ``ctx`` (``tui``: ``orch tui`` / ``orch approve``; ``passkey``: the web
    console, with a signature the waiting hook verifies); block until decided.

    A live matching grant allows at once. Otherwise a request is written and this waits; a
    rejection comes back as ``approval-rejected`` carrying the person's reason, silence as
    ``approval-timeout``. Anything unexpected denies.
    """
    # the broker and its files load only when a person is asked: never on the path of an allowed call
    from orchestrator.approvals import broker_for, risk_class, signature, timeout_of

    call = ctx.call
    pol = ctx.policy.approval
    signed = channel(ctx) == "passkey"
    broker = broker_for(ctx)
    risk = risk_class(call, reasons)
    sig = signature(call, risk)
    intent_id = ctx.intent.id if ctx.intent is not None else (call.intent_id or ctx.session.get("intent_id"))
    grant = _grant(ctx, broker, signed, risk=risk, sig=sig, intent_id=intent_id)
    if grant is not None:
        broker.audit("grant-used", grant=grant.get("id"), session_id=call.session_id, intent_id=intent_id,
                     risk=risk, summary=summary)
        _note_approval(call, by=grant.get("by"), via="grant", request=grant.get("request_id"), grant=grant.get("id"))
        return Verdict.allow()
    if signed and ctx.defer_ok and getattr(pol, "headless", "wait") == "defer":
        return _deferred(ctx, broker, reasons, summary, risk=risk, sig=sig, intent_id=intent_id)
    timeout = timeout_of(pol.timeout_seconds)
    req = _submit(ctx, broker, reasons, summary, risk=risk, sig=sig, intent_id=intent_id, timeout=timeout,
                  signed=signed)
    if signed:
        from orchestrator.approvals.passkey import Settings
        from orchestrator.approvals.signed import wait_signed

        decision = wait_signed(broker, req, timeout, orch_dir=str(ctx.workspace.orch_dir),
                               settings=Settings.from_policy(pol))
        if decision.get("decision") == "approve" and decision.get("scope") != "once":
            _remember_signed(broker, req, decision, pol)
    else:
        got = broker.wait(req.id, timeout)
        decision = broker.resolve(req, timed_out=got is None)
    return _verdict(ctx, req, decision, summary, timeout, signed)


def _deferred(ctx: Context, broker: Any, reasons: list[str], summary: str, *, risk: str, sig: str,
              intent_id: str | None) -> Verdict:
    """Headless with a host that can defer (policy ``approval.headless: defer``): never block.

    The first time, file the request (decidable for ``approval.defer_seconds``) and answer ``defer``: the host ends
    its turn. When the session resumes, the host asks again for the same call (same tool_use_id and input): a
    verified decision then settles it, else it is deferred again. An expired request is replaced by a new one."""
    from orchestrator.approvals.passkey import Settings, input_digest
    from orchestrator.approvals.signed import find_deferred, settle_deferred

    call = ctx.call
    pol = ctx.policy.approval
    req = find_deferred(broker, session_id=call.session_id, tool_use_id=call.tool_use_id,
                        input_sha256=input_digest(call.input), worktree=ctx.root)
    if req is None:
        req = _submit(ctx, broker, reasons, summary, risk=risk, sig=sig, intent_id=intent_id,
                      timeout=float(pol.defer_seconds), signed=True, deferred=True)
    else:
        decision = settle_deferred(broker, req, orch_dir=str(ctx.workspace.orch_dir),
                                   settings=Settings.from_policy(pol))
        if decision is not None:
            if decision.get("decision") == "approve" and decision.get("scope") != "once":
                _remember_signed(broker, req, decision, pol)
            return _verdict(ctx, req, decision, summary, float(pol.defer_seconds), True)
    return Verdict.defer(
        "approval-deferred", NAME, f"waiting for a signed decision (request {req.id}): {summary}",
        request=req.id, risk=risk, reasons=list(reasons), asked=asked(ctx, True),
        hint="the call is deferred until a person decides in the console; resume this session afterwards "
             "(claude -p --resume SESSION) and the call is settled")


def _grant(ctx: Context, broker: Any, signed: bool, *, risk: str, sig: str, intent_id: str | None) -> Any:
    """A live remembered grant covering the call (verified again under the passkey channel), else None."""
    call = ctx.call
    pol = ctx.policy.approval
    forbidden = list(pol.forbid_remember)
    if not signed:
        return broker.find_grant(session_id=call.session_id, intent_id=intent_id, risk=risk, signature=sig,
                                 forbid_remember=forbidden, worktree=ctx.root)
    if not broker.grants():
        return None
    from orchestrator.approvals.passkey import Settings
    from orchestrator.approvals.signed import find_signed_grant

    return find_signed_grant(broker, session_id=call.session_id, intent_id=intent_id, risk=risk, signature=sig,
                             forbid_remember=forbidden, worktree=ctx.root, orch_dir=str(ctx.workspace.orch_dir),
                             settings=Settings.from_policy(pol), ttl=float(pol.grant_ttl_seconds))


def _submit(ctx: Context, broker: Any, reasons: list[str], summary: str, *, risk: str, sig: str,
            intent_id: str | None, timeout: float, signed: bool, deferred: bool = False) -> Any:
    """Write the request (and, under the passkey channel, push it to the person)."""
    from orchestrator.approvals import ApprovalRequest, new_id, preview
    from orchestrator.approvals.broker import branch_of

    call = ctx.call
    now = broker.clock()
    extra: dict[str, Any] = {}
    if signed:
        from orchestrator.approvals.passkey import input_digest

        extra = {"channel": "passkey", "nonce": os.urandom(16).hex(), "input_sha256": input_digest(call.input),
                 "tool_use_id": call.tool_use_id, "deferred": deferred}
    req = ApprovalRequest(
        id=new_id(now), session_id=call.session_id, tool=call.tool, summary=summary, reasons=list(reasons),
        risk=risk, created=now, expires=now + timeout, agent=call.agent, agent_id=call.agent_id,
        intent_id=intent_id, kind=call.kind.value, command=call.command,
        diff=None if call.command else preview(ctx.root, call), paths=list(call.resolved),
        signature=sig, cwd=call.cwd, pid=os.getpid(), worktree=ctx.root, branch=branch_of(ctx.root), **extra,
    )
    broker.submit(req)
    if signed:
        thread = _push(ctx, broker, req)
        if deferred and thread is not None:
            thread.join(10)  # nobody waits after this answer: let the push go out before the hook process exits
    return req


def _push(ctx: Context, broker: Any, req: Any) -> Any:
    """Tell the person (ntfy / webhook, policy approval.notify) in the background; outcomes go to the audit log."""
    from orchestrator.approvals import notify

    from orchestrator.approvals.broker import CALL_ENV

    cfg = ctx.policy.approval.notify
    push = notify.approval_push(req, base_url=str(cfg.url), content=str(cfg.content))

    def done(results: list[Any]) -> None:
        for sent in results:
            broker.audit("notified", id=req.id, target=sent.target, ok=sent.ok, detail=sent.detail)

    # the variables *_env names: the calling hook's ORCH_* ones (forwarded to the daemon per call) win
    return notify.send_async(cfg, push, done, env={**os.environ, **(CALL_ENV.get() or {})})


def _remember_signed(broker: Any, req: Any, decision: dict[str, Any], pol: Any) -> None:
    """The grant of a verified "for this session / intent" approval (never for a class policy never remembers)."""
    if req.risk in set(pol.forbid_remember) or (decision.get("scope") == "intent" and not req.intent_id):
        broker.audit("grant-refused", id=req.id, risk=req.risk, scope=decision.get("scope"))
        return
    broker.add_signed_grant(req, decision)


def _note_approval(call: Any, **info: Any) -> None:
    """Who let the call through, for its ledger record (post/trace.py reads ``call.approval``)."""
    try:
        call.approval = {k: v for k, v in info.items() if v is not None}
    except AttributeError:  # a ToolCall-like object without the slot (custom loops): nothing to record
        pass


def asked(ctx: Context, signed: bool) -> str:
    """Who was asked, for a timeout's message: the approvers and the channels that reached them."""
    if not signed:
        return "a person in `orch tui` (is it running?)"
    from orchestrator.approvals import notify
    from orchestrator.approvals.passkey import PasskeyError, load_approvers

    pol = ctx.policy.approval
    try:
        names = ", ".join(load_approvers(ctx.workspace.orch_dir).names()) or "nobody (no approver registered)"
    except PasskeyError as exc:
        names = f"nobody ({exc.message})"
    via = ["the console at " + str(pol.notify.url), *(f"{t}" for t in notify.targets(pol.notify))]
    return f"approvers {names} through " + ", ".join(via)


def _verdict(ctx: Context, req: Any, decision: dict[str, Any], summary: str, timeout: float,
             signed: bool) -> Verdict:
    verdict = decision.get("decision")
    common = {"request": req.id, "risk": req.risk, "reasons": list(req.reasons)}
    by = decision.get("by")
    if verdict == "approve":
        _note_approval(ctx.call, by=by, via="passkey" if signed else "tui", request=req.id,
                       credential=decision.get("credential"), scope=decision.get("scope"))
        return Verdict.allow()
    if verdict == "reject":
        why = decision.get("reason") or "no reason given"
        who = f" ({by})" if signed and by else ""
        return Verdict.deny(
            "approval-rejected", NAME, f"a person{who} rejected this call: {summary}", reason=why, by=by, **common,
            hint=f"the reviewer said: {why!r}. Do not retry the same call; change your approach accordingly "
                 "or ask the person",
        )
    if verdict == "timeout":
        who = asked(ctx, signed)
        return Verdict.deny(
            "approval-timeout", NAME, f"no decision within {timeout:g} s: {summary} (asked {who})",
            timeout=timeout, asked=who, **common,
            hint="nobody approved this in time; the call was refused. Retry later or find a non-destructive way",
        )
    return Verdict.deny(
        "approval-invalid", NAME, f"the approval decision could not be used: {decision.get('error')}",
        **common, hint="a person must decide again; retry the call to ask again",
    )
