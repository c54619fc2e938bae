"""The Governor: runs the pre-hooks around every tool call, then the post-hooks. Fail-closed.

This module is the engine's single entry point; adapters (Claude Code, Codex, the reference loop,
LangChain...) translate their payloads into :class:`ToolCall` and call :meth:`Governor.pre` and
:meth:`Governor.post`. It imports no adapter, CLI or TUI.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from orchestrator.config import intentignore as ignore_rules
from orchestrator.config import intents as _intents
from orchestrator.config import policy as _policy
from orchestrator.engine import prepare as _prep
from orchestrator.pre.context import Context
from orchestrator.core.errors import ConfigError, IntentError, OrchestratorError, SessionError
from orchestrator.core.fsutil import file_hash
from orchestrator.core.models import Kind, ToolCall, ToolResult, Verdict
from orchestrator.core.paths import PathError, is_case_insensitive
from orchestrator.pre import approval, gatekeeper, intentignore, lease, scope, selfguard, stale
from orchestrator.pre import secrets as _secrets_hook
from orchestrator.state.sessions import SessionStore, session_required, stamp, usable
from orchestrator.config.workspace import Workspace

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from orchestrator.config.intents import IntentSet
    from orchestrator.config.policy import PolicyView as Policy
    from orchestrator.config.intentignore import IgnoreRules

#: The pre-hooks, in order; the first refusal wins.
#:  selfguard    first: governance files are refused even with a valid intent, before anything else
#:  gatekeeper   before scope: scope needs the selected intent
#:  scope        the intent's owned_scope
#:  intentignore protected paths, whatever the scope says
#:  approval     late: it may block on a person, so ask only after every cheap refusal has passed
#:  lease        a write lease on each target (file-busy while another session holds one): before stale, so no
#:               other session's write can land between the stale check and this call's write
#:  stale        last, right before the tool runs, while the lease is held
HOOKS = (selfguard, gatekeeper, scope, intentignore, approval, lease, stale)


class Denied(OrchestratorError):
    """Raised by governed Python functions when the pipeline refuses (or asks about) a call."""

    type = "denied"

    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict
        super().__init__((verdict.error or {}).get("message", verdict.decision),
                         hint=(verdict.error or {}).get("hint"))

    def to_dict(self) -> dict[str, Any]:
        return dict(self.verdict.error or {"type": self.verdict.decision})


class Governor:
    """Governs the tool calls of agents working in one workspace.

    >>> gov = Governor("path/to/repo")                       # doctest: +SKIP
    >>> gov.select_intent("INT-001", session_id="s1")         # doctest: +SKIP
    >>> verdict = gov.pre(call)                               # doctest: +SKIP

    ``approval_channel`` overrides the policy's; ``persist_preimages`` writes pre-images to disk for a ``post``
    that runs in another process. Every call proves freshness with system calls (a ``stat`` of each governance
    file and of the session file, an ``lstat`` per path component): a long-lived Governor answers exactly as a
    new process would (docs/performance.md, "Live cache decision"). Keep one Governor per process.
    """

    def __init__(self, workspace: str | os.PathLike[str] | Workspace, *,
                 approval_channel: str | None = None, persist_preimages: bool = False) -> None:
        self.workspace = workspace if isinstance(workspace, Workspace) else Workspace.at(workspace)
        self.root = str(self.workspace.root)
        self.ignore_case = is_case_insensitive(self.root)
        self.sessions = SessionStore(self.workspace.run_dir)
        self.approval_channel = approval_channel
        #: write pre-images to .orchestration/run/preimages/ so that a *different* process can run
        #: post() (agent hooks: one process per event). In-process hosts keep them in memory only.
        self.persist_preimages = persist_preimages
        self._policy_override: tuple[Policy, Policy] | None = None
        #: compiled-config cache, so cold hook processes skip yaml and pydantic
        self.cache_dir = os.path.join(self.workspace.run_dir, "cache")
        #: log refusals to run/refusals.jsonl (off for dry runs that must leave no trace)
        self.record_refusals = True

    # ------------------------------------------------------------------ configuration
    @property
    def policy(self) -> Policy:
        """The current policy (reloaded when the file changes); an override channel applies."""
        pol = _policy.load(self.workspace.policy_path, cache_dir=self.cache_dir)
        if self.approval_channel and pol.approval.channel != self.approval_channel:
            cached = self._policy_override
            if cached is None or cached[0] is not pol:
                cached = self._policy_override = (pol, pol.replace("approval.channel", self.approval_channel))
            return cached[1]
        return pol

    def intents(self) -> IntentSet:
        """The current intents (reloaded when the file changes)."""
        return _intents.load(self.workspace.intents_path, ignore_case=self.ignore_case, cache_dir=self.cache_dir)

    def ignore_rules(self) -> IgnoreRules:
        """The current ``.intentignore`` rules (reloaded when the file changes)."""
        return ignore_rules.load(self.workspace.intentignore_path, cache_dir=self.cache_dir)

    # ------------------------------------------------------------------ preparation
    def prepare(self, call: ToolCall, policy: Policy | None = None) -> None:
        """Classify the call (shell analysis, unknown tools) and canonicalise its targets. Idempotent.

        Raises :class:`PathError` for a target that cannot be governed.
        """
        self._prepare(call, policy or self.policy)

    def _prepare(self, call: ToolCall, pol: Policy) -> dict[str, Any] | None:
        """:func:`orchestrator.engine.prepare.prepare` in this workspace: each resolved target's ``lstat``, or None if the
        call was already prepared."""
        return _prep.prepare(call, pol, self.root, ignore_case=self.ignore_case)

    def is_mutating(self, call: ToolCall, policy: Policy) -> bool:
        """Whether the pipeline must govern this (prepared) call."""
        return _prep.is_mutating(call, policy)

    # ------------------------------------------------------------------ pre
    def pre(self, call: ToolCall, *, approved: bool = False, sandbox: bool = False, defer: bool = False) -> Verdict:
        """Run the pre-hooks. Never raises: any failure is a structured ``deny`` (fail-closed).

        ``sandbox=True`` is for a host that runs the command the verdict carries (``Verdict.command``) instead of
        the original: a shell command the analyzer cannot vouch for is then wrapped in the kernel sandbox
        (:mod:`orchestrator.sandbox`) and, if its only risk is running code, needs no person. A host that cannot
        replace the command must leave it False (the approval channel decides, as without a sandbox).

        ``approved=True`` is for a host that already put an ``ask`` verdict to a person and got a
        yes (e.g. the reference loop's approver): the approval hook is skipped, every other hook
        (scope, protection, staleness) runs again and the pre-image is captured for the trace.
        Never let an agent set it. A refusal (deny or ask) is logged to ``run/refusals.jsonl`` unless
        ``record_refusals`` is off (dry runs: ``orch check``, ``orch explain``).

        ``defer=True`` is for a host that can end its turn with the call deferred and run it again when the
        session resumes (Claude Code in print mode): with policy ``approval.headless: defer`` the approval hook
        then answers ``defer`` instead of blocking (``Verdict.defer``; docs/console.md, "Headless runs").
        """
        started = time.perf_counter()
        note: dict[str, Any] = {"defer": defer} if defer else {}
        verdict = self._pre(call, approved, sandbox, note)
        if call.leased and not verdict.allowed:
            self.release_leases(call)  # a later hook refused it (stale, sandbox, a bug): the call will not run
        if self.record_refusals and call.session_id != PROBE_SESSION:
            if not verdict.allowed:
                from orchestrator.state.refusals import record

                record(self.workspace.run_dir, call, verdict)
            if "policy" in note:
                _telemetry_decision(self, call, verdict, time.perf_counter() - started, note)
        return verdict

    def _pre(self, call: ToolCall, approved: bool, sandbox: bool = False,
             note: dict[str, Any] | None = None) -> Verdict:
        """:meth:`pre` without logging; ``note`` collects what telemetry reports (policy, governed, approval)."""
        hook_name = "config"
        note = {} if note is None else note
        try:
            pol = note["policy"] = self.policy
            hook_name = "prepare"
            try:
                lstats = self._prepare(call, pol)
            except PathError as exc:
                # a secret read refused for where it writes would hide the more useful reason
                secret = _secrets_hook.check_call(call, pol, self.root) if call.shell is not None else None
                return secret or Verdict.deny(exc.type, "paths", exc.message, hint=exc.hint or "", **exc.details)
            hook_name = _secrets_hook.NAME
            verdict = _secrets_hook.check_call(call, pol, self.root)
            if verdict is not None:
                return verdict
            hook_name = "prepare"
            if sandbox and call.kind is Kind.EXEC:
                hook_name = "sandbox"
                early = _unwrappable(call) or (None if self.is_mutating(call, pol) else self._wrap_read_only(call, pol))
                if early is not None:
                    return early
                hook_name = "prepare"
            if not self.is_mutating(call, pol):
                return Verdict.allow()
            if not usable(call.session_id):
                return session_required()
            if call.kind in (Kind.WRITE, Kind.EDIT, Kind.DELETE) and not call.resolved:
                return Verdict.deny("malformed-call", "registry", f"{call.tool} names no target file",
                                    tool=call.tool, hint="pass the file path argument the tool expects")
            if call.kind is Kind.UNKNOWN and pol.unknown_tools == "deny":
                return Verdict.deny("unknown-tool", "registry", f"tool {call.tool!r} is not known to orchestrator",
                                    tool=call.tool, hint="use a known tool, or ask a person to declare it in policy.yaml")
            hook_name = "config"
            ctx = Context(call, self.workspace, self.intents(), pol, self.sessions.get(call.session_id),
                          lstats=lstats, sandbox_requested=sandbox, ignore_rules=self.ignore_rules,
                          defer_ok=bool(note.get("defer")))
            note["governed"] = True
            for hook in HOOKS:
                if approved and hook is approval:
                    continue
                hook_name = hook.NAME
                if hook is approval:
                    verdict = _timed_approval(ctx, note)
                else:
                    verdict = hook.check(ctx)
                if verdict is not None:
                    if verdict.allowed:
                        continue  # a person approved (tui): the later hooks still run, and the trace still captures
                    if verdict.decision == "ask":
                        # the agent's own prompt may get a yes, and then the call runs: its post needs the pre-images
                        hook_name = "trace"
                        from orchestrator.post import preimage

                        preimage.capture(self, call, lstats, intent=ctx.intent, policy=pol)
                        return _asked_in_sandbox(ctx, verdict)
                    return verdict
            hook_name = "trace"
            return self._allowed(ctx, lstats)
        except ConfigError as exc:
            hint = "; ".join(h for h in (exc.hint, "governance files are fixed by a person (agents cannot "
                                                   "edit them)") if h)
            return Verdict.deny("config-error", hook_name, exc.message, hint=hint,
                                file=exc.file, line=exc.line, intent=exc.intent)
        except Exception as exc:  # noqa: BLE001 — the fail-closed boundary of the pre-hooks
            self._log_internal(hook_name, call, exc)
            return Verdict.deny(
                "internal-error", hook_name, f"orchestrator failed while checking this call: {exc!r}",
                hint="this is a bug or a broken setup, not your fault; the call was refused to stay safe. "
                     "Retry once; if it persists, report it to a person",
            )

    def _allowed(self, ctx: Context, lstats: dict[str, Any] | None) -> Verdict:
        """Every hook passed: capture the pre-images (and a shell command's stat snapshot) and answer, with the
        wrapped command when the host runs the kernel sandbox."""
        # the pre-image half of the trace only: the record half (and the classifier) loads in the post-hook
        from orchestrator.post import preimage

        call = ctx.call
        plan = ctx.sandbox_plan()
        # before the capture: a sandboxed command's change scan is bounded by what the kernel lets it write
        call.sandboxed = plan is not None and plan.enabled
        preimage.capture(self, call, lstats, intent=ctx.intent if plan is None or plan.scope else None,
                         policy=ctx.policy)
        if plan is None:
            return Verdict.allow()
        if not plan.enabled:
            return Verdict("allow", sandbox=plan.to_dict())
        plan.prepare()
        return Verdict("allow", sandbox={**plan.to_dict(), "command": plan.wrap(call.command or "")})

    def _wrap_read_only(self, call: ToolCall, pol: Policy) -> Verdict:
        """A shell command the analyzer calls read-only, on a host that runs wrapped commands: it still runs in the
        kernel sandbox (the analyzer's reading never removes the kernel), with the read plan — no workspace write,
        secrets unreadable — so nothing needs to be scanned after it. Without a sandbox it runs as before."""
        from orchestrator import sandbox as _sandbox

        if _sandbox.exempt(call.shell, call.command or "") is not None or _sandbox.unavailable_reason(pol) is not None:
            return Verdict.allow()
        plan = _sandbox.plan_for(self.root, pol, call.session_id, self.workspace.run_dir, shell=call.shell)
        call.sandboxed = True
        return Verdict("allow", sandbox={**plan.to_dict(), "command": plan.wrap(call.command or "")})

    # ------------------------------------------------------------------ post
    def post(self, call: ToolCall, result: ToolResult | None = None) -> dict[str, Any] | None:
        """After the tool ran: stamp reads, trace mutations. Returns the ledger record, if any.

        ``result`` is what the tool's run told (:class:`ToolResult`, built by the agent's adapter): a failed one
        is not traced; a pre-image it reports is trusted over the engine's own snapshot. None: nothing known
        (the tool ran; the snapshot taken by :meth:`pre` gives the pre-image).

        Deprecated, for one release: a ``dict`` (the former argument) is still accepted with a
        ``DeprecationWarning``, and read for its failure flags only (``is_error``, ``error``, ``success: false``);
        translate an agent's response with its adapter instead (docs/adapters.md, "Writing an adapter").
        """
        result = _tool_result(result)
        pol = self.policy
        self.prepare(call, pol)
        if call.kind is Kind.READ or not self.is_mutating(call, pol):
            if call.kind is Kind.READ and not (result is not None and result.failed):
                self._post_read(call)
            return None
        try:
            if result is not None and result.failed:
                return None
            return self._post_write(call, result, pol)
        finally:
            self.release_leases(call)  # the write landed (or failed): another session may take the file now

    def release_leases(self, call: ToolCall, extra: Iterable[str] = ()) -> None:
        """Release the write leases this call's session holds on its targets (and on ``extra`` paths)."""
        from orchestrator.state import leases

        rels = [*call.leased, *call.resolved, *extra]
        if rels:
            leases.release(self.workspace.leases_dir, self.root, rels, call.session_id)
        call.leased = []

    def _post_read(self, call: ToolCall) -> None:
        """A read landed: stamp what this session saw, for the stale check."""
        if call.resolved and usable(call.session_id):
            digests = {p: file_hash(os.path.join(self.root, p)) for p in call.resolved}
            self.sessions.update(call.session_id, lambda s: _stamp_all(s, digests))

    def _post_write(self, call: ToolCall, result: ToolResult | None, pol: Policy) -> dict[str, Any] | None:
        if not call.intent_id:
            call.intent_id = self.sessions.get(call.session_id).get("intent_id")
        from orchestrator.post import trace

        try:
            record = trace.record(self, call, result)
        except trace.Unpaired as exc:
            from orchestrator.state.refusals import log

            log(self.workspace.run_dir, {"decision": "refused", "hook": "trace", "agent": call.agent,
                                         "session_id": call.session_id, **exc.to_dict()})
            return None
        if record is not None:
            _telemetry_record(self, pol, record)
        if call.resolved and usable(call.session_id):
            # the record already hashed what the tool left on disk: reuse it rather than read each file again
            known: dict[str, str | None] = {}
            for entry in ((record or {}).get("metadata", {}).get("dev.orchestrator", {}).get("files") or ()):
                if entry.get("op") == "delete":
                    known[entry["path"]] = None
                elif entry.get("after"):
                    known[entry["path"]] = entry["after"]
            digests = {p: known[p] if p in known else file_hash(os.path.join(self.root, p)) for p in call.resolved}
            self.sessions.update(call.session_id, lambda s: _stamp_all(s, digests))
        return record

    # ------------------------------------------------------------------ handshake, lessons
    def select_intent(self, intent_id: str, session_id: str = "default", *, agent: str | None = None) -> str:
        """Select ``intent_id`` for the session; return its ``<intent_context>``.

        Raises :class:`IntentError` (structured: ``available`` lists the IN_PROGRESS ids).
        """
        if not usable(session_id):
            raise SessionError(f"cannot select {intent_id!r}: no usable session id", intent=intent_id,
                               hint="an intent is selected for one session; the agent's event must carry its "
                                    "session id (never shared through a default session)")
        intents = self.intents()
        intent = intents.get(str(intent_id))
        available = [i.id for i in intents.in_progress()]
        if intent is None:
            raise IntentError(f"unknown intent {intent_id!r}", intent=intent_id, available=available,
                              hint="pick one of the available IN_PROGRESS intents")
        if intent.status != _intents.IN_PROGRESS:
            raise IntentError(f"intent {intent_id!r} is {intent.status}, not IN_PROGRESS", intent=intent_id,
                              status=intent.status, available=available,
                              hint="pick an IN_PROGRESS intent, or ask a person to start this one")

        def _select(state: dict[str, Any]) -> None:
            state["intent_id"] = intent.id
            state["selected_at"] = time.time()
            if agent:
                state["agent"] = agent

        self.sessions.update(session_id, _select)
        from orchestrator.post import lessons

        return _intents.render_context(intent, lessons.relevant(self.workspace.agents_md, intent.id))

    def record_lesson(self, text: str, intent_id: str | None = None, *, session_id: str | None = None) -> bool:
        """Append a lesson to AGENTS.md (skipping exact duplicates). True if it was added."""
        from orchestrator.post import lessons

        if intent_id is None and session_id is not None:
            intent_id = self.sessions.get(session_id).get("intent_id")
        return lessons.record(self.workspace.agents_md, text, intent_id, lock_dir=self.workspace.ensure_run_dir())

    # ------------------------------------------------------------------ decorator
    def govern(self, fn: Callable[..., Any] | None = None, *, tool: str | None = None, kind: Kind | str | None = None,
               path_arg: str = "path", session_id: str = "default", agent: str = "python") -> Any:
        """Decorate a plain Python tool function so every call goes through :meth:`pre` and :meth:`post`.

        The function's arguments become the call's input; ``path_arg`` names the target path argument.
        A refusal raises :class:`Denied` carrying the structured verdict.
        """
        import functools
        import inspect

        def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
            sig = inspect.signature(func)
            name = tool or func.__name__

            @functools.wraps(func)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                from orchestrator.engine.tools import to_call

                bound = sig.bind(*args, **kwargs)
                bound.apply_defaults()
                arguments = dict(bound.arguments)
                call = to_call(name, arguments, session_id=session_id, agent=agent, cwd=self.root)
                if kind is not None:
                    call.kind = Kind(kind)
                if call.kind is not Kind.EXEC and path_arg in arguments and isinstance(arguments[path_arg], str):
                    call.paths = [arguments[path_arg]]
                verdict = self.pre(call)
                if not verdict.allowed:
                    raise Denied(verdict)
                value = func(*args, **kwargs)
                self.post(call)
                return value

            return wrapper

        return decorate(fn) if fn is not None else decorate

    # ------------------------------------------------------------------ internals
    def _log_internal(self, hook: str, call: ToolCall, exc: BaseException) -> None:
        import traceback

        try:
            log = self.workspace.ensure_run_dir() / "errors.log"
            with log.open("a", encoding="utf-8") as fh:
                fh.write(f"--- {time.strftime('%Y-%m-%dT%H:%M:%S')} hook={hook} tool={call.tool} "
                         f"session={call.session_id}\n{''.join(traceback.format_exception(exc))}")
        except OSError:
            pass  # logging must never turn a deny into a crash


#: the session id of `orch doctor`'s hook probes: refused by design, never logged as a refusal
PROBE_SESSION = "orch-doctor-probe"
def _asked_in_sandbox(ctx: Context, verdict: Verdict) -> Verdict:
    """An ``ask`` for a shell command the host runs wrapped carries the wrapped command too: a person's yes in the
    agent's own prompt (Claude Code: ``ask`` + ``updatedInput``) adds a person, it never removes the kernel."""
    plan = ctx.sandbox_plan()
    if plan is None or not plan.enabled:
        return verdict
    plan.prepare()
    return Verdict(verdict.decision, verdict.error,
                   sandbox={**plan.to_dict(), "command": plan.wrap(ctx.call.command or "")})


def _unwrappable(call: ToolCall) -> Verdict | None:
    """A structured refusal for a shell command the launcher cannot carry (NUL bytes, too long): never run bare."""
    from orchestrator import sandbox as _sandbox

    why = _sandbox.unwrappable(call.command)
    if why is None:
        return None
    return Verdict.deny("command-unwrappable", "sandbox", f"this command cannot run in the sandbox: {why}",
                        hint="split it into shorter commands, or write the script to a file in the intent's scope "
                             "and run that file")


def _tool_result(result: Any) -> ToolResult | None:
    """``result`` as a :class:`ToolResult`; the deprecated ``dict`` form read for its failure flags only."""
    if result is None or isinstance(result, ToolResult):
        return result
    import warnings

    warnings.warn("Governor.post(call, <dict>) is deprecated: pass an orchestrator.core.models.ToolResult (an agent's "
                  "response is translated by its adapter, e.g. orchestrator.adapters.claude_code.tool_result); "
                  "the dict is read for is_error / error / success: false only", DeprecationWarning, stacklevel=3)
    if not isinstance(result, dict):
        return ToolResult()
    return ToolResult(failed=bool(result.get("is_error") or result.get("error") or result.get("success") is False))


__all__ = ["Governor", "Context", "Denied", "HOOKS"]  # Context: re-exported from orchestrator.pre.context


def _timed_approval(ctx: Context, note: dict[str, Any]) -> Verdict | None:
    """The approval hook, timed: when it decided (a person, a grant, a refusal), telemetry reports how and how long
    it waited (``approval_wait_ms``)."""
    started = time.perf_counter()
    verdict = approval.check(ctx)
    if verdict is not None:
        from orchestrator.telemetry.events import approval_outcome

        note["approval"] = (approval_outcome(verdict), time.perf_counter() - started)
    return verdict


def _telemetry_decision(gov: Governor, call: ToolCall, verdict: Verdict, latency: float,
                        note: dict[str, Any]) -> None:
    """Spool the decision's telemetry event when the policy turns telemetry on (docs/telemetry.md). Never raises:
    the spool is a local append; shipping it is the daemon's job, never the hook's."""
    enabled, commands, bound = _telemetry_settings(note["policy"])
    if enabled:
        from orchestrator.telemetry import events, spool

        try:
            event = events.decision(call, verdict, latency, governed=bool(note.get("governed")),
                                    approval=note.get("approval"), include_commands=commands)
        except Exception:  # noqa: BLE001 - telemetry never turns a verdict into a crash
            return
        spool.append(gov.workspace.run_dir, event, bound)


def _telemetry_record(gov: Governor, pol: Policy, record: dict[str, Any]) -> None:
    """Spool a ledger record's telemetry event (when telemetry is on). Never raises."""
    enabled, _commands, bound = _telemetry_settings(pol)
    if enabled:
        from orchestrator.telemetry import events, spool

        try:
            event = events.record(record)
        except Exception:  # noqa: BLE001
            return
        spool.append(gov.workspace.run_dir, event, bound)


def _telemetry_settings(pol: Any) -> tuple[bool, bool, int]:
    section = getattr(pol, "telemetry", None)  # a policy compiled by an older release has none: off
    if section is None or not section.enabled:
        return False, False, 0
    return True, bool(section.include_commands), int(section.spool_max_bytes)


def _stamp_all(state: dict[str, Any], digests: Mapping[str, str | None]) -> None:
    """Record each read path's digest in the session ``state`` (see :func:`orchestrator.state.sessions.stamp`)."""
    for p, d in digests.items():
        stamp(state, p, d)
