"""Glob patterns of ``owned_scope``, compiled to one regular expression per intent.

Semantics (documented in docs/configuration.md): patterns are relative to the workspace root and
use ``/`` as separator; ``*`` and ``?`` do not cross ``/``; ``**`` matches any number of whole
directories (``src/**`` is everything below ``src``); ``[abc]`` / ``[!abc]`` are classes; a pattern
naming a directory (``src`` or ``src/``) also covers everything below it. We translate ourselves
rather than use ``fnmatch`` (whose ``*`` crosses ``/``) so that the compiled regex can be cached
and matched with the stdlib alone on the hook's hot path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache


class GlobError(ValueError):
    """A pattern that cannot be a workspace-relative glob."""


def translate(pattern: str) -> str:
    """Translate one glob to a regex source (without anchors). Raises :class:`GlobError`."""
    if not isinstance(pattern, str) or not pattern.strip():
        raise GlobError("empty pattern")
    if "\x00" in pattern or "\n" in pattern:
        raise GlobError("pattern contains NUL or newline")
    pat = pattern.strip()
    if pat.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", pat):
        raise GlobError("pattern must be relative to the workspace root, not absolute")
    while pat.startswith("./"):
        pat = pat[2:]
    parts = pat.split("/")
    if ".." in parts:
        raise GlobError("pattern must not contain '..'")
    pat = pat.rstrip("/")
    if pat.endswith("/**") and "*" not in pat[:-3] and "?" not in pat[:-3] and "[" not in pat[:-3]:
        # `dir/**` owns the directory itself too (deleting `dir` only removes what the intent owns)
        return re.escape(pat[:-3]) + "(?:/.*)?"
    out: list[str] = []
    i, n = 0, len(pat)
    while i < n:
        c = pat[i]
        if c == "*":
            if pat.startswith("**", i):
                # '**' must be a whole path segment to mean "any directories"
                before_ok = i == 0 or pat[i - 1] == "/"
                after = i + 2
                if before_ok and (after == n or pat[after] == "/"):
                    if after == n:
                        out.append(".*")
                        i = after
                    else:
                        out.append("(?:.*/)?")
                        i = after + 1
                    continue
                raise GlobError("'**' must be a whole path segment (e.g. 'src/**/x.py')")
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pat.find("]", i + 2 if pat.startswith("[!", i) or pat.startswith("[^", i) else i + 1)
            if j == -1:
                raise GlobError("unclosed '[' character class")
            body = pat[i + 1 : j]
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            body = body.replace("\\", "\\\\")
            out.append(f"(?!/)[{body}]")
            i = j + 1
            continue
        elif c == "\\":
            if i + 1 < n:
                out.append(re.escape(pat[i + 1]))
                i += 2
                continue
            raise GlobError("trailing backslash")
        else:
            out.append(re.escape(c))
        i += 1
    src = "".join(out)
    # a pattern naming a directory covers what is below it; a file pattern may match a dir too
    return src + "(?:/.*)?"


def source_many(patterns: Iterable[str]) -> str:
    """One regex source alternating all ``patterns`` (use with ``fullmatch``)."""
    sources = [translate(p) for p in patterns]
    if not sources:
        return r"(?!)"  # matches nothing: an intent with no scope owns nothing
    return "(?:" + "|".join(sources) + ")"


def compile_many(patterns: Iterable[str], *, ignore_case: bool = False) -> re.Pattern[str]:
    """Compile patterns into one alternation (one ``fullmatch`` per path)."""
    return compile_source(source_many(patterns), ignore_case)


@lru_cache(maxsize=1024)
def compile_source(source: str, ignore_case: bool = False) -> re.Pattern[str]:
    """Compile a :func:`source_many` result (cached: compiling a big alternation costs ~0.1 ms)."""
    return re.compile(source, (re.IGNORECASE if ignore_case else 0) | re.DOTALL)


def first_match(patterns: Iterable[str], path: str) -> str | None:
    """The first pattern that matches ``path`` (for error messages; not on the hot path)."""
    for p in patterns:
        if re.fullmatch(translate(p), path, re.DOTALL):
            return p
    return None


def static_root(pattern: str) -> str:
    """The longest literal directory prefix of ``pattern`` ('' for the workspace root).

    ``src/app/**/*.py`` -> ``src/app``; ``tests/test_*.py`` -> ``tests``; ``README.md`` -> ``README.md``
    (a literal pattern is its own root: it may name a file or a directory). Used where a glob must
    be reduced to what a filesystem mechanism can express (the sandbox's writable set, the
    directories a change scan walks); the exact glob is still checked afterwards.
    """
    pat = pattern.strip()
    while pat.startswith("./"):
        pat = pat[2:]
    pat = pat.rstrip("/")
    literal: list[str] = []
    for part in pat.split("/"):
        if any(ch in part for ch in "*?[\\"):
            break
        literal.append(part)
    else:
        return "/".join(literal)
    return "/".join(literal)


def static_roots(patterns: Iterable[str]) -> list[str]:
    """The :func:`static_root` of each pattern, minimal: a root below another root is dropped."""
    roots = sorted({static_root(p) for p in patterns})
    if "" in roots:
        return [""]
    kept: list[str] = []
    for r in roots:
        if not any(r == k or r.startswith(k + "/") for k in kept):
            kept.append(r)
    return kept
