"""One path canonicalisation for every hook.

A target is turned into a workspace-relative POSIX path the way the kernel would resolve it:
relative to the call's cwd, ``~`` expanded, duplicate slashes and ``..`` handled *physically* (by
``realpath``, so ``link/..`` follows the link like ``open()`` does), symlinks resolved — including
a not-yet-existing file under a symlinked directory. A path that resolves outside the workspace is
refused, whatever the lexical spelling. Names with NUL or newline are refused outright: NUL cannot
reach the kernel, and a newline is a classic way to forge log lines and confuse line-based tools.
"""

from __future__ import annotations

import os
import stat
from functools import lru_cache
from typing import Any

from orchestrator.core.errors import OrchestratorError


class PathError(OrchestratorError):
    """A target path that cannot be governed (outside the workspace, or malformed)."""

    type = "path-invalid"


class OutsideWorkspace(PathError):
    type = "path-outside-workspace"


#: "the final component was not ``lstat``-ed" (it was resolved through ``realpath``)
UNKNOWN: Any = object()


def canonical(raw: str, root: str, cwd: str | None = None, *, ignore_case: bool = False) -> str:
    """Resolve ``raw`` to a workspace-relative POSIX path (``"."`` for the root itself).

    ``root`` must already be absolute and symlink-resolved. Every component below it is ``lstat``-ed on every
    call (nothing is remembered between calls: a symlink swapped in since the last call is seen). Raises
    :class:`PathError`.
    """
    return resolve(raw, root, cwd, ignore_case=ignore_case)[0]


def resolve(raw: str, root: str, cwd: str | None = None, *, ignore_case: bool = False) -> tuple[str, Any]:
    """:func:`canonical`, plus what the resolution learnt about the target itself, so that nobody needs to
    ``lstat`` it again: its ``os.stat_result`` (not following a final symlink), None if it does not exist, or
    :data:`UNKNOWN`."""
    if isinstance(raw, str) and not raw.isascii():
        # one spelling per name: "\udcc3\udca9" (undecodable bytes as surrogates) and "é" are the same bytes on
        # disk; scopes, rules and the ledger must all see the same text
        try:
            raw = os.fsdecode(os.fsencode(raw))
        except UnicodeError:
            raise PathError("path is not valid text", hint="use a plain file name",
                            path=raw.encode("utf-8", "backslashreplace").decode()) from None
    if not isinstance(raw, str) or raw == "":
        raise PathError("empty path", hint="give the file path the tool should act on", path=raw)
    if "\x00" in raw or "\n" in raw or "\r" in raw:
        raise PathError("path contains NUL or a line break", hint="use a plain file name",
                        path=raw.replace("\x00", "\\0").replace("\n", "\\n").replace("\r", "\\r"))
    expanded = os.path.expanduser(raw) if raw.startswith("~") else raw
    base = cwd if cwd else root
    joined = expanded if os.path.isabs(expanded) else os.path.join(base, expanded)
    real, st = _resolve_below(root, joined)
    if real == root:
        return ".", st
    prefix = root if root.endswith(os.sep) else root + os.sep
    if not real.startswith(prefix):
        if ignore_case and real.lower().startswith(prefix.lower()):
            real = root + real[len(root):]
        else:
            raise OutsideWorkspace(
                f"{raw} resolves outside the workspace ({real})",
                hint="only files inside the repository can be changed; use a path under the workspace root",
                path=raw, resolved=real,
            )
    rel = real[len(prefix):]
    if os.sep != "/":
        rel = rel.replace(os.sep, "/")
    return (rel.lower() if ignore_case else rel), st


def resolve_dir(path: str, root: str) -> str:
    """``os.path.realpath(path)`` for an absolute ``path`` (a call's cwd), cheaper below ``root``."""
    if not path.isascii():
        path = os.fsdecode(os.fsencode(path))
    return _resolve_below(root, path)[0]


def _resolve_below(root: str, joined: str) -> tuple[str, Any]:
    """``os.path.realpath(joined)``, cheaper when ``joined`` lies lexically below ``root``; and the final
    component's ``lstat`` (None: absent; :data:`UNKNOWN`: not looked at).

    ``root`` is already resolved, so only the components below it need an ``lstat``; symlinks
    among them (and any ``..``) fall back to the full ``realpath``, which is exact.
    """
    prefix = root + os.sep
    if not joined.startswith(prefix):
        return os.path.realpath(joined), UNKNOWN
    rest = [part for part in joined[len(prefix):].split(os.sep) if part and part != "."]
    if ".." in rest:
        return os.path.realpath(joined), UNKNOWN
    current = root
    st = UNKNOWN
    for i, part in enumerate(rest):
        current = current + os.sep + part
        try:
            st = os.lstat(current)
        except (FileNotFoundError, NotADirectoryError):
            # the rest does not exist yet: nothing below can be a symlink
            return os.sep.join([current, *rest[i + 1:]]), None
        if stat.S_ISLNK(st.st_mode):
            return os.path.realpath(joined), UNKNOWN
    return current, st


@lru_cache(maxsize=64)
def is_case_insensitive(root: str) -> bool:
    """True if the filesystem holding ``root`` folds case (macOS/Windows defaults)."""
    probe_dir = root
    upper, lower = probe_dir.upper(), probe_dir.lower()
    if upper == lower:
        return False
    try:
        a = os.stat(probe_dir)
        b = os.stat(upper if probe_dir != upper else lower)
    except OSError:
        return False
    return os.path.samestat(a, b)
