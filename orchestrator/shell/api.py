"""The entry point: :func:`analyze` (never raises; cached per command and secret matcher)."""
from __future__ import annotations

import functools

from orchestrator.shell.parse import _MAX_LEN
from orchestrator.shell.analysis import ShellAnalysis
from orchestrator.shell.run import _Acc, _Ctx
from orchestrator.shell.walker import _analyze_into

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Any


def analyze(command: str, secrets: Any = None) -> ShellAnalysis:
    """Analyze one shell command line (may contain lists, pipes, heredocs...). Never raises.

    ``secrets`` is the :class:`orchestrator.secrets.patterns.SecretMatcher` naming secret files (None: the defaults)."""
    try:
        if secrets is None:
            from orchestrator.secrets.patterns import matcher

            secrets = matcher()
        if not isinstance(command, str):
            return ShellAnalysis("unknown", reasons=("command is not a string",), unresolved=True)
        if len(command) > _MAX_LEN:
            return ShellAnalysis("unknown", reasons=("command too long to analyze",), unresolved=True)
        return _analyze_cached(command, secrets)
    except Exception as exc:  # fail closed: anything unexpected is "unknown"
        return ShellAnalysis("unknown", reasons=(f"analyzer error: {type(exc).__name__}",), unresolved=True)


@functools.lru_cache(maxsize=2048)
def _analyze_cached(command: str, secrets: Any = None) -> ShellAnalysis:
    if not command.strip():
        # Fail closed: an empty command usually means the adapter could not find the real one.
        return ShellAnalysis("unknown", reasons=("empty command",))
    acc = _Acc(analyze)  # rules judge inner commands (a pager, a key binding) through the same entry point
    acc.secrets = secrets
    _analyze_into(command, acc, _Ctx(), 0)
    return acc.result()
