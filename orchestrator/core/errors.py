"""The error hierarchy: one base class, a few subclasses that carry fields.

Expected errors (bad config, unknown intent, missing workspace) derive from
:class:`OrchestratorError`; the CLI's single error boundary turns them into a
one-line message and exit code 1. Anything else is a bug (exit 3).
"""

from __future__ import annotations

import os
from typing import Any


class OrchestratorError(Exception):
    """Base class of every expected error. ``str(err)`` is a complete one-line message."""

    #: machine-readable error type, used when the error becomes a structured verdict
    type: str = "error"

    def __init__(self, message: str, *, hint: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        """The error as structured data (the shape of a denial's ``error``)."""
        data: dict[str, Any] = {"type": self.type, "message": self.message}
        data.update({k: v for k, v in self.details.items() if v is not None})
        if self.hint:
            data["hint"] = self.hint
        return data


class WorkspaceError(OrchestratorError):
    """No ``.orchestration/`` workspace where one was expected."""

    type = "workspace-missing"


class ConfigError(OrchestratorError):
    """A governance file (intents, policy, .intentignore) is malformed.

    ``file`` and ``line`` locate the problem; ``intent`` names the offending intent when known.
    """

    type = "config-error"

    def __init__(
        self,
        message: str,
        *,
        file: str | os.PathLike[str] | None = None,
        line: int | None = None,
        intent: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.file = os.fspath(file) if file is not None else None
        self.line = line
        self.intent = intent
        where = ""
        if self.file:
            where = self.file + (f":{line}" if line else "") + ": "
        who = f"intent {intent!r}: " if intent else ""
        super().__init__(f"{where}{who}{message}", hint=hint, file=self.file, line=line, intent=intent)


class IntentError(OrchestratorError):
    """An intent cannot be selected (unknown id, wrong status)."""

    type = "intent-invalid"


class SessionError(OrchestratorError):
    """A call or an intent selection names no usable session id (see :func:`orchestrator.state.sessions.usable`)."""

    type = "session-required"


class UsageError(OrchestratorError):
    """The user invoked a command wrongly (bad flags, bad JSON on stdin)."""

    type = "usage-error"
