"""The Governor: runs the pre-hooks around every tool call, then the post-hooks. Fail-closed.

This module is the engine's single entry point; adapters (Claude Code, Codex, the reference loop,
LangChain...) translate their payloads into :class:`ToolCall` and call :meth:`Governor.pre` and
:meth:`Governor.post`. It imports no adapter, CLI or TUI.
"""

from __future__ import annotations

import os
import posixpath
import stat
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from orchestrator import confcache
from orchestrator import intents as _intents
from orchestrator import policy as _policy
from orchestrator.errors import ConfigError, IntentError, OrchestratorError
from orchestrator.fsutil import file_hash
from orchestrator.models import Kind, ToolCall, Verdict
from orchestrator.paths import UNKNOWN, PathError, is_case_insensitive, resolve, resolve_dir
from orchestrator.pre import approval, gatekeeper, intentignore, scope, selfguard, stale
from orchestrator.pre import secrets as _secrets_hook
from orchestrator.secrets import SecretMatcher as _SecretMatcher
from orchestrator.secrets import enabled as _secrets_on
from orchestrator.sessions import SessionStore, stamp
from orchestrator.workspace import Workspace

if TYPE_CHECKING:
    from orchestrator.intents import CompiledIntent, IntentSet
    from orchestrator.livecache import LiveCache
    from orchestrator.policy import PolicyView as Policy
    from orchestrator.pre.intentignore import IgnoreRules

#: The pre-hooks, in order; the first refusal wins.
#:  selfguard    first: governance files are refused even with a valid intent, before anything else
#:  gatekeeper   before scope: scope needs the selected intent
#:  scope        the intent's owned_scope
#:  intentignore protected paths, whatever the scope says
#:  approval     late: it may block on a person, so ask only after every cheap refusal has passed
#:  stale        last, right before the tool runs, to keep the race window with other writers small
HOOKS = (selfguard, gatekeeper, scope, intentignore, approval, stale)


class Context:
    """What a pre-hook sees: the call, the governor, loaded config and the session's state."""

    __slots__ = ("gov", "call", "intents", "policy", "session", "intent", "live", "lstats", "sandbox_requested",
                 "_plan")

    def __init__(self, gov: Governor, call: ToolCall, intents: IntentSet, policy: Policy,
                 session: dict[str, Any], intent: CompiledIntent | None = None, live: LiveCache | None = None,
                 lstats: dict[str, Any] | None = None) -> None:
        self.gov = gov
        self.call = call
        self.intents = intents
        self.policy = policy
        self.session = session
        self.intent = intent
        self.live = live
        #: resolved target -> its lstat taken while resolving it in this call (None: absent; paths.UNKNOWN)
        self.lstats = lstats
        #: the host will run a wrapped command (``Governor.pre(call, sandbox=True)``)
        self.sandbox_requested = False
        self._plan: Any = None

    def sandbox_plan(self) -> Any:
        """The :class:`orchestrator.sandbox.Plan` of this call, or None when it is not sandboxed at all: the host
        did not ask, it is not a shell command, or the analyzer vouches for it. Computed once (after the
        gatekeeper: it needs the selected intent)."""
        if self._plan is None:
            call = self.call
            if not self.sandbox_requested or call.kind is not Kind.EXEC or self.intent is None:
                return None
            from orchestrator import sandbox

            if not sandbox.needs_sandbox(call.shell):
                return None
            self._plan = sandbox.plan(self)
        return self._plan

    def target_stat(self, path: str) -> Any:
        """The ``lstat`` of resolved target ``path`` (None if it does not exist), from this call's resolution
        when it took one."""
        st = self.lstats.get(path, UNKNOWN) if self.lstats is not None else UNKNOWN
        if st is UNKNOWN:
            try:
                st = os.lstat(os.path.join(self.gov.root, path))
            except (FileNotFoundError, NotADirectoryError):
                st = None
        return st

    def ignore_rules(self) -> IgnoreRules:
        """The compiled ``.intentignore`` (from the live cache when this process has one)."""
        return self.gov._cached(self.live, "ignore", self.gov.ignore_rules)


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
    that runs in another process; ``live`` chooses the inotify-backed caches (:mod:`orchestrator.livecache`):
    None (default) from the second call on, True from the first, False never. Keep one Governor per process.
    """

    def __init__(self, workspace: str | os.PathLike[str] | Workspace, *,
                 approval_channel: str | None = None, persist_preimages: bool = False,
                 live: bool | None = None) -> None:
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
        #: inotify-backed caches (see orchestrator.livecache): True = from the first call, None = from the second
        #: call (a process that makes one call, like a cold hook, never pays for setting them up), False = never
        self.live_mode = live
        self._live: LiveCache | None = None
        self._live_calls = 0
        self._live_failed = False
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

    def _load_policy(self) -> Policy:
        return self.policy

    def intents(self) -> IntentSet:
        """The current intents (reloaded when the file changes)."""
        return _intents.load(self.workspace.intents_path, ignore_case=self.ignore_case, cache_dir=self.cache_dir)

    def ignore_rules(self) -> IgnoreRules:
        """The current ``.intentignore`` rules (reloaded when the file changes)."""
        from orchestrator.pre import intentignore

        return intentignore.load(self.workspace.intentignore_path, cache_dir=self.cache_dir)

    # ------------------------------------------------------------------ live caches (long-lived processes)
    def live_cache(self) -> LiveCache | None:
        """The inotify-backed cache, brought up to date (one ``poll``); None where there is none (yet).

        Thread-safe: the daemon evaluates calls of many sessions at once with one Governor. Replacing a dead cache
        happens under :data:`orchestrator.livecache.STARTING`, so two threads never both start one (and never
        return one the other has just closed)."""
        live = self._live
        if live is not None and live.refresh():
            return live
        if live is None:
            if self.live_mode is False or self._live_failed:
                return None
            if self.live_mode is None and self._live_calls < 1:
                self._live_calls += 1
                return None  # not known to be a long-lived caller yet
        from orchestrator.livecache import STARTING, LiveCache

        with STARTING:
            live = self._live
            if live is not None:
                if live.refresh():
                    return live  # another thread replaced it meanwhile
                live.close()  # overflowed, root moved or forked: start a new one below
                self._live = None
            if self.live_mode is False or self._live_failed:
                return None
            ws = self.workspace
            live = LiveCache.start(self.root, os.path.join(self.root, ".orchestration"), str(ws.run_dir),
                                   str(self.sessions.dir), (ws.policy_path, ws.intents_path, ws.intentignore_path))
            # where it cannot be exact (not Linux, a network filesystem, no inotify instance left), stay with stats
            self._live_failed = live is None
            self._live = live
            return live

    def _cached(self, live: LiveCache | None, key: str, load: Callable[[], Any]) -> Any:
        """``load()``, or its result cached in ``live`` until a config file changes."""
        if live is None:
            return load()
        obj = live.config.get(key)
        if obj is None:
            # one loader at a time (misses are rare: after an event): a thread that found the dirty flag already
            # taken must not load from confcache's memory before the taker has forgotten it
            with live.config_lock:
                obj = live.config.get(key)
                if obj is not None:
                    return obj
                gen = live.gen
                if not live.arm_config():
                    return load()
                if live.take_config_dirty():
                    # after an inotify event (or at the start) the file changed even if its stat key did not
                    confcache.forget(live.config_paths)
                obj = load()
                live.store_config(key, obj, gen)
        return obj

    def _session(self, live: LiveCache | None, session_id: str) -> dict[str, Any]:
        """The session's state, cached in ``live`` until its file changes."""
        if live is None:
            return self.sessions.get(session_id)
        name = self.sessions.file_name(session_id)
        state = live.sessions.get(name)
        if state is None:
            gen = live.gen
            if not live.arm_sessions() or not live.watch_session_file(name):
                return self.sessions.get(session_id)
            self.sessions.forget(session_id)  # a miss follows an event: the file changed even if its mtime did not
            state = self.sessions.get(session_id)
            live.store_session(name, state, gen)
        return state

    def close(self) -> None:
        """Release the live cache's inotify instance (also released when the Governor is garbage-collected)."""
        if self._live is not None:
            self._live.close()
            self._live = None

    # ------------------------------------------------------------------ preparation
    def prepare(self, call: ToolCall, policy: Policy | None = None) -> None:
        """Classify the call (shell analysis, unknown tools) and canonicalise its targets. Idempotent.

        Raises :class:`PathError` for a target that cannot be governed.
        """
        self._prepare(call, policy or self.policy, None)

    def _prepare(self, call: ToolCall, pol: Policy, live: LiveCache | None) -> dict[str, Any] | None:
        """:meth:`prepare`; returns each resolved target's ``lstat`` from the resolution (for the pre-image:
        valid only now, so it is handed on rather than stored in the call), or None if already prepared."""
        if call.prepared:
            return None
        if call.tool in pol.tools:
            call.kind = Kind(pol.tools[call.tool])
        if call.kind is Kind.EXEC:
            from orchestrator.secrets import for_policy
            from orchestrator.shell import analyze

            # the policy's secret patterns (an empty matcher when read protection is off)
            sh = analyze(call.command or "", for_policy(pol) if _secrets_on(pol) else _NO_SECRETS)
            call.shell = sh
            call.paths = [*sh.writes, *sh.deletes]
            if sh.kind == "destructive":
                call.destructive = True
                call.reasons.extend(sh.reasons or ("destructive command",))
            elif sh.deletes and pol.delete_is_destructive:
                # the same rule as a delete tool: removing files waits for a person, whether the
                # agent uses a Delete tool or `rm` (the analyzer only says *what* is deleted)
                call.destructive = True
                call.reasons.extend(r for r in sh.reasons if "delete" in r or "rm" in r)
                if not call.reasons:
                    call.reasons.append("deletes " + ", ".join(sh.deletes))
        elif call.kind is Kind.DELETE and pol.delete_is_destructive:
            call.destructive = True
            call.reasons.append("deletes a file")
        cwd = call.cwd if call.cwd else self.root
        if cwd != self.root:
            # realpath, through the live cache's trusted directories when there is one
            cwd = resolve_dir(cwd, self.root, live)
        sh = call.shell
        if sh is not None and sh.entries:
            self._check_new_entries(call, sh, cwd, live)
        lstats: dict[str, Any] = {}
        for raw in call.paths:
            try:
                rel, st = resolve(raw, self.root, cwd, ignore_case=self.ignore_case, live=live)
            except PathError as exc:
                # reading outside the workspace is not governed; only mutations must stay inside
                if call.kind in (Kind.READ, Kind.META):
                    continue
                if call.kind is Kind.EXEC and exc.type == "path-outside-workspace" and \
                        _outside_writable(raw, cwd, pol, self.root):
                    continue  # /tmp/x: outside the workspace, in a path the policy declares writable (sandbox)
                raise
            lstats.setdefault(rel, st)
        call.resolved = list(lstats)
        call.prepared = True
        return lstats

    def _check_new_entries(self, call: ToolCall, sh: Any, cwd: str, live: LiveCache | None) -> None:
        """Judge a command's writes against the directory entries it makes itself.

        The paths are checked before the command runs: in ``ln -s .orchestration/policy.yaml x && echo … > x``
        (or ``cp -a``/``mv``/``rsync -a`` of a tree holding a link, ``git checkout``…) ``x`` is not a link yet, so a
        write or delete through an entry the same command makes cannot be judged: the analysis becomes
        ``unknown`` (a person decides). Compared on canonical paths, so no spelling hides it; a ``..`` after such an
        entry is not simplified safely, so it counts too. A copy or move into an existing directory writes
        DIR/<name>: those targets are added to the call, so scope, protection and the hard-link rule see them.
        Records the targets that are only ever *replaced* (mv, ln -f, install, rsync, renamed over rather than
        written through), which selfguard's hard-link rule need not refuse.
        """
        import dataclasses

        def canon(raw: str) -> str | None:
            try:
                return resolve(raw, self.root, cwd, ignore_case=self.ignore_case, live=live)[0]
            except PathError:
                return None

        log = [canon(w) for w in sh.write_log]
        deleted = [d for d in (canon(x) for x in sh.deletes) if d is not None]
        replacing = {i for i, op, _sources, _named in sh.entries if op in _REPLACING}  # indices into log
        replaced = {w for i, w in enumerate(log) if w is not None and i in replacing}
        written_through = {w for i, w in enumerate(log) if w is not None and i not in replacing}
        extra: list[str] = []
        through = None
        for index, op, sources, named in sh.entries:
            dest = "." if index < 0 else (log[index] if index < len(log) else None)
            if dest is None:
                continue
            created = [dest]
            full = os.path.join(self.root, dest)
            into_dir = index >= 0 and os.path.isdir(full) and not os.path.islink(full)
            if into_dir and named and sources:
                created = [posixpath.basename(src) if dest == "." else f"{dest}/{posixpath.basename(src)}"
                           for src in sources]
                extra.extend(created)
                (replaced if op in _REPLACING else written_through).update(created)
            elif into_dir and op in ("copy", "cplink") and _holds_links(full):
                # `cp -r a/. dir/`, `cp -T`: the files written are not named; a copy writes through a link it meets
                through = dest
                break
            if not (op == "ln" or (op in _MAY_LINK and any(_holds_links(os.path.join(cwd, src))
                                                           for src in sources or ("",)))):
                continue
            # a later mv / ln -f / install *onto* the entry replaces it rather than writing through it
            later = [w for j, w in enumerate(log) if j != index and w is not None
                     and not (j in replacing and w == dest)] + deleted
            if sh.dotdot and later:
                through = f"{dest} (and a path with '..', which cannot be resolved before the command runs)"
                break
            for entry in created:
                if any(entry == "." or w == entry or w.startswith(entry + "/") for w in later):
                    through = entry
                    break
            if through:
                break
        if through is not None:
            call.shell = dataclasses.replace(sh, kind="unknown", reasons=(
                f"writes through {through}, which the same command makes (a link, or a copy or move that may be "
                "one): where that write lands cannot be checked before the command runs",) + sh.reasons)
        call.paths = [*call.paths, *(os.path.join(self.root, e) for e in extra)]
        call.replaced = sorted(replaced - written_through)

    def is_mutating(self, call: ToolCall, policy: Policy) -> bool:
        """Whether the pipeline must govern this (prepared) call."""
        if call.kind is Kind.EXEC:
            return call.shell is None or call.shell.kind != "read_only"
        if call.kind is Kind.UNKNOWN:
            return policy.unknown_tools != "read"
        return call.kind.mutating

    # ------------------------------------------------------------------ pre
    def pre(self, call: ToolCall, *, approved: bool = False, sandbox: bool = False) -> Verdict:
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
        """
        verdict = self._pre(call, approved, sandbox)
        if not verdict.allowed and self.record_refusals and call.session_id != PROBE_SESSION:
            from orchestrator.refusals import record

            record(self.workspace.run_dir, call, verdict)
        return verdict

    def _pre(self, call: ToolCall, approved: bool, sandbox: bool = False) -> Verdict:
        hook_name = "config"
        try:
            live = self.live_cache() if self.live_mode is not False else None
            pol = self._cached(live, "policy", self._load_policy)
            hook_name = "prepare"
            try:
                lstats = self._prepare(call, pol, live)
            except PathError as exc:
                # a secret read refused for where it writes would hide the more useful reason
                secret = _secrets_hook.check_call(call, pol, self.root) if call.shell is not None else None
                return secret or Verdict.deny(exc.type, "paths", exc.message, hint=exc.hint or "", **exc.details)
            hook_name = _secrets_hook.NAME
            verdict = _secrets_hook.check_call(call, pol, self.root)
            if verdict is not None:
                return verdict
            hook_name = "prepare"
            if not self.is_mutating(call, pol):
                return Verdict.allow()
            if call.kind in (Kind.WRITE, Kind.EDIT, Kind.DELETE) and not call.resolved:
                return Verdict.deny("malformed-call", "registry", f"{call.tool} names no target file",
                                    tool=call.tool, hint="pass the file path argument the tool expects")
            if call.kind is Kind.UNKNOWN and pol.unknown_tools == "deny":
                return Verdict.deny("unknown-tool", "registry", f"tool {call.tool!r} is not known to orchestrator",
                                    tool=call.tool, hint="use a known tool, or ask a person to declare it in policy.yaml")
            hook_name = "config"
            ctx = Context(self, call, self._cached(live, "intents", self.intents), pol,
                          self._session(live, call.session_id), live=live, lstats=lstats)
            ctx.sandbox_requested = sandbox
            for hook in HOOKS:
                if approved and hook is approval:
                    continue
                hook_name = hook.NAME
                verdict = hook.check(ctx)
                if verdict is not None:
                    if verdict.allowed:
                        continue  # a person approved (tui): the later hooks still run, and the trace still captures
                    if verdict.decision == "ask":
                        # the agent's own prompt may get a yes, and then the call runs: its post needs the pre-images
                        hook_name = "trace"
                        from orchestrator.post import trace

                        trace.capture(self, call, lstats, intent=ctx.intent, policy=pol)
                    return verdict
            hook_name = "trace"
            from orchestrator.post import trace

            plan = ctx.sandbox_plan()
            # before the capture: a sandboxed command's change scan is bounded by what the kernel lets it write
            call.sandboxed = plan is not None and plan.enabled
            trace.capture(self, call, lstats, intent=ctx.intent, policy=pol)
            if plan is None:
                return Verdict.allow()
            hook_name = "sandbox"
            if not plan.enabled:
                return Verdict("allow", sandbox=plan.to_dict())
            plan.prepare()
            return Verdict("allow", sandbox={**plan.to_dict(), "command": plan.wrap(call.command or "")})
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

    # ------------------------------------------------------------------ post
    def post(self, call: ToolCall, result: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """After the tool ran: stamp reads, trace mutations. Returns the ledger record, if any.

        ``result`` is the tool's response (Claude Code's ``tool_response``); a result with
        ``error``/``is_error``/``success: false`` is not traced.
        """
        pol = self.policy
        self.prepare(call, pol)
        if _failed(result):
            return None
        if call.kind is Kind.READ:
            if call.resolved:
                digests = {p: file_hash(os.path.join(self.root, p)) for p in call.resolved}
                self.sessions.update(call.session_id, lambda s: [stamp(s, p, d) for p, d in digests.items()])
            return None
        if not self.is_mutating(call, pol):
            return None
        if not call.intent_id:
            call.intent_id = self.sessions.get(call.session_id).get("intent_id")
        from orchestrator.post import trace

        record = trace.record(self, call, result)
        if call.resolved:
            # the record already hashed what the tool left on disk: reuse it rather than read each file again
            known: dict[str, str | None] = {}
            for entry in ((record or {}).get("metadata", {}).get("dev.orchestrator", {}).get("files") or ()):
                if entry.get("op") == "delete":
                    known[entry["path"]] = None
                elif entry.get("after"):
                    known[entry["path"]] = entry["after"]
            digests = {p: known[p] if p in known else file_hash(os.path.join(self.root, p)) for p in call.resolved}
            self.sessions.update(call.session_id, lambda s: [stamp(s, p, d) for p, d in digests.items()])
        return record

    # ------------------------------------------------------------------ handshake, lessons
    def select_intent(self, intent_id: str, session_id: str = "default", *, agent: str | None = None) -> str:
        """Select ``intent_id`` for the session; return its ``<intent_context>``.

        Raises :class:`IntentError` (structured: ``available`` lists the IN_PROGRESS ids).
        """
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
                from orchestrator.tools import to_call

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
                self.post(call, {"ok": True})
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
#: the matcher of a policy with read protection off (``secrets.enabled: false``): matches nothing
_NO_SECRETS = _SecretMatcher((), ())
#: ops of ShellAnalysis.entries that rename or unlink over an existing entry instead of writing through it
_REPLACING = frozenset({"ln", "mv", "replace", "cplink-replace"})
#: ops whose new entry is a link if a source holds one
_MAY_LINK = frozenset({"mv", "cplink", "cplink-replace"})
#: a source tree larger than this is assumed to hold links (scanning it would cost more than asking a person)
_SCAN_LIMIT = 5000


def _holds_links(path: str) -> bool:
    """True if moving or link-preserving-copying ``path`` may make a link: it is a symlink, a file with other
    hard links, a tree holding either, something that does not exist yet (made earlier in the same command), or
    a tree too big to look through."""
    try:
        st = os.lstat(path)
    except OSError:
        return True
    if stat.S_ISLNK(st.st_mode) or (stat.S_ISREG(st.st_mode) and st.st_nlink > 1):
        return True
    if not stat.S_ISDIR(st.st_mode):
        return False
    seen, stack = 0, [path]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    seen += 1
                    if seen > _SCAN_LIMIT or entry.is_symlink():
                        return True
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_nlink > 1:
                        return True
        except OSError:
            return True
    return False


def _outside_writable(raw: str, cwd: str, pol: Any, root_dir: str | None = None) -> bool:
    """True if ``raw`` (a shell write target outside the workspace) lies beneath an absolute ``sandbox.writable``
    entry of the policy (``/tmp``): such writes are not the workspace's business, the policy declared them fine."""
    sb = getattr(pol, "sandbox", None)
    if sb is None or not sb.enabled:
        return False
    if not isinstance(raw, str) or "\x00" in raw:
        return False
    path = os.path.expanduser(raw)
    path = os.path.realpath(os.path.join(cwd, path))
    for entry in sb.writable:
        base = os.path.expanduser(entry)
        if not os.path.isabs(base):
            continue
        base = os.path.realpath(base)
        if root_dir is not None and (root_dir == base or root_dir.startswith(base.rstrip("/") + "/")):
            continue  # the workspace lies beneath it (a checkout in /tmp): `../x` would escape the workspace
        if path == base or path.startswith(base.rstrip("/") + "/"):
            return True
    return False


def _failed(result: dict[str, Any] | None) -> bool:
    if not isinstance(result, dict):
        return False
    if result.get("is_error") or result.get("error") or result.get("success") is False:
        return True
    return bool(result.get("interrupted")) and not result.get("stdout")


__all__ = ["Governor", "Context", "Denied", "HOOKS"]
