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


#: the most a small metadata file (git's ``HEAD``, a ``.git`` file, ``gitdir``) may hold for a reader here
SMALL_FILE = 1 << 16
#: bytes read per ``read`` while a file is hashed: a file of any size costs this much memory, not its size
CHUNK = 1 << 20


def open_regular(path: str | os.PathLike[str]) -> int | None:
    """A read-only descriptor of the regular file at ``path`` (links followed), or None: missing, unreadable, or
    not a regular file.

    Never blocks and never opens a device: a sandboxed command may put a FIFO, a socket or (as root) a device node
    where a file of its scope was, and a hook that opened it with a plain ``open`` waited forever for a writer —
    long enough for the host to time the hook out and run the call without it (redteam3). The type is checked
    before the open (no device is ever opened) and again on the descriptor (``O_NONBLOCK``: a FIFO swapped in
    meanwhile opens at once and is refused by its ``fstat``)."""
    import stat

    try:
        before = os.stat(path)
        if not stat.S_ISREG(before.st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        return None
    return fd


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes | None:
    """The bytes of the regular file at ``path`` when it holds at most ``limit`` of them; None otherwise (see
    :func:`open_regular`; a larger file is never read whole into memory)."""
    fd = open_regular(path)
    if fd is None:
        return None
    try:
        if os.fstat(fd).st_size > limit:
            return None
        data = os.read(fd, limit + 1)
        return data if len(data) <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def hash_fd(fd: int, keep: int = 0) -> tuple[str, int, bytes]:
    """``(hex SHA-256, size, first bytes)`` of what is left to read on ``fd``, read in :data:`CHUNK` pieces; the
    first ``keep`` bytes are returned too."""
    digest = hashlib.sha256()
    head = bytearray()
    size = 0
    while True:
        chunk = os.read(fd, CHUNK)
        if not chunk:
            return digest.hexdigest(), size, bytes(head)
        if len(head) < keep:
            head += chunk[:keep - len(head)]
        size += len(chunk)
        digest.update(chunk)


def file_hash(path: str | os.PathLike[str]) -> str | None:
    """``sha256:<hex>`` of a file's bytes, or None if it does not exist or is not a regular file (never blocks on
    a FIFO, never holds more than :data:`CHUNK` bytes: :func:`open_regular`)."""
    fd = open_regular(path)
    if fd is None:
        return None
    try:
        return "sha256:" + hash_fd(fd)[0]
    except OSError:
        return None
    finally:
        os.close(fd)


