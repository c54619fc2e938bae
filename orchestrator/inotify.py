"""A minimal Linux inotify binding (ctypes, no threads): watches, a non-blocking drain, a cheap "anything new?".

Why not watchdog: its observer is a thread that *delivers* events later, while the governor needs to know,
synchronously and at the start of every call, whether anything changed. The kernel queues an inotify event
inside the system call that made the change (``write``, ``rename``, ``unlink``, ``symlink``…), before that call
returns to the process that made it; so one ``poll(0)`` on the inotify descriptor tells whether any watched
change has happened up to now — 0.6 µs here against 2.4 µs for one ``stat``.

Only used by long-lived processes (see :mod:`orchestrator.livecache`); a one-shot hook process never imports it.
"""

from __future__ import annotations

import os
import struct

# <sys/inotify.h>
IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_MASK_ADD = 0x20000000
IN_ISDIR = 0x40000000

#: a directory entry appeared, disappeared or was renamed
ENTRY = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO
#: the watched inode itself went away, moved, or its filesystem was unmounted (IN_IGNORED follows)
SELF = IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED
#: file contents or metadata changed
CONTENT = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE

_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = 0o2000000
_HEADER = struct.Struct("iIII")


class InotifyError(OSError):
    """inotify is unavailable (not Linux, no libc symbol, instance or watch limit reached…)."""


class Inotify:
    """One inotify instance: ``add`` watches, ``read`` drains every queued event. Poll ``fd`` for POLLIN to learn,
    in one system call, whether anything is queued (the live cache polls it together with the mount table)."""

    def __init__(self) -> None:
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            init1, add, rm = libc.inotify_init1, libc.inotify_add_watch, libc.inotify_rm_watch
        except (OSError, AttributeError) as exc:
            raise InotifyError(f"inotify unavailable: {exc}") from None
        init1.argtypes, init1.restype = [ctypes.c_int], ctypes.c_int
        add.argtypes, add.restype = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32], ctypes.c_int
        rm.argtypes, rm.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
        self._add, self._rm, self._errno = add, rm, ctypes.get_errno
        fd = init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            raise InotifyError(err, f"inotify_init1: {os.strerror(err)}")
        self.fd = fd

    def add(self, path: str, mask: int) -> int:
        """Watch ``path``; returns the watch descriptor (the same one again for an inode already watched)."""
        wd = self._add(self.fd, os.fsencode(path), mask)
        if wd < 0:
            err = self._errno()
            raise InotifyError(err, f"inotify_add_watch {path}: {os.strerror(err)}")
        return int(wd)

    def read(self) -> list[tuple[int, int, str]]:
        """Every queued event as ``(wd, mask, name)``; ``[]`` if none. Never blocks."""
        out: list[tuple[int, int, str]] = []
        while True:
            try:
                buf = os.read(self.fd, 65536)
            except BlockingIOError:
                return out
            if not buf:
                return out
            offset, size = 0, len(buf)
            while offset + 16 <= size:
                wd, mask, _cookie, length = _HEADER.unpack_from(buf, offset)
                raw = buf[offset + 16: offset + 16 + length]
                out.append((wd, mask, os.fsdecode(raw.rstrip(b"\0"))))
                offset += 16 + length

    def close(self) -> None:
        """Release the instance (and every watch on it). Idempotent."""
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)

    def __del__(self) -> None:
        # an unreferenced instance must give its descriptor back: there are only 128 per user by default
        if getattr(self, "fd", -1) >= 0:
            self.close()

    def __enter__(self) -> Inotify:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
