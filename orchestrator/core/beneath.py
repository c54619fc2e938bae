"""Files beneath a trusted directory, reached without following a symlink at any component.

Why: a privileged part of orchestrator (the post-hook's restores and reverts, ``record_lesson``) writes or removes
paths an agent could have prepared. Between any check and the write, a process the agent started can replace a
file, or a directory above it, by a symlink (``src/x.py`` → ``../README.md``, ``src/a`` → ``~/.ssh``): a plain
``open(root / rel)`` then writes where the link points, with the person's rights (issue 28, finding 1; GUIDE §2
"No confused deputy"). Every function here starts at a directory descriptor of ``root`` (trusted: the workspace
root, opened normally) and opens each component below it with ``O_NOFOLLOW`` (``O_DIRECTORY`` for directories)
through ``openat`` — Python's ``dir_fd=`` — so no link is followed anywhere; the last component is created with
``O_EXCL`` and removed with ``unlinkat``, which never follow one either. A component that is a link, or not a
directory, raises :class:`Refused`: the caller reports and writes nothing.

Why not ``openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)``: it resolves the whole path in one system call, but
Python has no binding for it and ``ctypes`` stays off the hook's import path (tests/test_hotpath_imports.py); one
``openat`` per component costs a few microseconds at the depths that occur (docs/performance.md). What neither
closes: a directory the walk already holds may be renamed elsewhere meanwhile (within what the renaming process
may write); the write then lands in that directory, under its new name.

Standard library only (``os``, ``stat``); cheap to import.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator

__all__ = ["Refused", "lstat", "read", "remove_dir", "replace", "unlink"]

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Refused(OSError):
    """The path cannot be reached beneath the root without following a link (or it names no place beneath it).
    ``reason``: ``link`` (a component is a symlink), ``not-a-directory``, ``outside`` (absolute, ``..``, empty)."""

    def __init__(self, rel: str, reason: str) -> None:
        super().__init__(errno.ELOOP if reason == "link" else errno.EINVAL, f"{rel}: {reason}")
        self.rel = rel
        self.reason = reason


def _parts(rel: str) -> list[str]:
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise Refused(rel, "outside")
    return parts


@contextlib.contextmanager
def _parent(root: str | os.PathLike[str], rel: str) -> Iterator[tuple[int, str]]:
    """``(fd of the directory holding rel's last component, that component)``; every directory on the way is
    opened with ``O_NOFOLLOW``."""
    parts = _parts(rel)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            try:
                nxt = os.open(part, _DIR, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise Refused(rel, _kind(fd, part)) from None
                raise
            os.close(fd)
            fd = nxt
        yield fd, parts[-1]
    finally:
        os.close(fd)


def _kind(fd: int, name: str) -> str:
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return "link"
    return "link" if stat.S_ISLNK(st.st_mode) else "not-a-directory"


def lstat(root: str | os.PathLike[str], rel: str) -> os.stat_result | None:
    """The ``lstat`` of ``rel`` beneath ``root`` (None: absent). Raises :class:`Refused` for a link above it."""
    with _parent(root, rel) as (fd, name):
        try:
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None


def read(root: str | os.PathLike[str], rel: str) -> bytes | None:
    """The bytes of the regular file ``rel`` (None: absent). :class:`Refused` for a link at any component."""
    with _parent(root, rel) as (dfd, name):
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=dfd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise Refused(rel, "link") from None
            raise
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise Refused(rel, "not-a-file")
            chunks: list[bytes] = []
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return b"".join(chunks)
                chunks.append(chunk)
        finally:
            os.close(fd)


def replace(root: str | os.PathLike[str], rel: str, data: bytes, mode: int = 0o644) -> None:
    """Make ``rel`` a regular file holding ``data``: whatever entry is there (a link, a file, a fifo) is removed
    first, never followed; a directory there raises :class:`Refused`. The new file is created with ``O_EXCL``: an
    entry that reappears meanwhile (a link made between the two calls) fails the write rather than take it."""
    with _parent(root, rel) as (dfd, name):
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None:
            if stat.S_ISDIR(st.st_mode):
                raise Refused(rel, "not-a-file")
            os.unlink(name, dir_fd=dfd)
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dfd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)


def unlink(root: str | os.PathLike[str], rel: str) -> bool:
    """Remove the entry ``rel`` (a link itself, never its target); False when it was absent. A directory there
    raises ``IsADirectoryError``; a link above it :class:`Refused`."""
    return _remove(root, rel, os.unlink)


def remove_dir(root: str | os.PathLike[str], rel: str) -> bool:
    """Remove the empty directory ``rel`` (never a link's target); False when absent. ``OSError`` when it is not
    empty; :class:`Refused` for a link above it."""
    return _remove(root, rel, os.rmdir)


def _remove(root: str | os.PathLike[str], rel: str, remove: Callable[..., None]) -> bool:
    with _parent(root, rel) as (dfd, name):
        try:
            remove(name, dir_fd=dfd)  # unlinkat / unlinkat(AT_REMOVEDIR): neither follows a link
        except FileNotFoundError:
            return False
        return True
