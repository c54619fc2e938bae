"""orchestrator — governance middleware for AI coding agents.

The public API: a :class:`Governor` per workspace, the canonical :class:`ToolCall`, the
:class:`Verdict` it returns and the :class:`ToolResult` a host hands back after the tool ran. Everything else is
internal.
"""

from __future__ import annotations

from orchestrator._version import __version__
from orchestrator.errors import ConfigError, IntentError, OrchestratorError, WorkspaceError
from orchestrator.models import Kind, ToolCall, ToolResult, Verdict
from orchestrator.pipeline import Denied, Governor
from orchestrator.tools import to_call

__all__ = [
    "ConfigError",
    "Denied",
    "Governor",
    "IntentError",
    "Kind",
    "OrchestratorError",
    "ToolCall",
    "ToolResult",
    "Verdict",
    "WorkspaceError",
    "__version__",
    "to_call",
]
