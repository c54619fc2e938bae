"""Read the current git revision by reading ``.git`` directly (no subprocess, no GitPython on the hot path).

Handles: a ``.git`` directory; a ``.git`` *file* (``gitdir: ...``) as used by worktrees and submodules, with the
worktree's ``commondir``; symbolic HEAD -> loose ref, or -> ``packed-refs``; detached HEAD; an unborn branch (returns
None). Not handled (returns None, caller omits ``vcs``): the reftable ref backend (``extensions.refStorage``).
Measured cost: ~10 µs (vs ~0.6 ms for ``git rev-parse``).
"""

from __future__ import annotations

import os
from pathlib import Path

from orchestrator.core.fsutil import SMALL_FILE, read_regular

__all__ = ["find_git_dir", "head_revision", "head_ref"]

_HEX = frozenset("0123456789abcdef")


def _is_sha(s: str) -> bool:
    return len(s) in (40, 64) and all(c in _HEX for c in s)


def _read(path: str) -> str | None:
    # a git-mode command may swap a FIFO in for HEAD or .git while it runs: never a plain, blocking open
    data = read_regular(path, SMALL_FILE)
    return None if data is None else data.decode("utf-8", "replace")


def find_git_dir(root: str | os.PathLike[str]) -> tuple[str, str] | None:
    """Return ``(git_dir, common_dir)`` for the repository containing ``root`` (walking up), or None."""
    cur = os.path.abspath(os.fspath(root))
    while True:
        dotgit = os.path.join(cur, ".git")
        if os.path.isdir(dotgit):
            gitdir = dotgit
            break
        if os.path.isfile(dotgit):
            text = _read(dotgit) or ""
            line = text.strip().splitlines()[0] if text.strip() else ""
            if not line.startswith("gitdir:"):
                return None
            target = line[len("gitdir:"):].strip()
            gitdir = target if os.path.isabs(target) else os.path.normpath(os.path.join(cur, target))
            break
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent
    common = gitdir
    cd = _read(os.path.join(gitdir, "commondir"))
    if cd and cd.strip():
        c = cd.strip()
        common = c if os.path.isabs(c) else os.path.normpath(os.path.join(gitdir, c))
    return gitdir, common


def _resolve_ref(gitdir: str, common: str, ref: str) -> str | None:
    for _ in range(10):  # bounded: symbolic refs may point to symbolic refs, never loop forever
        val = None
        for base in (gitdir, common) if gitdir != common else (gitdir,):
            text = _read(os.path.join(base, *ref.split("/")))
            if text is not None:
                val = text.strip()
                break
        if val is None:
            packed = _read(os.path.join(common, "packed-refs"))
            if packed:
                for line in packed.splitlines():
                    if not line or line[0] in "#^":
                        continue
                    sha, _, name = line.partition(" ")
                    if name.strip() == ref:
                        val = sha.strip()
                        break
        if val is None:
            return None  # unborn branch (no commit yet) or reftable backend
        if val.startswith("ref:"):
            ref = val[4:].strip()
            continue
        return val if _is_sha(val) else None
    return None


def head_revision(root: str | os.PathLike[str] | Path) -> str | None:
    """The commit id HEAD points to for the repository containing ``root``, or None (no repo / unborn / unknown)."""
    found = find_git_dir(root)
    if not found:
        return None
    gitdir, common = found
    head = _read(os.path.join(gitdir, "HEAD"))
    if head is None:
        return None
    head = head.strip()
    if head.startswith("ref:"):
        return _resolve_ref(gitdir, common, head[4:].strip())
    return head if _is_sha(head) else None


def head_ref(root: str | os.PathLike[str] | Path) -> str | None:
    """What HEAD names for the repository containing ``root``: ``refs/heads/<branch>``, ``(detached)``, or None
    outside git. Read from ``.git`` directly (no subprocess), like :func:`head_revision`."""
    found = find_git_dir(root)
    if not found:
        return None
    head = _read(os.path.join(found[0], "HEAD"))
    if head is None:
        return None
    head = head.strip()
    return head[4:].strip() if head.startswith("ref:") else "(detached)"
