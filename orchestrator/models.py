"""Hot-path data types: the canonical tool call and the verdict.

These are plain dataclasses rather than pydantic models on purpose: one is built for every tool
call of every agent, and a pydantic model costs ~40 ms to import and microseconds to construct
(see docs/performance.md). The configuration files, which are loaded rarely and must give precise
errors, are validated with pydantic in :mod:`orchestrator.schema`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


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


@dataclass(slots=True)
class ToolCall:
    """One tool call of one agent, translated out of the agent's own JSON by an adapter.

    ``paths`` are the targets as the agent gave them (relative to ``cwd`` or absolute); the
    pipeline fills ``resolved`` with canonical workspace-relative POSIX paths.
    """

    tool: str
    kind: Kind
    paths: list[str] = field(default_factory=list)
    input: dict[str, Any] = field(default_factory=dict)
    session_id: str = "default"
    agent: str = "python"
    agent_id: str | None = None
    cwd: str | None = None
    intent_id: str | None = None
    mutation_class: str | None = None
    expected_hash: str | None = None
    tool_use_id: str | None = None
    model_id: str | None = None
    command: str | None = None
    # --- filled in by the pipeline -------------------------------------------------------
    resolved: list[str] = field(default_factory=list)
    shell: Any = None  # orchestrator.shell.ShellAnalysis for EXEC calls
    destructive: bool = False
    reasons: list[str] = field(default_factory=list)
    capture_key: str | None = None
    prepared: bool = False


@dataclass(slots=True, frozen=True)
class Verdict:
    """The answer of the pre-hook pipeline: ``allow``, ``deny`` with a structured error, or ``ask``.

    ``error`` always has ``type``, ``hook``, ``message`` and ``hint``, plus details such as
    ``path``, ``intent`` or ``patterns`` — data the agent can act on to correct itself.
    """

    decision: str
    error: dict[str, Any] | None = None

    @classmethod
    def allow(cls) -> Verdict:
        """A verdict that lets the call run."""
        return _ALLOW

    @classmethod
    def deny(cls, type: str, hook: str, message: str, *, hint: str, **details: Any) -> Verdict:
        """A refusal; ``details`` with value ``None`` are dropped."""
        return cls("deny", _error(type, hook, message, hint, details))

    @classmethod
    def ask(cls, type: str, hook: str, message: str, *, hint: str, **details: Any) -> Verdict:
        """Hand the decision to a person through the agent's own prompt."""
        return cls("ask", _error(type, hook, message, hint, details))

    @property
    def allowed(self) -> bool:
        return self.decision == "allow"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"decision": self.decision}
        if self.error is not None:
            data["error"] = self.error
        return data

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
