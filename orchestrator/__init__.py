"""orchestrator — governance middleware for AI coding agents.

The public API: a :class:`Governor` per workspace, the canonical :class:`ToolCall`, the
:class:`Verdict` it returns and the :class:`ToolResult` a host hands back after the tool ran. Everything else is
internal.
"""

from __future__ import annotations

import sys as _sys

if _sys.argv[:1] == ["-m"] and _sys.path and not getattr(_sys.flags, "safe_path", False):
    # `python -m orchestrator …` (the daemon the hook client starts in the workspace, the MCP server a host starts
    # there) puts its working directory first on sys.path. That is the workspace, which sandboxed commands write
    # into: a `json/` or `platform/` package planted in a scope directory would be imported -- unsandboxed -- by
    # every later hook call (redteam2 R2-own-python). Nothing of it is imported yet (`python -P` on 3.11+).
    import os as _os

    if _os.path.realpath(_sys.path[0] or ".") == _os.path.realpath(_os.getcwd()):
        del _sys.path[0]

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
