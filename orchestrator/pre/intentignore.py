"""``.intentignore``: protected paths (gitignore syntax) that no agent may write.

Compiled with pathspec's ``GitIgnoreSpec`` (lazily, cached by mtime); ``check_file`` tells *which*
pattern matched, and the denial names it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.errors import ConfigError
from orchestrator.models import Verdict

if TYPE_CHECKING:
    from orchestrator.pipeline import Context

NAME = "intentignore"

_cache: dict[str, tuple[tuple[int, int], Any, re.Pattern[str] | None]] = {}
_NAMED_GROUP = re.compile(r"\(\?P<[^>]+>")


def load(path: Path | str) -> tuple[Any, re.Pattern[str] | None] | None:
    """(compiled spec, prefilter) for ``path``, or None if the file is absent.

    The prefilter is one regex alternating every *include* pattern: if it does not match, no
    pattern protects the path (negations can only un-protect), so the common case costs one regex
    search instead of a walk over every pattern.
    """
    key_path = str(path)
    try:
        st = os.stat(key_path)
    except FileNotFoundError:
        return None
    key = (st.st_mtime_ns, st.st_size)
    hit = _cache.get(key_path)
    if hit is not None and hit[0] == key:
        return hit[1], hit[2]
    from pathspec import GitIgnoreSpec

    lines = Path(key_path).read_text(encoding="utf-8").splitlines()
    try:
        spec = GitIgnoreSpec.from_lines(lines)
    except Exception as exc:  # pathspec raises several types for bad patterns
        raise ConfigError(f"invalid pattern: {exc}", file=key_path, hint="fix the gitignore-style pattern") from None
    sources = [_NAMED_GROUP.sub("(?:", p.regex.pattern) for p in spec.patterns
               if p.include and getattr(p, "regex", None) is not None]
    try:
        prefilter = re.compile("|".join(f"(?:{src})" for src in sources)) if sources else None
    except re.error:
        prefilter = re.compile("")  # cannot combine: always take the exact (slower) path
    _cache[key_path] = (key, spec, prefilter)
    return spec, prefilter


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


_memo: dict[int, dict[str, str | None]] = {}


def protected_by(spec: Any, prefilter: re.Pattern[str], path: str) -> str | None:
    """The pattern protecting ``path`` under ``spec``; memoised per compiled spec, since agents
    touch the same files again and again and 50 alternated gitignore regexes cost ~5 us a search."""
    memo = _memo.get(id(spec))
    if memo is None:
        _memo.clear()  # one spec is live at a time; drop results of replaced ones
        memo = _memo[id(spec)] = {}
    if path in memo:
        return memo[path]
    if prefilter.search(path) is None and prefilter.search(path + "/") is None:
        result = None
    else:
        result = matching_pattern(spec, path)
    if len(memo) > 4096:
        memo.clear()
    memo[path] = result
    return result


def check(ctx: Context) -> Verdict | None:
    loaded = load(ctx.gov.workspace.intentignore_path)
    if loaded is None:
        return None
    spec, prefilter = loaded
    if prefilter is None:
        return None
    for path in ctx.call.resolved:
        pattern = protected_by(spec, prefilter, path)
        if pattern is not None:
            return Verdict.deny(
                "protected-path", NAME, f"{path} is protected by .intentignore pattern {pattern!r}",
                path=path, pattern=pattern, file=".orchestration/.intentignore",
                hint="protected paths cannot be changed by agents; leave this file alone or ask a person",
            )
    return None
