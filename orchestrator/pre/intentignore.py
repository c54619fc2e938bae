"""``.intentignore``: protected paths (gitignore syntax) that no agent may write.

Patterns are compiled by pathspec's ``GitIgnoreSpec`` when the file changes; the hot path evaluates
the compiled regexes itself (:class:`IgnoreRules`, the same last-match-wins and directory-priority
rules as pathspec's default gitignore backend, cross-checked against pathspec in the tests), so a cold hook
process does not import pathspec. A denial names the pattern that matched.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator import confcache
from orchestrator.errors import ConfigError
from orchestrator.models import Verdict

if TYPE_CHECKING:
    from orchestrator.context import Context

NAME = "intentignore"
_DIR_MARK = "ps_d"  # pathspec's named group for "matched as a directory"
_NAMED_GROUP = re.compile(r"\(\?P<[^>]+>")


class IgnoreRules:
    """Compiled ``.intentignore`` patterns: ``(regex, include, text)`` in file order."""

    def __init__(self, patterns: list[list[Any]]) -> None:
        self.patterns = [(re.compile(src), bool(include), text) for src, include, text in patterns]
        sources = [_NAMED_GROUP.sub("(?:", src) for src, include, _t in patterns if include]
        # one alternation of every include pattern: if it does not match, nothing protects the path
        # (negations only un-protect), so the common case costs one regex search
        self.prefilter = re.compile("|".join(f"(?:{s})" for s in sources)) if sources else None
        self._memo: dict[str, str | None] = {}

    def match(self, path: str) -> tuple[bool | None, int | None]:
        """(include, index of the deciding pattern) for ``path`` — pathspec's gitignore rule as
        its default backend applies it: patterns are scanned from last to first; a file-pattern
        match (priority 2) decides at once, a directory-pattern match (priority 1) holds unless a
        file-pattern match comes before it."""
        out_include: bool | None = None
        out_index: int | None = None
        out_priority = 0
        for index in range(len(self.patterns) - 1, -1, -1):
            rx, include, _text = self.patterns[index]
            m = rx.match(path)
            if m is None:
                continue
            priority = 1 if m.groupdict().get(_DIR_MARK) else 2
            if priority > out_priority:
                out_include, out_index, out_priority = include, index, priority
            if priority == 2:
                break
        return out_include, out_index

    def protected_by(self, path: str) -> str | None:
        """The pattern protecting ``path`` (also tried as a directory, as ``rm -r`` targets one)."""
        if path in self._memo:
            return self._memo[path]
        result = None
        if self.prefilter is not None and (self.prefilter.search(path) or self.prefilter.search(path + "/")):
            for candidate in (path, path + "/"):
                include, index = self.match(candidate)
                if include and index is not None:
                    result = self.patterns[index][2]
                    break
        if len(self._memo) > 4096:  # agents touch the same files again and again; keep it bounded
            self._memo.clear()
        self._memo[path] = result
        return result


_NONE = IgnoreRules([])


def _validate(path: Path, text: str) -> list[list[Any]]:
    from pathspec import GitIgnoreSpec

    try:
        spec = GitIgnoreSpec.from_lines(text.splitlines())
    except Exception as exc:  # pathspec raises several types for bad patterns
        raise ConfigError(f"invalid pattern: {exc}", file=path, hint="fix the gitignore-style pattern") from None
    out = []
    for p in spec.patterns:
        regex = getattr(p, "regex", None)
        if p.include is None or regex is None:
            continue  # comments and blank lines
        out.append([regex.pattern, p.include, getattr(p, "pattern", None) or str(p)])
    return out


def load(path: str | os.PathLike[str], *, cache_dir: str | None = None) -> IgnoreRules:
    """The compiled rules of ``path`` (no rules if the file is absent)."""
    return confcache.load(os.fspath(path), "intentignore", validate=_validate, materialise=IgnoreRules,
                          missing=lambda: _NONE, cache_dir=cache_dir)


def check(ctx: Context) -> Verdict | None:
    rules = ctx.ignore_rules()
    for path in ctx.call.resolved:
        pattern = rules.protected_by(path)
        if pattern is not None:
            return Verdict.deny(
                "protected-path", NAME, f"{path} is protected by .intentignore pattern {pattern!r}",
                path=path, pattern=pattern, file=".orchestration/.intentignore",
                hint="protected paths cannot be changed by agents; leave this file alone or ask a person",
            )
    return None
