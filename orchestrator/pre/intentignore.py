"""``.intentignore``: protected paths (gitignore syntax) that no agent may write.

Compiled with pathspec's ``GitIgnoreSpec`` (lazily, cached by mtime); ``check_file`` tells *which*
pattern matched, and the denial names it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.errors import ConfigError
from orchestrator.models import Verdict

if TYPE_CHECKING:
    from orchestrator.pipeline import Context

NAME = "intentignore"

_cache: dict[str, tuple[tuple[int, int], Any]] = {}


def load(path: Path) -> Any:
    """The compiled spec of ``path`` (None if the file is absent)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    key = (st.st_mtime_ns, st.st_size)
    hit = _cache.get(str(path))
    if hit is not None and hit[0] == key:
        return hit[1]
    from pathspec import GitIgnoreSpec

    lines = path.read_text(encoding="utf-8").splitlines()
    try:
        spec = GitIgnoreSpec.from_lines(lines)
    except Exception as exc:  # pathspec raises several types for bad patterns
        raise ConfigError(f"invalid pattern: {exc}", file=path, hint="fix the gitignore-style pattern") from None
    _cache[str(path)] = (key, spec)
    return spec


def matching_pattern(spec: Any, path: str) -> str | None:
    """The pattern protecting ``path``, or None. pathspec applies directory patterns to what is
    below them; the path is also tried as a directory, since a shell ``rm -r`` targets one."""
    for candidate in (path, path + "/"):
        result = spec.check_file(candidate)
        if result.include:
            return _pattern_text(spec, result.index)
    return None


def _pattern_text(spec: Any, index: int | None) -> str:
    if index is None:
        return "?"
    pattern = spec.patterns[index]
    return getattr(pattern, "pattern", None) or str(pattern)


def check(ctx: Context) -> Verdict | None:
    spec = load(ctx.gov.workspace.intentignore_file)
    if spec is None:
        return None
    for path in ctx.call.resolved:
        pattern = matching_pattern(spec, path)
        if pattern is not None:
            return Verdict.deny(
                "protected-path", NAME, f"{path} is protected by .intentignore pattern {pattern!r}",
                path=path, pattern=pattern, file=os.fspath(".orchestration/.intentignore"),
                hint="protected paths cannot be changed by agents; leave this file alone or ask a person",
            )
    return None
