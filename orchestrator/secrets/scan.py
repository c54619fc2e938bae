"""Finding the secret files of a tree for the kernel sandbox's deny list, cheaply enough for every shell command.

Issue 21 wraps every shell command, so the sandbox's deny list (:func:`orchestrator.secrets.patterns.find_secret_files`) is
computed on every call. Walking a 100,000-file workspace and matching every name took 350-450 ms here. Two things
make it cheap:

- **a name prefilter**: the matcher's compiled name alternation decides almost every file; only a candidate pays
  the full :meth:`~orchestrator.secrets.patterns.SecretMatcher.match` (path normalisation, allow patterns);
- **a directory memo**: which names in a directory are secrets, and which subdirectories it has, change only when
  its entries change — and that moves the directory's ``mtime``/``ctime`` (a create, delete or rename in it; an
  in-place write to a file does not, and does not change a *name* either). So a directory whose ``lstat`` key
  (mtime, ctime, inode) equals the remembered one is not listed again: one ``lstat`` per directory per call. The
  freshness rule of the project applies (orchestrator/core/fsutil.py): a key younger than ``fsutil.RACY_NS`` is not
  remembered (a change in the same clock tick would keep the key), so a long-lived process answers as a fresh one
  (tests/test_freshness.py). The memo is per process (the ``orch serve`` daemon keeps it warm; a one-shot hook
  process pays the walk) and bounded.
"""

from __future__ import annotations

import os
from typing import Any

#: (matcher key, directory) -> ((mtime_ns, ctime_ns, inode), secret file names, subdirectory names)
_MEMO: dict[tuple[Any, str], tuple[tuple[int, int, int], tuple[str, ...], tuple[str, ...]]] = {}
#: the memo is cleared when it grows past this many directories (a daemon serving many big workspaces)
MAX_DIRS = 200_000


def tree_secrets(tree: str, m: Any, root: str, skip: frozenset[str], limit: int,
                 max_depth: int | None = None, spent: list[int] | None = None) -> list[str]:
    """Absolute paths of the files under ``tree`` that ``m`` calls secret (``skip``: directory names not entered;
    at most ``limit`` files looked at, memoised directories counted by their remembered size; directories more
    than ``max_depth`` levels below ``tree`` not entered; ``spent[0]`` counts the directories visited and the files
    listed)."""
    from orchestrator.core import fsutil

    found: list[str] = []
    stack = [tree]
    levels = {tree: 0}
    seen = 0
    memo_key = getattr(m, "_key", id(m))
    while stack and seen <= limit:
        d = stack.pop()
        level = levels.pop(d, 0)
        if spent is not None:
            spent[0] += 1
        try:
            st = os.lstat(d)
        except OSError:
            continue
        key = (st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        hit = _MEMO.get((memo_key, d))
        if hit is not None and hit[0] == key:
            names, subdirs = hit[1], hit[2]
        else:
            listed = _list(d, m, root, skip)
            if listed is None:
                continue
            names, subdirs, files = listed
            seen += files
            if spent is not None:
                spent[0] += files
            if not fsutil.racy(st):
                if len(_MEMO) >= MAX_DIRS:
                    _MEMO.clear()
                _MEMO[(memo_key, d)] = (key, names, subdirs)
        found.extend(os.path.join(d, n) for n in names)
        if max_depth is None or level < max_depth:
            for sub in subdirs:
                child = os.path.join(d, sub)
                stack.append(child)
                if max_depth is not None:
                    levels[child] = level + 1
    return found


#: the workspace's siblings (``../other``): how deep below the parent directory, and how many files at most
SIBLING_DEPTH = 3
SIBLING_BUDGET = 5_000


def sibling_secrets(root: str, m: Any, skip: frozenset[str], *, depth: int = SIBLING_DEPTH,
                    budget: int = SIBLING_BUDGET) -> list[str]:
    """Secret files next to the workspace: in its parent directory and in the parent's other children, at most
    ``depth`` levels below the parent and ``budget`` files in all (issue 21, remaining gaps: a sibling project's
    ``../other/.env`` read by a script). Nothing for a workspace directly under ``/`` (its siblings are the system)
    or one whose parent is the home directory (its credential locations are scanned apart; a home holds caches and
    toolchains far beyond any budget)."""
    parent = os.path.dirname(root.rstrip("/"))
    if parent in ("", "/") or parent == os.path.realpath(os.path.expanduser("~")):
        return []
    found: list[str] = []
    left = budget
    try:
        entries = sorted(os.scandir(parent), key=lambda e: e.name)
    except OSError:
        return []
    for e in entries:
        if e.path == root or e.name in skip:
            continue
        try:
            if e.is_symlink():
                continue
            if e.is_file():
                left -= 1
                if m.match(e.path, root) is not None:
                    found.append(e.path)
                continue
            if not e.is_dir():
                continue
        except OSError:
            continue
        if left <= 0:
            break
        spent = [0]
        found.extend(tree_secrets(e.path, m, root, skip, left, max_depth=depth - 1, spent=spent))
        left -= spent[0]
    return found


def _list(d: str, m: Any, root: str, skip: frozenset[str]) -> tuple[tuple[str, ...], tuple[str, ...], int] | None:
    """(secret file names, subdirectories to enter, files looked at) of directory ``d``, or None."""
    name_rx = getattr(m, "_name", None)
    path_rx = getattr(m, "_path", None)
    names: list[str] = []
    subdirs: list[str] = []
    files = 0
    try:
        it = os.scandir(d)
    except OSError:
        return None
    with it:
        for e in it:
            try:
                if e.is_dir(follow_symlinks=False):
                    if e.name not in skip:
                        subdirs.append(e.name)
                    continue
            except OSError:
                continue
            files += 1
            # the prefilter: a name pattern, or a path pattern (home, absolute, root-anchored) on the full path
            if (name_rx is not None and name_rx.fullmatch(e.name)) or \
                    (path_rx is not None and _path_hit(path_rx, e.path, root)):
                if m.match(e.path, root) is not None:
                    names.append(e.name)
    return tuple(names), tuple(subdirs), files


def _path_hit(path_rx: Any, full: str, root: str) -> bool:
    if path_rx.fullmatch(full):
        return True
    r = root.rstrip("/")
    return full.startswith(r + "/") and path_rx.fullmatch("\0" + full[len(r) + 1:]) is not None


def clear() -> None:
    """Forget every remembered directory (tests)."""
    _MEMO.clear()


__all__ = ["tree_secrets", "sibling_secrets", "clear", "MAX_DIRS", "SIBLING_DEPTH", "SIBLING_BUDGET"]
