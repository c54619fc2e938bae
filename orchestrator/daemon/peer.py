"""Who is on the other end of the daemon's socket, and whether the daemon may serve it (issue 28, finding 2).

``orch serve`` acts with the person's full rights: it selects intents, writes session state and pre-images, and
signs ledger records with the machine's key. Its socket is a pathname UNIX socket, which Landlock cannot keep a
sandboxed command from connecting to (before ABI 9), so the daemon itself authenticates every connection before it
reads a byte of the request (GUIDE §2 "No confused deputy"). The kernel names the peer (``SO_PEERCRED``: pid, uid,
gid at ``connect``; ``SO_PEERPIDFD`` on Linux >= 6.5: a descriptor of that very process, so a pid reused meanwhile
cannot stand in for it), and ``/proc`` describes it. A peer is refused when

- it runs as another user than the daemon;
- it lives in another PID, mount, user or network namespace than the daemon (the launcher moves every sandboxed
  command into its own PID and mount namespaces, a user namespace when not root, and a network namespace where
  the egress proxy is on): a hook client runs where its agent runs, and the daemon where the first hook client ran;
- it has ``no_new_privs`` set while the daemon has not: the launcher sets it before Landlock (the kernel requires
  it), it is inherited by every descendant and can never be cleared. This is what catches a sandboxed command when
  there is no namespace to compare (``sandbox.pid_namespace: false``, or a kernel that refused the namespaces): the
  compiled launcher ``exec``s the command, so no launcher process is left among its ancestors;
- the daemon itself has ``no_new_privs`` (a container run with ``no-new-privileges``: the flag then tells nothing)
  and a sandboxed command gets no mount namespace of its own here (the kernel refused it: a container's seccomp
  profile), asked once by running the launcher (``isolates``). Then nothing the kernel shows tells a sandboxed
  command from a hook client: a command that forks twice (reparented away from every launcher) and ``exec``s with
  a clean environment (no ``ORCH_SANDBOXED``) passes the rule below, and was served (review, verified). So the
  daemon serves nobody there; every hook evaluates in-process;
- it, or any of its ancestors, is the sandbox launcher (``comm`` ``orch-sandbox``…, the compiled binary under a
  ``.orchestration/run/sandbox/`` directory) — the Python launcher and the PID namespace's init stay parents of the
  command — or, where the daemon itself runs with ``no_new_privs`` (so that rule tells nothing), was started with
  the launcher's environment (``ORCH_SANDBOXED=1``);
- it cannot be inspected (its ``/proc`` entries unreadable), or it exited before the checks were done.

Not checked, on purpose: the peer's cwd or the root it names. A sandboxed command works inside the same workspace
as the hook client (its cwd and its ``ORCH_ROOT`` look the same), so neither would tell them apart; the root a
request names is data from the peer, and the daemon governs its own root whatever a request says.

A refused peer gets a refusal frame (``R <length>`` + the reason), which the hook client and opencode's plugin treat
as "no daemon for me": they evaluate the call in-process, with their own rights (a sandboxed process then has only
the sandbox's). So a false refusal costs speed, never a blocked agent; each refusal is logged.

Standard library only; no ``ctypes`` (the daemon's path).
"""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Callable

__all__ = ["NAMESPACES", "Peer", "Self", "alive", "of", "refusal"]

#: Linux's ``SO_PEERPIDFD`` (6.5+); Python 3.11's socket module does not name it
SO_PEERPIDFD = getattr(socket, "SO_PEERPIDFD", 77)
#: the namespaces a peer must share with the daemon
NAMESPACES = ("pid", "mnt", "user", "net")
#: ``comm`` of the launchers: the compiled ``orch-sandbox`` and the Python stub ``orch-sandbox-python`` (the kernel
#: keeps 15 characters: ``orch-sandbox-py``)
LAUNCHER_COMM = b"orch-sandbox"
#: where the compiled launcher lives (its ``/proc/PID/exe``)
LAUNCHER_DIR = "/.orchestration/run/sandbox/"
#: the launcher's mark in a sandboxed command's environment
SANDBOXED_ENV = b"ORCH_SANDBOXED=1"
#: how far up the parent chain the walk goes (a deeper chain is refused: nothing real is that deep)
MAX_ANCESTORS = 128


class Peer:
    """The process at the other end of one connection, as the kernel named it at ``connect``."""

    __slots__ = ("pid", "uid", "gid", "pidfd", "start")

    def __init__(self, pid: int, uid: int, gid: int, pidfd: int | None, start: int | None) -> None:
        self.pid = pid
        self.uid = uid
        self.gid = gid
        #: a pidfd of the peer (None: the kernel has no ``SO_PEERPIDFD``)
        self.pidfd = pidfd
        #: its start time in clock ticks (``/proc/PID/stat`` field 22), read right after ``accept``
        self.start = start

    def close(self) -> None:
        if self.pidfd is not None:
            try:
                os.close(self.pidfd)
            except OSError:
                pass
            self.pidfd = None

    def describe(self) -> dict[str, object]:
        """What the refusal log says about the peer (no environment, no command line: only what identifies it)."""
        out: dict[str, object] = {"pid": self.pid, "uid": self.uid}
        stat = _stat(self.pid)
        if stat is not None:
            out["comm"] = stat[0].decode("utf-8", "replace")
            out["ppid"] = stat[1]
        try:
            out["exe"] = os.readlink(f"/proc/{self.pid}/exe")
        except OSError:
            pass
        return out


class Self:
    """The daemon's own view, taken once: its euid, namespaces and ``no_new_privs``; and (``isolates``, asked once,
    only where the daemon has ``no_new_privs``) whether a sandboxed command gets a mount namespace of its own."""

    __slots__ = ("uid", "namespaces", "no_new_privs", "_isolates", "_isolated")

    def __init__(self, isolates: Callable[[], bool] | None = None) -> None:
        self.uid = os.geteuid()
        pid = os.getpid()
        self.namespaces = {ns: _ns(pid, ns) for ns in NAMESPACES}
        self.no_new_privs = _no_new_privs(pid)
        self._isolates = isolates
        self._isolated: bool | None = None

    def isolated(self) -> bool:
        """Whether sandboxed commands run in a mount namespace of their own (False when nobody can say, or the
        question failed: the daemon then serves nobody, which costs speed only)."""
        if self._isolated is None:
            try:
                self._isolated = bool(self._isolates()) if self._isolates is not None else False
            except Exception:  # noqa: BLE001 - any failure of the probe means "cannot tell": fail closed
                self._isolated = False
        return self._isolated


def of(conn: socket.socket) -> Peer:
    """The peer of a connected UNIX socket."""
    pid, uid, gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    pidfd: int | None
    try:
        pidfd = struct.unpack("i", conn.getsockopt(socket.SOL_SOCKET, SO_PEERPIDFD, 4))[0]
    except OSError:
        pidfd = None
    stat = _stat(pid) if pid > 0 else None
    return Peer(pid, uid, gid, pidfd, stat[2] if stat else None)


def refusal(peer: Peer, me: Self) -> str | None:
    """Why the daemon must not serve ``peer`` (a sentence for the log), or None when it may."""
    if peer.pid <= 0:
        return "the kernel named no peer process"
    if peer.uid != me.uid:
        return f"it runs as another user (uid {peer.uid}, the daemon's is {me.uid})"
    for ns in NAMESPACES:
        theirs = _ns(peer.pid, ns)
        if theirs is None or me.namespaces.get(ns) is None:
            return f"its {ns} namespace cannot be read"
        if theirs != me.namespaces[ns]:
            return f"it runs in another {ns} namespace than the daemon ({theirs}; a sandboxed command does)"
    nnp = _no_new_privs(peer.pid)
    if nnp is None:
        return "its status cannot be read"
    if nnp and not me.no_new_privs:
        return "it runs with no_new_privs set, which the sandbox launcher sets and the daemon does not have"
    if me.no_new_privs and not me.isolated():
        return ("the daemon runs with no_new_privs and sandboxed commands get no mount namespace of their own here: "
                "nothing tells a sandboxed command from a hook client, so the daemon serves neither")
    why = _launched(peer.pid, environ=me.no_new_privs is not False)
    if why is not None:
        return why
    if not alive(peer):
        return "it exited before it could be checked"
    return None


def alive(peer: Peer) -> bool:
    """Whether the peer process still runs (is the one that connected, and waits for its answer)."""
    if peer.pidfd is not None:
        import select

        poller = select.poll()
        poller.register(peer.pidfd, select.POLLIN)
        return not poller.poll(0)  # a pidfd turns readable when its process exits
    stat = _stat(peer.pid)
    return stat is not None and stat[2] == peer.start and stat[3] != b"Z"


def _launched(pid: int, *, environ: bool) -> str | None:
    """Whether ``pid`` or one of its ancestors is the sandbox launcher, or (``environ``) carries its environment
    mark. The environments are read only when the daemon itself has ``no_new_privs`` (the one rule that then tells
    nothing): otherwise every descendant of the launcher was refused by that rule already, and reading an
    environment per ancestor would be most of the check's cost (bench/bench_daemon.py)."""
    for _ in range(MAX_ANCESTORS):
        stat = _stat(pid)
        if stat is None:
            return None if pid <= 1 else f"process {pid} of its ancestry cannot be read"
        comm, ppid = stat[0], stat[1]
        if comm.startswith(LAUNCHER_COMM):
            return f"it descends from the sandbox launcher (process {pid}, {comm.decode('utf-8', 'replace')})"
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            exe = ""
        if LAUNCHER_DIR in exe:
            return f"it descends from the sandbox launcher (process {pid}, {exe})"
        env = _read(f"/proc/{pid}/environ") if environ else None
        if env is not None and SANDBOXED_ENV in env.split(b"\0"):
            return f"process {pid} of its ancestry was started by the sandbox launcher (ORCH_SANDBOXED=1)"
        if ppid <= 0:
            return None
        pid = ppid
    return "its ancestry is deeper than any real one"


def _read(path: str, limit: int = 1 << 20) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def _stat(pid: int) -> tuple[bytes, int, int, bytes] | None:
    """``(comm, ppid, start time, state)`` from ``/proc/PID/stat``; None when unreadable."""
    data = _read(f"/proc/{pid}/stat", 4096)
    if not data:
        return None
    try:
        fields = data[data.rindex(b")") + 2:].split()
        return data[data.index(b"(") + 1:data.rindex(b")")], int(fields[1]), int(fields[19]), fields[0]
    except (ValueError, IndexError):
        return None


def _ns(pid: int, ns: str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/{ns}")
    except OSError:
        return None


def _no_new_privs(pid: int) -> bool | None:
    data = _read(f"/proc/{pid}/status", 16384)
    if data is None:
        return None
    at = data.find(b"\nNoNewPrivs:")
    if at < 0:
        return False  # a kernel older than 4.10 does not say; the other checks still hold
    return data[at + 12:data.index(b"\n", at + 1)].strip() == b"1"
