"""orchestrator — governance middleware for AI coding agents.

The public API: a :class:`Governor` per workspace, the canonical :class:`ToolCall`, the
:class:`Verdict` it returns and the :class:`ToolResult` a host hands back after the tool ran. Everything else is
internal.
"""

from __future__ import annotations

import sys as _sys

if _sys.argv[:1] == ["-m"] and _sys.path:
    # `python -m orchestrator …` (the daemon the hook client starts in the workspace, the MCP server a host starts
    # there) puts its working directory first on sys.path, and a PYTHONPATH the person exported may name a project
    # directory (`src`). Both are the workspace, which sandboxed commands write into: a `json/` or `platform/`
    # package, a `src/yaml.py`, would be imported -- unsandboxed -- by every later hook call (redteam2
    # R2-own-python). Nothing of it is imported yet. Kept: this package's parent and the interpreter's own prefix (a
    # project `.venv`, which the sandbox never grants: sandbox/guard.py).
    import os as _os

    _cwd = _os.path.realpath(_os.getcwd())
    _keep = (_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))),
             *{_os.path.realpath(p) for p in (_sys.prefix, _sys.exec_prefix)})

    def _mine(entry: str) -> bool:
        full = _os.path.realpath(entry or ".")
        return any(full == k or full.startswith(k + _os.sep) for k in _keep) or \
            not (full == _cwd or full.startswith(_cwd + _os.sep))

    _sys.path[:] = [e for e in _sys.path if _mine(e)]

from orchestrator._version import __version__
from orchestrator.core.errors import ConfigError, IntentError, OrchestratorError, WorkspaceError
from orchestrator.core.models import Kind, ToolCall, ToolResult, Verdict
from orchestrator.engine.pipeline import Denied, Governor
from orchestrator.engine.tools import to_call

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
