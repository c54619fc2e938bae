"""The telemetry spool: a bounded, crash-safe queue of events in ``.orchestration/run/telemetry/``.

Standard library only; :func:`append` runs on the hook path (about 10 µs: open, shared ``flock``, ``fstat``, one
``O_APPEND`` write, close). Files:

``spool.jsonl``
    the queue: one event per line (:mod:`orchestrator.telemetry.events`), appended with a single ``write`` under a
    *shared* ``flock`` (writers never wait for each other; the lock only keeps them out of a compaction). After its
    first compaction the file starts with a header line ``{"event": "spool", "epoch": ...}``.
``spool.jsonl.1``
    the previous generation, kept after a compaction so that local readers (:func:`read_events`) still see recent
    history; never shipped again.
``state.json``
    what was shipped: ``{"epoch", "offset"}`` — the byte offset in the generation whose header carries ``epoch``
    (None: a file without header). Written atomically *after* the collector accepted a batch, so a crash between
    the two sends that batch again (at-least-once; every event has an id, exported as ``log.record.uid``) and a
    crash never loses one.
``dropped``
    one byte per event the bound refused: its size is the number of dropped events (``orch doctor``,
    ``orch status``, ``orch telemetry status``).

The bound: :func:`append` refuses (and counts) an event when ``spool.jsonl`` would exceed ``max_bytes``. The
shipper compacts the file once it has shipped a part of it (:func:`compact`, under an exclusive ``flock``: the
unshipped tail moves into a new generation that replaces the file atomically, so there is always a file to append
to), so the bound is on what is waiting, give or take :data:`COMPACT_AT`. A writer that opened the old generation
notices the replacement after taking its lock (the path names another inode) and appends to the new one.
"""

from __future__ import annotations

import contextlib
import contextvars
import fcntl
import json
import os
from collections.abc import Iterator
from typing import Any

DIR = "telemetry"
SPOOL = "spool.jsonl"
STATE = "state.json"
DROPPED = "dropped"
SHIP_LOCK = "ship.lock"
#: the default bound of ``spool.jsonl`` (policy ``telemetry.spool_max_bytes``)
MAX_BYTES = 32 * 1024 * 1024
#: shipped bytes after which the shipper compacts the spool
COMPACT_AT = 1024 * 1024


def directory(run_dir: str | os.PathLike[str]) -> str:
    """``run/telemetry/`` of a workspace's run directory."""
    return os.path.join(os.fspath(run_dir), DIR)


#: the events a caller chose to write later (:func:`deferred`): the daemon answers the hook first
_DEFERRED: contextvars.ContextVar[list[tuple[str, dict[str, Any], int]] | None] = contextvars.ContextVar(
    "orch_telemetry_deferred", default=None)


@contextlib.contextmanager
def deferred() -> Iterator[list[tuple[str, dict[str, Any], int]]]:
    """Inside the ``with`` (this thread's context), :func:`append` only collects; the caller writes the collected
    events with :func:`write_deferred` once the hook has its answer. The daemon does this per connection, so the
    spool costs a hook nothing; a daemon killed between the answer and the write loses those few events."""
    pending: list[tuple[str, dict[str, Any], int]] = []
    token = _DEFERRED.set(pending)
    try:
        yield pending
    finally:
        _DEFERRED.reset(token)


def write_deferred(pending: list[tuple[str, dict[str, Any], int]]) -> None:
    """Append what :func:`deferred` collected, in order. Never raises."""
    for run_dir, event, max_bytes in pending:
        append(run_dir, event, max_bytes)


def append(run_dir: str | os.PathLike[str], event: dict[str, Any], max_bytes: int = MAX_BYTES) -> bool:
    """Spool one event; False when the bound refused it (then it is counted as dropped). Never raises.

    Inside :func:`deferred` the event is only collected (True)."""
    from orchestrator.telemetry.events import encode

    pending = _DEFERRED.get()
    if pending is not None:
        pending.append((os.fspath(run_dir), event, max_bytes))
        return True
    try:
        return append_line(directory(run_dir), encode(event), max_bytes)
    except Exception:  # noqa: BLE001 - telemetry must never turn a verdict into a crash
        return False


def append_line(tdir: str, line: bytes, max_bytes: int = MAX_BYTES) -> bool:
    """Append one encoded line to the spool in ``tdir`` (see the module docstring); False when dropped."""
    path = os.path.join(tdir, SPOOL)
    for _ in range(8):  # a compaction between open and lock: reopen (twice at most in practice)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except FileNotFoundError:
            os.makedirs(tdir, mode=0o700, exist_ok=True)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            st = os.fstat(fd)
            try:
                cur = os.stat(path)
            except FileNotFoundError:
                continue
            if (cur.st_ino, cur.st_dev) != (st.st_ino, st.st_dev):
                continue
            if st.st_size + len(line) > max_bytes:
                break
            os.write(fd, line)
            return True
        finally:
            os.close(fd)
    _count_drop(tdir)
    return False


def _count_drop(tdir: str) -> None:
    try:
        fd = os.open(os.path.join(tdir, DROPPED), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, b".")
        finally:
            os.close(fd)
    except OSError:
        pass


def dropped(run_dir: str | os.PathLike[str]) -> int:
    """How many events the bound dropped in this workspace (since the spool was created)."""
    try:
        return os.stat(os.path.join(directory(run_dir), DROPPED)).st_size
    except OSError:
        return 0


# -- the shipper's side --------------------------------------------------------------------------------------------
def _header(fh: Any) -> tuple[str | None, int]:
    """The generation's epoch and header length; (None, 0) for a file without header."""
    fh.seek(0)
    first = fh.readline()
    if first.startswith(b'{"event":"spool"'):
        try:
            return str(json.loads(first)["epoch"]), len(first)
        except (ValueError, KeyError, TypeError):
            pass
    return None, 0


def load_state(tdir: str) -> dict[str, Any]:
    """``{"epoch", "offset"}`` of what was shipped (nothing yet: epoch None, offset 0)."""
    try:
        with open(os.path.join(tdir, STATE), "rb") as fh:
            data = json.loads(fh.read())
        if isinstance(data, dict) and isinstance(data.get("offset"), int):
            return data
    except (OSError, ValueError):
        pass
    return {"epoch": None, "offset": 0}


def save_state(tdir: str, epoch: str | None, offset: int, **extra: Any) -> None:
    """Write the shipped position atomically (fsync'ed, then renamed over the old state)."""
    from pathlib import Path

    from orchestrator.core.fsutil import atomic_write_json

    atomic_write_json(Path(tdir, STATE), {**load_state(tdir), **extra, "epoch": epoch, "offset": offset})


def note(tdir: str, **extra: Any) -> None:
    """Record facts about shipping in the state (``shipped_at``, ``sent_total``, ``last_error``,
    ``dropped_reported``) without moving the shipped position. The shipper's only (it holds the ship lock)."""
    state = load_state(tdir)
    save_state(tdir, state.get("epoch"), state["offset"], **extra)


class Batch:
    """Events read from the spool past the shipped position; :meth:`commit` records them as shipped."""

    __slots__ = ("tdir", "epoch", "start", "end", "events", "corrupt")

    def __init__(self, tdir: str, epoch: str | None, start: int, end: int, events: list[dict[str, Any]],
                 corrupt: int) -> None:
        self.tdir, self.epoch, self.start, self.end, self.events, self.corrupt = tdir, epoch, start, end, events, corrupt

    def commit(self) -> None:
        """The collector accepted these events: never send them again."""
        save_state(self.tdir, self.epoch, self.end)


def next_batch(tdir: str, max_events: int = 512) -> Batch | None:
    """Up to ``max_events`` unshipped events (whole lines only); None when nothing waits."""
    path = os.path.join(tdir, SPOOL)
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return None
    with fh:
        epoch, head = _header(fh)
        state = load_state(tdir)
        start = state["offset"] if state.get("epoch") == epoch and state["offset"] >= head else head
        fh.seek(start)
        events: list[dict[str, Any]] = []
        corrupt = 0
        pos = start
        for line in fh:
            if not line.endswith(b"\n"):
                break  # a write still in flight (or torn by a crash: the next append completes it as a bad line)
            pos += len(line)
            try:
                ev = json.loads(line)
            except ValueError:
                corrupt += 1
                continue
            if isinstance(ev, dict) and ev.get("event") != "spool":
                events.append(ev)
                if len(events) >= max_events:
                    break
            else:
                corrupt += 1
    if pos == start:
        return None
    return Batch(tdir, epoch, start, pos, events, corrupt)


def pending_bytes(tdir: str) -> int:
    """Bytes of the spool not shipped yet (0 when there is no spool)."""
    path = os.path.join(tdir, SPOOL)
    try:
        with open(path, "rb") as fh:
            epoch, head = _header(fh)
            size = os.fstat(fh.fileno()).st_size
    except OSError:
        return 0
    state = load_state(tdir)
    start = state["offset"] if state.get("epoch") == epoch and state["offset"] >= head else head
    return max(0, size - start)


def compact(tdir: str, at: int = COMPACT_AT) -> bool:
    """Start a new generation holding only the unshipped tail, once at least ``at`` shipped bytes precede it.

    Under an exclusive ``flock`` on the current file (writers wait for the copy, a few milliseconds at most): the new
    file (header + tail) is written aside, the old one is linked to ``spool.jsonl.1``, then the new one is renamed
    over ``spool.jsonl`` — so the path always names a file. The state is saved last; a crash before that leaves a
    state whose epoch names the old generation, and the shipper starts the new one from its header (nothing sent
    twice: the tail was not shipped).
    """
    path = os.path.join(tdir, SPOOL)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    with os.fdopen(fd, "rb") as fh:
        fcntl.flock(fd, fcntl.LOCK_EX)
        st = os.fstat(fd)
        try:
            if os.stat(path).st_ino != st.st_ino:
                return False
        except FileNotFoundError:
            return False
        epoch, head = _header(fh)
        state = load_state(tdir)
        if state.get("epoch") != epoch or state["offset"] - head < at:
            return False
        fh.seek(state["offset"])
        tail = fh.read()
        new_epoch = os.urandom(8).hex()
        header = (json.dumps({"event": "spool", "epoch": new_epoch, "v": 1}, separators=(",", ":")) + "\n").encode()
        tmp = path + ".new"
        with open(tmp, "wb") as out:
            out.write(header + tail)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o600)
        old = path + ".1"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(old)
        os.link(path, old)
        os.replace(tmp, path)
        save_state(tdir, new_epoch, len(header))
        return True


@contextlib.contextmanager
def ship_lock(tdir: str, *, wait: bool) -> Iterator[bool]:
    """One shipper at a time per workspace (the daemon's loop, ``orch telemetry flush``): yields whether it holds
    the lock (``wait=False`` gives up at once when another shipper holds it)."""
    os.makedirs(tdir, mode=0o700, exist_ok=True)
    fd = os.open(os.path.join(tdir, SHIP_LOCK), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


# -- local readers -------------------------------------------------------------------------------------------------
def read_events(run_dir: str | os.PathLike[str], *, since: float | None = None,
                kinds: tuple[str, ...] = ("decision", "record")) -> Iterator[dict[str, Any]]:
    """The spooled events of a workspace, oldest first: the previous generation, then the current spool (shipped or
    not), each event once; ``since`` keeps events with ``ts >= since``; malformed lines are skipped.

    For local views (``orch trace stats``, the TUI's Activity view): pass the workspace's run directory
    (``Workspace.run_dir``). What it holds depends on telemetry being on (policy ``telemetry.enabled``) and on how
    much the shipper compacted: recent history, not an archive (the ledger is the archive of records).
    """
    tdir = directory(run_dir)
    seen: set[str] = set()
    for name in (SPOOL + ".1", SPOOL):
        try:
            fh = open(os.path.join(tdir, name), "rb")
        except OSError:
            continue
        with fh:
            for line in fh:
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(ev, dict) or ev.get("event") not in kinds:
                    continue
                eid = ev.get("id")
                if isinstance(eid, str):
                    if eid in seen:
                        continue  # the tail a compaction copied into the new generation
                    seen.add(eid)
                if since is not None and not (isinstance(ev.get("ts"), (int, float)) and ev["ts"] >= since):
                    continue
                yield ev
