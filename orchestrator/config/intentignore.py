"""``.intentignore``: protected paths (gitignore syntax) that no agent may write — the compiled rules.

Patterns are compiled by pathspec's ``GitIgnoreSpec`` when the file changes; the hot path evaluates
the compiled regexes itself (:class:`IgnoreRules`, the same last-match-wins and directory-priority
rules as pathspec's default gitignore backend, cross-checked against pathspec in the tests), so a cold hook
process does not import pathspec. The pre-hook that refuses a protected path is ``orchestrator/pre/intentignore.py``;
the sandbox and ``orch doctor`` read the same rules.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from orchestrator.config import confcache
from orchestrator.core.errors import ConfigError
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


def check_hooks_path(ws: Any) -> Any:
    """``orch doctor``: a ``core.hooksPath`` inside the workspace should also be in ``.intentignore``.

    Selfguard refuses hook files there (and every shell write into the directory); a file tool writing a helper
    that a hook sources (husky's ``_/h``) is refused only when ``.intentignore`` covers the directory, which costs
    nothing per call.
    """
    from orchestrator.core.findings import Finding
    from orchestrator.vcs.hooks import hook_dirs

    dirs = hook_dirs(str(ws.root))
    if not dirs:
        yield Finding("git.hooks-path", "ok", "no core.hooksPath inside the workspace (hooks live in .git/hooks)")
        return
    rules = load(ws.intentignore_path)
    for d in dirs:
        if d == "." or rules.protected_by(d + "/x"):
            yield Finding("git.hooks-path", "ok", f"core.hooksPath {d} is protected")
        else:
            yield Finding("git.hooks-path", "warn",
                          f"core.hooksPath {d} is inside the workspace: agents cannot write hook files there, but a "
                          "file a hook runs (a helper script) is writable",
                          f"add '{d}/' to .orchestration/.intentignore")
