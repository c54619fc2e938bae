"""Small filesystem primitives shared by the engine: atomic writes, file locks, content hashes."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any


#: How long after its last change a file's stat key may still hide the next change. A filesystem stamps times
#: from a clock that may be coarse (a kernel tick, up to 10 ms on Linux without multigrain timestamps; 1 s on
#: ext3 or HFS+, 2 s on FAT): a second same-size write within that tick leaves mtime, ctime and size as they were.
RACY_NS = 2_000_000_000


def stat_key(st: os.stat_result) -> tuple[int, int, int, int]:
    """What a memo of a file's contents is keyed on: mtime, size, ctime and inode (``os.utime`` can restore an
    mtime but it moves the ctime; an atomic replace is a new inode)."""
    return (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)


def racy(st: os.stat_result) -> bool:
    """True if ``st`` (taken before the file was read) is too recent for its key to prove the contents unchanged
    next time: the next change may fall in the same clock tick (git's "racy" index entries). Call it after
    reading. A memo of a racy read is checked against the file's bytes at the next use, until it has aged."""
    import time

    return time.time_ns() - st.st_ctime_ns < RACY_NS


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so readers see the old or the new file, never a partial one."""
    import tempfile  # not on the pre-hook's path: only writers need it

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write(path, json.dumps(obj, indent=1, sort_keys=True, default=str).encode())


def try_lock(path: Path) -> int | None:
    """An exclusive ``flock`` on ``path`` (created 0600) held by the returned descriptor for as long as it stays
    open, or None when another process holds it: one server per lock file (the daemon, the egress proxy)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if needed) for the ``with`` body."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def file_hash(path: str | os.PathLike[str]) -> str | None:
    """``sha256:<hex>`` of a file's bytes, or None if it does not exist (or is not a regular file)."""
    try:
        with open(path, "rb") as fh:
            return "sha256:" + hashlib.sha256(fh.read()).hexdigest()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


