"""Appending to the ledger: ``O_APPEND`` + ``flock``, the hash chain, torn-tail quarantine and the heads cache.

The post-hook imports this module (through :mod:`orchestrator.ledger`): it must stay cheap to import (stdlib only;
no query, blame, audit or rich).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from pathlib import Path
from typing import Any

from .format import (GENESIS, NS, TAIL_LEN, LedgerError, _HEX_RE, _merge_parents, _split_tail, make_line,
                     quarantine_path)
from .read import iter_lines

def _last_line(fd: int, size: int) -> bytes:
    """The last complete line of the file (without its newline); reads backwards in chunks."""
    end = size - 1  # the final newline
    buf = b""
    pos = end
    while pos > 0:
        step = min(8192, pos)
        pos -= step
        buf = os.pread(fd, step, pos) + buf
        nl = buf.rfind(b"\n")
        if nl >= 0:
            return buf[nl + 1:]
    return buf


def _first_line(fd: int, size: int) -> bytes:
    """The file's first line (without its newline): what a signed record's ``ledger`` identity hashes."""
    buf = b""
    while len(buf) < size:
        chunk = os.pread(fd, 65536, len(buf))
        if not chunk:
            break
        nl = chunk.find(b"\n")
        if nl >= 0:
            return buf + chunk[:nl]
        buf += chunk
    return buf


def _prev_of(fd: int, size: int) -> str:
    if size == 0:
        return GENESIS
    tail = os.pread(fd, TAIL_LEN + 1, max(0, size - TAIL_LEN - 1))
    parts = _split_tail(tail[:-1])
    if parts is not None and _HEX_RE.fullmatch(parts[1]):
        return "sha256:" + parts[1].decode("ascii")
    # Not one of our lines (hand-edited / foreign): chain to the hash of its raw bytes; verify flags that line.
    return "sha256:" + hashlib.sha256(_last_line(fd, size)).hexdigest()


def _quarantine_locked(fd: int, ledger: str | os.PathLike[str], size: int) -> int:
    """Move bytes after the last newline to the quarantine file, then truncate. Caller holds the lock."""
    pos = size
    frag = b""
    while pos > 0:
        step = min(65536, pos)
        pos -= step
        chunk = os.pread(fd, step, pos)
        nl = chunk.rfind(b"\n")
        if nl >= 0:
            frag = chunk[nl + 1:] + frag
            pos += nl + 1
            break
        frag = chunk + frag
    if not frag:
        return 0
    qfd = os.open(quarantine_path(ledger), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        data = frag + b"\n"
        if os.write(qfd, data) != len(data):
            raise LedgerError("short write to quarantine file")
        os.fsync(qfd)  # the fragment must be safe before we cut it from the ledger
    finally:
        os.close(qfd)
    os.ftruncate(fd, pos)
    return len(frag)


def tips_path(ledger: str | os.PathLike[str]) -> Path:
    """Fallback cache of the chain's heads when the filesystem has no user xattrs:
    ``<ledger dir>/run/<ledger name>.tips`` (runtime state, gitignored)."""
    p = Path(os.fspath(ledger))
    return p.parent / "run" / (p.name + ".tips")


_XATTR = "user.orchestrator.heads"


def lock_path(ledger: str | os.PathLike[str]) -> Path:
    """What every writer of the ledger locks: ``<ledger dir>/run/<ledger name>.lock``. Never the ledger itself: a
    ``flock`` needs only a descriptor open for reading, and a sandboxed command may read the ledger, so one that took
    its lock and slept held every post-hook's append — the records of the calls made meanwhile were never written
    (redteam3). The run directory is hidden from sandboxed commands (their mount namespace)."""
    p = Path(os.fspath(ledger))
    return p.parent / "run" / (p.name + ".lock")


def locked(ledger: str | os.PathLike[str]) -> int:
    """Take the ledger's exclusive lock (:func:`lock_path`); returns the descriptor that holds it (close it to
    release)."""
    path = lock_path(ledger)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileNotFoundError:
        os.makedirs(path.parent, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


def scan_tips(path: str | os.PathLike[str]) -> set[bytes]:
    """Hashes (hex) of records nothing points to yet: normally one; more after a union merge."""
    return _scan(path)[0]


def _scan(path: str | os.PathLike[str]) -> tuple[set[bytes], int]:
    """The heads (see :func:`scan_tips`) and the number of lines."""
    tips: set[bytes] = set()
    n = 0
    for n, line in iter_lines(path):
        parts = _split_tail(line.rstrip(b"\n"))
        if parts is None:
            continue
        tips.discard(parts[0])
        for mp in _merge_parents(line):
            tips.discard(mp)
        tips.add(parts[1])
    return tips, n


def _load_tips(fd: int, ledger: str, size: int, last: str) -> tuple[set[bytes], int] | None:
    """Cached heads and line count, valid only if recorded for exactly this size and last hash; None = rescan."""
    try:
        raw = os.getxattr(fd, _XATTR)
    except OSError:
        try:
            with open(tips_path(ledger), "rb") as f:
                raw = f.read()
        except OSError:
            return None
    head, _, rest = raw.decode("ascii", "replace").partition("\n")
    fields = head.split()
    if fields[:2] != [str(size), last] or len(fields) != 3 or not fields[2].isdigit():
        return None  # the ledger changed behind the writers' back (git merge/checkout rewrote it): rescan
    return {t.encode("ascii") for t in rest.split()}, int(fields[2])


def _save_tips(fd: int, ledger: str, size: int, last: str, tips: set[bytes], count: int) -> None:
    """Cache the heads as an xattr of the ledger file itself: no extra file to open or truncate per append, and
    git (which rewrites the file on merge/checkout) drops it, which forces the rescan that is needed then."""
    data = (f"{size} {last} {count}\n" + "".join(t.decode("ascii") + "\n" for t in sorted(tips))).encode("ascii")
    try:
        os.setxattr(fd, _XATTR, data)
        return
    except OSError:
        pass
    try:  # no xattrs here: a side file, overwritten in place (no truncation: that forces a flush on ext4)
        tp = tips_path(ledger)
        tp.parent.mkdir(parents=True, exist_ok=True)
        tfd = os.open(tp, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            old = os.fstat(tfd).st_size
            os.pwrite(tfd, data.ljust(old, b" "), 0)
        finally:
            os.close(tfd)
    except OSError:
        pass  # only a cache: the next writer rescans


def append(path: str | os.PathLike[str], record: dict, *, fsync: bool = True,
           dedupe_key: str | None = None, signer: Any = None, anchor: Path | None = None) -> dict | None:
    """Append ``record`` to the ledger at ``path`` (created if missing); returns the record with its chain fields.

    Safe across threads and processes (``flock``); one ``os.write`` per record. If the chain has other dangling
    heads than the last line (after a union merge), they are listed in ``merge_parents`` so that they become
    referenced too (see the module docstring); the heads are cached in an xattr of the ledger (else in
    :func:`tips_path`), validated against the ledger size and last hash, and rescanned (once, O(n)) when the file
    was changed by something else (git).
    ``dedupe_key``: if this exact
    JSON fragment (e.g. ``'"call_id":"toolu_1"'``) occurs in the last 64 KiB of the ledger, nothing is written
    and None is returned (a post-hook delivered twice must not log the same mutation twice).
    ``signer``: a :class:`~orchestrator.ledger.signing.Signer`; the line is signed before the one write, so no
    unsigned version of it ever reaches the file. ``anchor``: the local anchor file
    (:mod:`~orchestrator.ledger.anchor`) updated, under the lock, after the record is on disk.
    """
    p = os.fspath(path)
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(p, flags, 0o644)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(p) or ".", exist_ok=True)
        fd = os.open(p, flags, 0o644)
    try:
        lock = locked(p)
    except BaseException:
        os.close(fd)
        raise
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            _quarantine_locked(fd, p, size)
            size = os.fstat(fd).st_size
        if dedupe_key and size:
            window = os.pread(fd, min(size, 65536), max(0, size - 65536))
            if dedupe_key.encode("ascii", "backslashreplace") in window:
                return None
        prev = _prev_of(fd, size)
        cached = _load_tips(fd, p, size, prev) if size else (set(), 0)
        tips, count = cached if cached is not None else _scan(p)
        last_hex = prev[7:].encode("ascii")
        parents = sorted("sha256:" + t.decode("ascii") for t in tips if t != last_hex)
        ledger_id = GENESIS
        if signer is not None:
            from .signing import ledger_identity
            ledger_id = ledger_identity(_first_line(fd, size) if size else None)
        line, rec = make_line(record, prev, parents, signer=signer, ledger_id=ledger_id)
        data = line + b"\n"
        n = os.write(fd, data)
        if n != len(data):  # pragma: no cover - disk full; leave a torn tail that the next writer quarantines
            raise LedgerError(f"short write to ledger ({n} of {len(data)} bytes)")
        if fsync:
            (getattr(os, "fdatasync", None) or os.fsync)(fd)
        h = rec["metadata"][NS]["chain"]["hash"]
        _save_tips(fd, p, size + n, h, {h[7:].encode("ascii")}, count + 1)
        if anchor is not None:
            from . import anchor as anchors
            try:
                anchors.write(anchor, p, h, count + 1, size + n)
            except OSError:
                pass  # the record is written; a missing anchor only weakens the local truncation check
        return rec
    finally:
        os.close(lock)  # releases the lock
        os.close(fd)

