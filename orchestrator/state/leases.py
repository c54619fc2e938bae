"""Write leases: one session at a time changes a file, from its pre-hook until its post-hook.

The stale check (:mod:`orchestrator.pre.stale`) compares read-stamps, which is not enough on its own: two sessions
that read a file, then write it at the same moment, both pass it (neither write has landed yet) and one change is
lost. A lease closes that window. The pre-hook that allows a file-changing call takes a lease on each target
(:mod:`orchestrator.pre.lease`, run right before the stale check, so the check runs while the lease is held); a
second session's write to a leased file is refused with ``file-busy``. The post-hook releases it, a failed tool too
(``PostToolUseFailure``); once the first write has landed, the second session's read-stamp no longer matches and
the stale check refuses it until it re-reads.

No deadlock when a post-hook never comes (a crash, ``kill -9``, a host timeout, a call the host's own permission
prompt turned down): a lease names its holder's agent process (pid and start time, so a reused pid does not keep
it alive) and expires after :data:`FILE_TTL` seconds (:data:`EXEC_TTL` for a shell command, which may run for
minutes). A lease whose holder is gone or whose time is up is broken by the next session that wants the file.
Leases of one session never block each other (a session may retry its own call after a lost post-hook).

Where: ``<shared run dir>/leases/`` (the main worktree's ``.orchestration/run/``, like the approval broker, so every
worktree of a repository sees them and no sandboxed command can remove one: :mod:`orchestrator.vcs.worktrees`), one JSON file per leased file named by the
hash of its resolved path. Every change of the directory happens under one ``flock`` on ``leases/.lock`` (held
for microseconds, released by the kernel when a holder dies); see :func:`_write` for why files are not renamed.

The agent process: a hook runs as a child of the agent (through ``sh -c``), so the hook client names its nearest
ancestor that is not a shell (:func:`agent_pid`) in ``ORCH_HOST_PID``; the daemon serves many agents and takes
the pid each call's client sent (:data:`HOST_PID`, set per call by the hook boundary); an in-process host (the
reference loop, LangChain) is its own agent process.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import os
import time
from collections.abc import Iterable
from typing import Any

#: seconds a file tool's lease lasts without its post-hook (the tool itself takes milliseconds; the margin covers
#: the host's own permission prompt and a loaded machine)
FILE_TTL = 120.0
#: seconds a shell command's lease lasts (Claude Code's Bash runs up to 10 minutes)
EXEC_TTL = 900.0
#: the agent process of the call being evaluated, (pid, start time), set per call by the hook boundary (the daemon
#: serves many); None: this process is the agent (an in-process host); pid 0: unknown (only the expiry ends its leases)
HOST_PID: contextvars.ContextVar[tuple[int, int | None] | None] = contextvars.ContextVar("orch_host_pid", default=None)
LOCK_NAME = ".lock"
#: processes that stand between an agent and its hook command: the agent runs hooks through a shell
SHELLS = frozenset({"sh", "dash", "bash", "zsh", "ash", "ksh", "mksh", "busybox", "orch-hook"})


def key(path: str) -> str:
    """The lease file name of an absolute resolved path."""
    return hashlib.sha256(os.fsencode(path)).hexdigest()[:40] + ".json"


def process_start(pid: int) -> int | None:
    """The start time of ``pid`` in clock ticks since boot (``/proc/<pid>/stat`` field 22), or None when unknown
    (no such process, or no ``/proc``)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    try:
        return int(data[data.rindex(b")") + 2:].split()[19])
    except (ValueError, IndexError):
        return None


def alive(pid: Any, start: Any) -> bool:
    """Whether the process ``pid`` that started at ``start`` (None: unknown) still runs. A pid now used by another
    process (a different start time) is not the holder."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return True  # holder unknown: only the expiry can end the lease
    now = process_start(pid)
    if now is not None:
        return start is None or now == start
    if os.path.isdir("/proc/self"):
        return False  # /proc works here, and has no such process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists (owned by someone else)
    return True


def agent_process(ppid: int | None = None) -> tuple[int, int | None]:
    """The agent process behind a hook process, (pid, start time): its parent, skipping the shells in between
    (``sh -c`` that runs the hook command, the launcher). Without ``/proc`` the parent itself, start unknown.
    :func:`orchestrator.hookclient.agent_process` is the stdlib copy the ``-S`` client runs."""
    pid = os.getppid() if ppid is None else ppid
    for _ in range(8):
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                data = fh.read()
            comm = data[data.index(b"(") + 1:data.rindex(b")")].decode("utf-8", "replace")
            fields = data[data.rindex(b")") + 2:].split()
            parent, start = int(fields[1]), int(fields[19])
        except (OSError, ValueError, IndexError):
            return pid, None
        if comm not in SHELLS or parent <= 1:
            return pid, start
        pid = parent
    return pid, None


def agent_pid(ppid: int | None = None) -> int:
    """The pid of :func:`agent_process`."""
    return agent_process(ppid)[0]


def host_from(env: Any, in_process: bool) -> tuple[int, int | None]:
    """The agent process a hook boundary serves: ``ORCH_HOST_PID`` (``pid:start``) from the hook client, else (a hook
    evaluated in its own process) :func:`agent_process`, else pid 0 (unknown: a daemon cannot know the agent of a
    client that sent none)."""
    value = env.get("ORCH_HOST_PID") if env is not None else None
    if isinstance(value, str):
        pid, _, start = value.partition(":")
        if pid.isdigit():
            return int(pid), int(start) if start.isdigit() else None
    return agent_process() if in_process else (0, None)


_SELF: dict[int, int | None] = {}


def holder() -> tuple[int, int | None]:
    """The agent process of the current call, (pid, start time) (see :data:`HOST_PID`)."""
    host = HOST_PID.get()
    if host is not None:
        return host
    pid = os.getpid()
    if pid not in _SELF:  # a process's own start time never changes (a forked child has another pid)
        _SELF.clear()
        _SELF[pid] = process_start(pid)
    return pid, _SELF[pid]


def _read(path: str) -> dict[str, Any] | None:
    try:
        fd = os.open(path, os.O_RDONLY)  # not open(): a buffered file object costs more than the read (µs per call)
    except OSError:
        return None
    try:
        data = json.loads(os.read(fd, 1 << 16))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    return data if isinstance(data, dict) else None


def live(lease: dict[str, Any] | None, now: float) -> bool:
    """Whether ``lease`` still holds its file: not expired and its agent process still runs."""
    if lease is None:
        return False
    expires = lease.get("expires")
    # a lease never lasts longer than EXEC_TTL from now: one written by hand (or by a command allowed to write the
    # git dir) with a far expiry cannot block a file for good
    if not isinstance(expires, (int, float)) or expires <= now or expires > now + EXEC_TTL + 60:
        return False
    return alive(lease.get("pid"), lease.get("pid_start"))


def _write(path: str, lease: dict[str, Any]) -> None:
    """Write a lease file under the directory lock: unlink, then create, never rename over it. On ext4 a rename over
    an existing file (and a truncation) forces the new data out to disk first (``auto_da_alloc``): measured 138 µs
    p50 and 20 ms p90 here, against 9 µs for unlink + create. Every writer and the releaser hold the lock; a reader
    without it (:func:`held`) that finds a file half written skips it."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, json.dumps(lease, sort_keys=True).encode())
    finally:
        os.close(fd)


def _locked(directory: str) -> int:
    import fcntl

    try:
        fd = os.open(os.path.join(directory, LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o644)
    except FileNotFoundError:
        os.makedirs(directory, exist_ok=True)
        fd = os.open(os.path.join(directory, LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)  # released by the kernel when this fd closes or the process dies
    return fd


def acquire(directory: str, root: str, rels: Iterable[str], who: dict[str, Any],
            ttl: float = FILE_TTL) -> dict[str, Any] | None:
    """Lease every ``rels`` (workspace-relative resolved paths under ``root``) for ``who`` (``session``,
    ``intent``, ``agent``, ``call``), all or none. Returns None when leased, else the live lease of another session
    that blocks the first busy file (with its ``path``). Expired leases and those of gone processes are broken."""
    now = time.time()
    pid, start = holder()
    lease = {**who, "pid": pid, "pid_start": start, "since": now, "expires": now + ttl}
    session = who.get("session")
    targets = [(rel, os.path.join(root, rel)) for rel in dict.fromkeys(rels) if rel and rel != "."]
    if not targets:
        return None
    fd = _locked(directory)
    try:
        files = [(rel, os.path.join(directory, key(full))) for rel, full in targets]
        renew = []
        for rel, path in files:
            current = _read(path)
            if current is not None and current.get("session") != session and live(current, now):
                return {**current, "path": rel}
            # this session's own lease with more than half its time left (a retry, calls without post-hooks in
            # between) stands as it is: no write
            if current is None or current.get("session") != session or current.get("pid") != pid or \
                    not isinstance(current.get("expires"), (int, float)) or current["expires"] < now + ttl / 2:
                renew.append((rel, path))
        for rel, path in renew:
            _write(path, {**lease, "path": rel, "root": root})
    finally:
        os.close(fd)
    return None


def release(directory: str, root: str, rels: Iterable[str], session: str) -> int:
    """Drop this session's leases on ``rels``; returns how many were dropped (leases of other sessions stay)."""
    names = [key(os.path.join(root, rel)) for rel in dict.fromkeys(rels) if rel and rel != "."]
    if not names or not os.path.isdir(directory):
        return 0
    dropped = 0
    fd = _locked(directory)
    try:
        for name in names:
            path = os.path.join(directory, name)
            current = _read(path)
            if current is not None and current.get("session") == session:
                try:
                    os.unlink(path)
                    dropped += 1
                except FileNotFoundError:
                    pass
    finally:
        os.close(fd)
    return dropped


def held(directory: str) -> list[dict[str, Any]]:
    """The live leases under ``directory`` (for ``orch status``), oldest first."""
    now = time.time()
    out: list[dict[str, Any]] = []
    try:
        names = os.listdir(directory)
    except OSError:
        return out
    for name in names:
        if name.endswith(".json"):
            lease = _read(os.path.join(directory, name))
            if lease is not None and live(lease, now):
                out.append(lease)
    out.sort(key=lambda lease: lease.get("since") or 0)
    return out


__all__ = ["EXEC_TTL", "FILE_TTL", "HOST_PID", "acquire", "agent_pid", "agent_process", "alive", "held", "holder",
           "host_from", "key", "live", "process_start", "release"]
