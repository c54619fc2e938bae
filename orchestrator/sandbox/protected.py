"""Protected paths beneath a writable scope root: found cheaply on every call, made read-only in the kernel.

Landlock grants a directory's whole tree, so with scope ``src/**`` a sandboxed ``git switch --orphan`` or ``git
revert`` could delete ``src/vendor/`` although ``.intentignore`` protects it (the analyzer refuses only what a command
names). The command has its own mount namespace (:mod:`orchestrator.sandbox.mounts`): every *existing* protected path
beneath a granted root is bound over itself read-only there (``--ro``), so writes get ``EROFS`` and removing or
renaming it gets ``EBUSY``, whatever the command runs. Protected means: matched by ``.intentignore`` (the pre-hook's
own compiled rules) or a governance path at any depth (:func:`orchestrator.core.governance.protected_by`: a nested
``.claude/settings.json``, ``.git/hooks/`` of a nested repository).

Finding them is a walk of the granted roots, made cheap as the secret scan's (:mod:`orchestrator.secrets.scan`): which
entries of a directory are protected, and which subdirectories it has, change only when its entries change, which
moves its ``mtime``/``ctime``; so a directory whose ``lstat`` key equals the remembered one is not listed again (one
``lstat`` per directory per call; a racy key is not remembered: ``orchestrator.core.fsutil``). A protected directory is
bound whole and not entered, unless the rules hold a negation (``!keep.txt`` may re-open a path beneath it) and it
is not a governance path: then its entries are judged one by one. Dependency trees and caches (:data:`SKIP`) are judged but not entered.

What stays open (docs/security.md): a protected path created by the command itself (a mount needs an existing
inode), a symbolic link (a mount would follow it), beyond :data:`MAX_PATHS` mounts or :data:`MAX_ENTRIES` entries,
and a protected path moved away with a parent directory that is not protected (``mv src/a src/b`` moves
``src/a/vendor`` with it: its content stays read-only, its old path is empty; the post-hook reports it).
"""

from __future__ import annotations

import os
import re
from typing import Any

#: directory names judged but never entered (dependency trees, caches, nested git dirs)
SKIP = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache",
                  ".pytest_cache", ".ruff_cache"})
#: at most this many read-only mounts per command (each costs the launcher a few microseconds)
MAX_PATHS = 1000
#: at most this many entries listed per call (memoised directories count by their remembered size)
MAX_ENTRIES = 300_000
#: the memo is cleared when it grows past this many directories
MAX_DIRS = 200_000
#: (rules key, directory, its workspace-relative path) -> ((mtime_ns, ctime_ns, inode), protected (name, is_dir,
#: IGNORED or GOVERNANCE) entries, subdirectories to enter)
_MEMO: dict[tuple[Any, str, str], tuple[tuple[int, int, int], tuple[tuple[str, bool, int], ...], tuple[str, ...]]] = {}


#: what :meth:`_Judge.protected` answers
NO, IGNORED, GOVERNANCE = 0, 1, 2


class _Judge:
    """Whether a workspace-relative path is protected: the ``.intentignore`` rules (duck-typed: the pre-hook's
    ``IgnoreRules``, with ``patterns``, ``prefilter`` and ``match``) or a governance path.

    Walking a tree asks it about every entry, so a name screen comes first (:func:`_screen`): the last path segment
    of every pattern, as one regex over the entry's own name. A pattern can only match an entry whose parents it
    did not already match if its last segment matches the entry's name (a parent it matched was bound whole and not
    entered)."""

    def __init__(self, rules: Any) -> None:
        from orchestrator.core.governance import GOVERNANCE, protected_by

        self.governance = protected_by
        patterns = list(getattr(rules, "patterns", None) or ())
        self.rules = rules if patterns else None
        self.prefilter = getattr(rules, "prefilter", None)
        #: a negation may re-open a path beneath a protected directory: such a directory is judged entry by entry
        self.negations = any(not p[1] for p in patterns)
        self.key = tuple(p[2] for p in patterns)
        lasts = [_regex_last(rx) for _shown, rx in GOVERNANCE]
        lasts += [_glob_last(p[2]) for p in patterns if p[1]]
        # (under a negation, the entries of an ignored directory are judged one by one: a name of theirs need not
        # match any last segment, so no screen then)
        self.screen = None if self.negations or any(x is None for x in lasts) else re.compile("|".join(f"(?:{x})" for x in lasts),
                                                                             re.IGNORECASE | re.DOTALL)

    def protected(self, rel: str, is_dir: bool, name: str | None = None) -> int:
        """:data:`NO`, :data:`IGNORED` or :data:`GOVERNANCE` for ``rel`` (``name``: its last segment, while walking:
        the screen may answer NO at once)."""
        if name is not None and self.screen is not None and self.screen.fullmatch(name) is None:
            return NO
        if self.governance(rel) is not None:
            return GOVERNANCE
        if self.rules is None:
            return NO
        for candidate in ((rel + "/", rel) if is_dir else (rel,)):
            if self.prefilter is not None and not self.prefilter.search(candidate):
                continue
            include, index = self.rules.match(candidate)
            if include and index is not None:
                return IGNORED
        return NO


def _split(text: str) -> list[str]:
    """``text`` split at each ``/`` outside brackets and parentheses (a regex's path segments)."""
    out, depth, cur, i = [], 0, "", 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            cur += text[i:i + 2]
            i += 2
            continue
        depth += c in "[(" and 1 or (-1 if c in "])" else 0)
        if c == "/" and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    return [*out, cur]


def _regex_last(rx: str) -> str | None:
    """The regex of a governance pattern's last segment (``.*/\\.git/hooks(?:/.*)?`` -> ``hooks``)."""
    rx = rx.removesuffix("(?:/.*)?")
    last = _split(rx)[-1]
    return None if not last or last in (".*", ".+") else last


def _glob_last(pattern: str) -> str | None:
    """The regex of a gitignore pattern's last segment that is not ``**`` (``src/vendor/`` -> ``vendor``,
    ``**/foo/**`` -> ``foo``, ``*.golden`` -> ``[^/]*\\.golden``), or None when it has none."""
    parts = [p for p in pattern.strip("/").split("/") if p not in ("", "**")]
    if not parts:
        return None
    out, glob, i = "", parts[-1], 0
    while i < len(glob):
        c = glob[i]
        if c == "\\" and i + 1 < len(glob):
            out += re.escape(glob[i + 1])
            i += 2
            continue
        if c == "*":
            out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "[" and "]" in glob[i + 2:]:
            end = glob.index("]", i + 2)
            body = glob[i + 1:end]
            out += "[" + ("^" + body[1:] if body.startswith("!") else body) + "]"
            i = end
        else:
            out += re.escape(c)
        i += 1
    return out


def read_only(root: str, grants: list[str], rules: Any) -> tuple[list[str], bool]:
    """(the existing protected paths beneath the workspace ``grants`` to bind read-only, truncated?).

    ``grants``: absolute paths inside ``root`` that the plan makes writable; ``rules``: the compiled
    ``.intentignore`` (None: governance paths only)."""
    judge = _Judge(rules)
    out: list[str] = []
    budget = [MAX_ENTRIES]
    root = root.rstrip("/") or "/"
    for grant in grants:
        rel = os.path.relpath(grant, root).replace(os.sep, "/")
        if rel.startswith("..") or rel == ".":
            continue  # outside the workspace (or the root itself, never granted whole)
        try:
            is_dir = os.path.isdir(grant) and not os.path.islink(grant)
        except OSError:
            continue
        kind = judge.protected(rel, is_dir)
        if kind == GOVERNANCE or (kind == IGNORED and not (is_dir and judge.negations)):
            out.append(grant)
        elif is_dir:
            _walk(grant, rel, judge, out, budget)
        if len(out) >= MAX_PATHS or budget[0] <= 0:
            return out[:MAX_PATHS], True
    return out, False


def _walk(top: str, top_rel: str, judge: _Judge, out: list[str], budget: list[int]) -> None:
    from orchestrator.core import fsutil

    stack = [(top, top_rel)]
    while stack and budget[0] > 0 and len(out) < MAX_PATHS:
        d, rel = stack.pop()
        try:
            st = os.lstat(d)
        except OSError:
            continue
        key = (st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        hit = _MEMO.get((judge.key, d, rel))
        if hit is not None and hit[0] == key:
            found, subdirs = hit[1], hit[2]
            budget[0] -= len(found) + len(subdirs)
        else:
            listed = _list(d, rel, judge, budget)
            if listed is None:
                continue
            found, subdirs = listed
            if not fsutil.racy(st):
                if len(_MEMO) >= MAX_DIRS:
                    _MEMO.clear()
                _MEMO[(judge.key, d, rel)] = (key, found, subdirs)
        for name, is_dir, kind in found:
            if is_dir and kind == IGNORED and judge.negations:
                stack.append((os.path.join(d, name), f"{rel}/{name}"))  # judged entry by entry
            else:
                out.append(os.path.join(d, name))
        stack.extend((os.path.join(d, name), f"{rel}/{name}") for name in subdirs)


def _list(d: str, rel: str, judge: _Judge, budget: list[int]
          ) -> tuple[tuple[tuple[str, bool, int], ...], tuple[str, ...]] | None:
    """(protected entries, subdirectories to enter) of directory ``d`` (``rel`` in the workspace)."""
    found: list[tuple[str, bool, int]] = []
    subdirs: list[str] = []
    try:
        it = os.scandir(d)
    except OSError:
        return None
    with it:
        for e in it:
            budget[0] -= 1
            try:
                if e.is_symlink():
                    continue  # a mount would follow it
                is_dir = e.is_dir(follow_symlinks=False)
            except OSError:
                continue
            kind = judge.protected(f"{rel}/{e.name}", is_dir, e.name)
            if kind:
                found.append((e.name, is_dir, kind))
            elif is_dir and e.name not in SKIP:
                subdirs.append(e.name)
    return tuple(sorted(found)), tuple(sorted(subdirs))


def clear() -> None:
    """Forget every remembered directory (tests)."""
    _MEMO.clear()


__all__ = ["read_only", "clear", "SKIP", "MAX_PATHS", "MAX_ENTRIES"]
