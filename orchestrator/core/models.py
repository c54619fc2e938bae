"""Hot-path data types: the canonical tool call, the verdict and the tool's result.

These are plain slotted classes rather than pydantic models (or even dataclasses) on purpose: one is
built for every tool call of every agent, a pydantic model costs ~40 ms to import and microseconds to
construct, and a ``@dataclass`` costs ~1 ms per class at import time (see docs/performance.md). The
configuration files, which are loaded rarely and must give precise errors, are validated with
pydantic in :mod:`orchestrator.config.schema`.
"""

from __future__ import annotations

import json
from enum import Enum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orchestrator.core.diffing import Hunk


class Kind(str, Enum):
    """What a tool call does to the workspace."""

    READ = "read"
    WRITE = "write"
    EDIT = "edit"
    DELETE = "delete"
    EXEC = "exec"
    META = "meta"
    UNKNOWN = "unknown"

    @property
    def mutating(self) -> bool:
        """True for kinds that may change files. EXEC and UNKNOWN count: they are not known to be safe."""
        return self in _MUTATING


_MUTATING = frozenset({Kind.WRITE, Kind.EDIT, Kind.DELETE, Kind.EXEC, Kind.UNKNOWN})


class ToolCall:
    """One tool call of one agent, translated out of the agent's own JSON by an adapter.

    ``paths`` are the targets as the agent gave them (relative to ``cwd`` or absolute); the
    pipeline fills ``resolved`` with canonical workspace-relative POSIX paths.

    A plain slotted class rather than a ``@dataclass``: this module is imported by every cold hook
    process, and generating dataclass methods (plus importing ``inspect`` for it) costs milliseconds.
    """

    __slots__ = ("tool", "kind", "paths", "input", "session_id", "agent", "agent_id", "cwd", "intent_id",
                 "mutation_class", "expected_hash", "tool_use_id", "model_id", "command",
                 # filled in by the pipeline
                 "resolved", "shell", "destructive", "reasons", "capture_key", "prepared", "replaced", "sandboxed",
                 "leased", "pairless", "approval")

    def __init__(self, tool: str, kind: Kind, paths: list[str] | None = None, input: dict[str, Any] | None = None,
                 session_id: str = "default", agent: str = "python", agent_id: str | None = None,
                 cwd: str | None = None, intent_id: str | None = None, mutation_class: str | None = None,
                 expected_hash: str | None = None, tool_use_id: str | None = None, model_id: str | None = None,
                 command: str | None = None, resolved: list[str] | None = None, shell: Any = None,
                 destructive: bool = False, reasons: list[str] | None = None, capture_key: str | None = None,
                 prepared: bool = False) -> None:
        self.tool = tool
        self.kind = kind
        self.paths = paths if paths is not None else []
        self.input = input if input is not None else {}
        self.session_id = session_id
        self.agent = agent
        self.agent_id = agent_id
        self.cwd = cwd
        self.intent_id = intent_id
        self.mutation_class = mutation_class
        self.expected_hash = expected_hash
        self.tool_use_id = tool_use_id
        self.model_id = model_id
        self.command = command
        self.resolved = resolved if resolved is not None else []
        self.shell = shell  # orchestrator.shell.ShellAnalysis for EXEC calls
        self.destructive = destructive
        self.reasons = reasons if reasons is not None else []
        self.capture_key = capture_key
        self.prepared = prepared
        #: targets a shell command only replaces (mv / ln -f / install unlink or rename over them)
        self.replaced: list[str] = []
        #: the command runs (ran) in the Landlock sandbox: the kernel bounds where it can write (post/changes.py)
        self.sandboxed = False
        #: the targets this call's pre-hook leased (orchestrator.state.leases), released if a later hook refuses it
        self.leased: list[str] = []
        #: who let the call through when a person decided (pre/approval.py): ``{"by", "via", "request", …}``;
        #: the ledger record keeps it (metadata ``approval``)
        self.approval: dict[str, Any] | None = None
        #: a post-hook event that carries no id to find its pre-hook by (Cursor's afterFileEdit): recorded, flagged
        #: ``unpaired``, when no capture matches; every other mutating post must pair (post/trace.py)
        self.pairless = False

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"ToolCall({fields})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolCall):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable


class ToolResult:
    """What a tool's run told the engine, translated out of the agent's own response by an adapter.

    The engine's post-hooks (:meth:`Governor.post <orchestrator.engine.pipeline.Governor.post>`, ``post/trace.py``) read
    only this; each agent's response shape (Claude Code's ``tool_response``, Gemini's ``returnDisplay``…) is known
    to its adapter alone (e.g. :func:`orchestrator.adapters.claude_code.tool_result`).

    ``failed``
        the tool reported a failure: nothing is traced and a read is not stamped. A command that ran and then
        exited non-zero may still have changed files: report it as not failed, so its changes are recorded.
    ``created``, ``original``
        what the tool says about its one target file *before* the call: ``created`` — it did not exist (the pre-image
        is known: none); ``original`` — its text (a known pre-image). Neither (the default): the tool did not say,
        and the pre-image comes from the engine's own snapshot. ``created`` wins over ``original``; both are used
        only when the call has exactly one target.
    ``hunks``
        the tool's own diff of that one target (``orchestrator.core.diffing.Hunk``, ``git diff -U0`` numbering): changed
        lines when no pre-image is known at all. None: not reported.

    A plain slotted class, like :class:`ToolCall` (this module is on every cold hook process's import path).
    """

    __slots__ = ("failed", "created", "original", "hunks")

    def __init__(self, *, failed: bool = False, created: bool = False, original: str | None = None,
                 hunks: list[Hunk] | None = None) -> None:
        self.failed = failed
        self.created = created
        self.original = original
        self.hunks = hunks

    @classmethod
    def failure(cls) -> ToolResult:
        """The tool failed (or did not run): no trace, no read-stamp."""
        return cls(failed=True)

    @property
    def pre_image_known(self) -> bool:
        """Whether the tool told what its one target held before the call (nothing: ``created``; else
        ``original``)."""
        return self.created or self.original is not None

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"ToolResult({fields})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolResult):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable


class Verdict:
    """The answer of the pre-hook pipeline: ``allow``, ``deny`` with a structured error, or ``ask``.

    ``error`` always has ``type``, ``hook``, ``message`` and ``hint``, plus details such as
    ``path``, ``intent`` or ``patterns`` — data the agent can act on to correct itself. Immutable.

    ``sandbox`` is set only when the host asked for sandboxing (``Governor.pre(call, sandbox=True)``) and the
    call is a shell command the analyzer cannot vouch for: ``{"enabled": True, "command": <wrapped command>,
    "abi": …, "writable": […]}`` — the host must run ``command`` instead of the original — or
    ``{"enabled": False, "reason": …}`` when it runs unsandboxed (the approval channel decided instead).
    """

    __slots__ = ("decision", "error", "sandbox")
    decision: str
    error: dict[str, Any] | None
    sandbox: dict[str, Any] | None

    def __init__(self, decision: str, error: dict[str, Any] | None = None,
                 sandbox: dict[str, Any] | None = None) -> None:
        object.__setattr__(self, "decision", decision)
        object.__setattr__(self, "error", error)
        object.__setattr__(self, "sandbox", sandbox)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Verdict is immutable")

    def __repr__(self) -> str:
        extra = f", sandbox={self.sandbox!r}" if self.sandbox is not None else ""
        return f"Verdict(decision={self.decision!r}, error={self.error!r}{extra})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Verdict):
            return NotImplemented
        return self.decision == other.decision and self.error == other.error and self.sandbox == other.sandbox

    def __hash__(self) -> int:
        return hash((self.decision, repr(self.error)))

    @classmethod
    def allow(cls) -> Verdict:
        """A verdict that lets the call run."""
        return _ALLOW

    @classmethod
    def deny(cls, type: str, hook: str, message: str, *, hint: str, **details: Any) -> Verdict:
        """A refusal; ``details`` with value ``None`` are dropped."""
        return cls("deny", _error(type, hook, message, hint, details))

    @classmethod
    def refusal(cls, error: dict[str, Any], hook: str) -> Verdict:
        """A refusal carrying an expected error's structured form (``OrchestratorError.to_dict()``: an unknown
        intent, a bad config, a malformed proposal) as the agent reads any other denial."""
        details = {k: v for k, v in error.items() if k not in ("type", "message", "hint")}
        return cls.deny(str(error.get("type", "error")), hook, str(error.get("message", "")),
                        hint=str(error.get("hint") or ""), **details)

    @classmethod
    def ask(cls, type: str, hook: str, message: str, *, hint: str, **details: Any) -> Verdict:
        """Hand the decision to a person through the agent's own prompt."""
        return cls("ask", _error(type, hook, message, hint, details))

    @classmethod
    def defer(cls, type: str, hook: str, message: str, *, hint: str, **details: Any) -> Verdict:
        """Neither allow nor deny yet: the host ends its turn with the call deferred and asks again when the
        session resumes (only for a host that said it can: ``Governor.pre(call, defer=True)``)."""
        return cls("defer", _error(type, hook, message, hint, details))

    @property
    def allowed(self) -> bool:
        return self.decision == "allow"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"decision": self.decision}
        if self.error is not None:
            data["error"] = self.error
        if self.sandbox is not None:
            data["sandbox"] = self.sandbox
        return data

    @property
    def command(self) -> str | None:
        """The command the host must run instead of the original (a sandboxed shell command), or None."""
        sb = self.sandbox
        return sb.get("command") if sb is not None and sb.get("enabled") else None

    @property
    def reason(self) -> str:
        """One text for an agent's prompt: the message, the hint, then the error as JSON."""
        if self.error is None:
            return ""
        e = self.error
        return f"[orchestrator:{e['type']}] {e['message']} Hint: {e['hint']} " + json.dumps(e, default=str)


_ALLOW = Verdict("allow")


def _error(type: str, hook: str, message: str, hint: str, details: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = {"type": type, "hook": hook, "message": message}
    for key, value in details.items():
        if value is not None:
            data[key] = value
    data["hint"] = hint
    return data
