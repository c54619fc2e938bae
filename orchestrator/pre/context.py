"""The hook contract: what a pre-hook sees (:class:`Context`).

A pre-hook is a module with ``NAME`` and ``check(ctx: Context) -> Verdict | None`` (None: no objection). The
context carries the prepared call (:mod:`orchestrator.engine.prepare`), the loaded configuration, the session's
state and the workspace — not the :class:`~orchestrator.engine.pipeline.Governor`: the hooks import this module,
the Governor (``engine/``, above ``pre/``) imports the hooks, and nothing imports back. It needs nothing above
``pre/`` either: the ``.intentignore`` rules come from ``config/`` and the sandbox plan from ``sandbox/``, both below
it (the sandbox takes this object as its ``PlanContext`` protocol, without importing it). What a hook needs from the
Governor's caches is handed in as data or as a loader (``ignore_rules``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from orchestrator.core.models import Kind
from orchestrator.core.paths import UNKNOWN

if TYPE_CHECKING:
    from orchestrator.config.intents import CompiledIntent, IntentSet
    from orchestrator.core.models import ToolCall
    from orchestrator.config.policy import PolicyView as Policy
    from orchestrator.config.workspace import Workspace


class Context:
    """What a pre-hook sees: the prepared call, the workspace, loaded config and the session's state.

    ``root`` is the workspace root (a canonical absolute path, the base of every ``call.resolved`` path);
    ``intent`` is filled in by the gatekeeper; ``sandbox_requested``: the host runs the command the verdict carries
    (``Governor.pre(call, sandbox=True)``), see :meth:`sandbox_plan`; ``lstats`` maps each resolved target to its ``lstat`` taken while
    resolving it in this call (None: absent; :data:`orchestrator.core.paths.UNKNOWN`: not taken).
    """

    __slots__ = ("call", "workspace", "root", "intents", "policy", "session", "intent", "lstats", "sandbox_requested",
                 "defer_ok", "_ignore_rules", "_plan")

    def __init__(self, call: ToolCall, workspace: Workspace, intents: IntentSet, policy: Policy,
                 session: dict[str, Any], *, intent: CompiledIntent | None = None,
                 lstats: dict[str, Any] | None = None, sandbox_requested: bool = False,
                 ignore_rules: Callable[[], Any] | None = None, defer_ok: bool = False) -> None:
        self.call = call
        self.workspace = workspace
        self.root = str(workspace.root)
        self.intents = intents
        self.policy = policy
        self.session = session
        self.intent = intent
        self.lstats = lstats
        #: the host will run a wrapped command (``Governor.pre(call, sandbox=True)``)
        self.sandbox_requested = sandbox_requested
        #: the host can end its turn with this call deferred and run it again later (``Governor.pre(defer=True)``)
        self.defer_ok = defer_ok
        self._ignore_rules = ignore_rules
        self._plan: Any = None

    def sandbox_plan(self) -> Any:
        """The :class:`orchestrator.sandbox.Plan` of this call, or None when it is not sandboxed at all: the host
        did not ask, it is not a shell command, or it is the exemption (:func:`orchestrator.sandbox.exempt`: a bare
        ``cd``). Computed once (after the gatekeeper: the selected intent, if
        any, decides between the scope plan and the read plan)."""
        if self._plan is None:
            call = self.call
            if not self.sandbox_requested or call.kind is not Kind.EXEC:
                return None
            from orchestrator import sandbox

            if sandbox.exempt(call.shell, call.command or "") is not None:
                return None
            self._plan = sandbox.plan(self)
        return self._plan

    def target_stat(self, path: str) -> Any:
        """The ``lstat`` of resolved target ``path`` (None if it does not exist), from this call's resolution
        when it took one."""
        st = self.lstats.get(path, UNKNOWN) if self.lstats is not None else UNKNOWN
        if st is UNKNOWN:
            try:
                st = os.lstat(os.path.join(self.root, path))
            except (FileNotFoundError, NotADirectoryError):
                st = None
        return st

    def ignore_rules(self) -> Any:
        """The compiled ``.intentignore`` (:class:`orchestrator.config.intentignore.IgnoreRules`). The Governor hands
        in its own loader (paths computed once)."""
        if self._ignore_rules is not None:
            return self._ignore_rules()
        from orchestrator.config import intentignore

        return intentignore.load(self.workspace.intentignore_path,
                                 cache_dir=os.path.join(self.workspace.run_dir, "cache"))


__all__ = ["Context"]
