"""The command's own network namespace and the bridge to the egress proxy (the Python launcher's copy of
``launcher.c``'s "network namespace" section; the design is described there and in docs/security.md).

``--netns on``: PID 1 of the command's PID namespace unshares a network namespace with only ``lo`` (brought up);
where the kernel refuses, ``--net-fallback`` (TCP port rules) applies instead. ``--egress DIR --egress-plan FILE``:
the launcher reaches the proxy's sockets first (from the host's namespace; ``O_PATH`` descriptors, connected
through ``/proc/self/fd/N``), PID 1 listens on ``127.0.0.1:3128`` once its namespace is up, the launcher registers
that namespace with the proxy (``SCM_RIGHTS``), and a forwarder process relays every connection to the proxy's
traffic socket. The launcher keeps the registration until the command ends and prints the proxy's refusals on
stderr. No proxy, no network (fail closed), and a line that says why.

Imported by the launcher under ``-I -S``: stdlib C modules only (``_socket``, ``select``, ``fcntl``, ``os``).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # keep `typing` off the launcher's import path
    import _socket

CLONE_NEWNET = 0x40000000
PORT = 3128
WAIT = 3.0
REPLY_TIMEOUT = 5.0
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
BUF = 65536


def _say(text: str) -> None:
    os.write(2, f"orchestrator sandbox: {text}\n".encode("utf-8", "replace"))


def _connect_fd(pathfd: int):  # -> _socket.socket
    import _socket

    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.connect(f"/proc/self/fd/{pathfd}")
    except OSError:
        s.close()
        raise
    return s


class Bridge:
    """One launch's network namespace: set up across the launcher (outside) and PID 1 (inside)."""

    def __init__(self, extra: dict[str, list[str]]) -> None:
        self.egress: str | None = extra["--egress"][-1] if extra.get("--egress") else None
        self.plan = (extra.get("--egress-plan") or ["-"])[-1]
        self.env = [v.partition("=") for v in extra.get("--egress-env", [])]
        self.ctl: _socket.socket | None = None
        self.proxy = -1
        self.procfd = -1
        self.listener: _socket.socket | None = None
        self.up = False
        self.why = ""
        self.ready = os.pipe()
        self.go = os.pipe()

    # -- the launcher, before any namespace ----------------------------------------------------------------------
    def prepare(self) -> None:
        """Reach the proxy (waiting a little for one the engine has just started)."""
        if self.egress is None:
            return
        import time

        self.procfd = os.open("/proc", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        deadline = time.monotonic() + WAIT
        error: OSError | None = None
        while True:
            try:
                pathfd = os.open(os.path.join(self.egress, "ctl"), os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
                try:
                    self.ctl = _connect_fd(pathfd)
                finally:
                    os.close(pathfd)
                ctl = self.ctl
                if not _peer_is_proxy(ctl):
                    self.why = (f"no network for this command: the process behind {self.egress}/ctl is not this "
                                "user's egress proxy outside the sandbox")
                    ctl.close()
                    self.ctl = None
                    return
                self.proxy = os.open(os.path.join(self.egress, "proxy"), os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
                return
            except OSError as exc:
                error = exc
            if self.ctl is not None or error.errno not in (2, 111) or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        self.why = (f"no network for this command: cannot reach the egress proxy in {self.egress} ({error}); "
                    f"`orch doctor` checks it, its output is in {self.egress}/out")

    # -- PID 1 -------------------------------------------------------------------------------------------------------
    def inner(self) -> bool:
        """Make the namespace (True: up; False: refused, the fallback rules apply). The registration is the
        forwarder's to wait for (connections wait in the backlog meanwhile): the command starts at once."""
        import ctypes

        os.close(self.ready[0])
        os.close(self.go[1])
        if self.ctl is not None:
            self.ctl.close()
        bridged = self.egress is not None and self.ctl is not None
        if ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWNET) != 0:
            os.write(self.ready[1], b"N")
            os.close(self.ready[1])
            os.close(self.go[0])
            return False
        self.up = True
        os.write(self.ready[1], b"Y" if bridged else b"U")  # the launcher registers meanwhile
        os.close(self.ready[1])
        if _lo_up() and bridged:
            self.listener = _listen()
        if self.listener is None:
            os.close(self.go[0])
        return True

    def environ(self, env: dict[str, str]) -> None:
        for name, _, value in self.env:
            env[name] = value

    def start_forwarder(self) -> None:
        """Fork the forwarder (after the command, which stays PID 2)."""
        if self.listener is None:
            return
        if os.fork() == 0:
            try:
                if os.read(self.go[0], 1) == b"G":  # registered; else closing the listener refuses every client
                    os.close(self.go[0])
                    _forward(self.listener, self.proxy)
            finally:
                os._exit(0)
        self.listener.close()
        self.listener = None
        os.close(self.go[0])

    def forward_on_demand(self, command: int) -> None:
        """PID 1: start the forwarder once a connection waits (most commands open none: a fork saved), or return
        when the command has ended; orphans other than the command are reaped meanwhile (launcher.c's
        ``forwarder_on_demand``)."""
        import select

        if self.listener is None:
            return
        try:
            pidfd = os.pidfd_open(command)
        except (OSError, AttributeError):
            self.start_forwarder()
            return
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        poller.register(self.listener.fileno(), select.POLLIN)
        try:
            while True:
                ready = dict(poller.poll(1000))
                while True:  # reap orphans, never the command (the caller's wait collects it)
                    info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
                    if info is None or info.si_pid in (0, command):
                        break
                    os.waitpid(info.si_pid, 0)
                if pidfd in ready:
                    break
                if ready.get(self.listener.fileno(), 0) & select.POLLIN:
                    self.start_forwarder()
                    break
        except ChildProcessError:
            pass
        finally:
            os.close(pidfd)
        if self.listener is not None:  # no connection came
            self.listener.close()
            self.listener = None
            os.close(self.go[0])

    # -- the launcher, after forking PID 1 -----------------------------------------------------------------------
    def outer(self, pid: int) -> int:
        """Register, then wait for PID 1 while relaying the proxy's answer (to the forwarder) and refusals (to
        stderr); PID 1's exit status. The registration overlaps the command (launcher.c's ``egress_outer``)."""
        os.close(self.ready[1])
        os.close(self.go[0])
        state = os.read(self.ready[0], 1) or b"N"
        sent = state == b"Y" and self._register(pid)
        if state != b"N" and self.why:
            _say(self.why)
        if sent:
            self._relay_answers(pid)
        else:
            if self.ctl is not None:
                self.ctl.close()
            self._tell(b"X")
        os.close(self.go[1])
        while True:
            try:
                _, status = os.waitpid(pid, 0)
            except InterruptedError:
                continue
            code = os.waitstatus_to_exitcode(status)
            return 128 - code if code < 0 else code

    def _tell(self, word: bytes) -> None:
        try:
            os.write(self.go[1], word)
        except BrokenPipeError:
            pass  # no forwarder (lo or the listener failed): nothing to tell

    def _register(self, pid: int) -> bool:
        """Send the registration of ``pid``'s namespace (the answer is read by :meth:`_relay_answers`)."""
        import _socket

        assert self.ctl is not None
        try:
            nsfd = os.open(f"{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC, dir_fd=self.procfd)
        except OSError as exc:
            self.why = f"no network for this command: cannot open /proc/{pid}/ns/net: {exc.strerror}"
            return False
        try:
            self.ctl.sendmsg([f"ORCHEGRESS1 {self.plan}\n".encode()],
                             [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, nsfd.to_bytes(4, sys.byteorder))])
        except OSError as exc:
            self.why = f"no network for this command: cannot register with the egress proxy: {exc}"
            return False
        finally:
            os.close(nsfd)
        return True

    def _relay_answers(self, pid: int) -> None:
        import select

        assert self.ctl is not None
        try:
            pidfd = os.pidfd_open(pid)
        except (OSError, AttributeError):
            pidfd = -1
        poller = select.poll()
        if pidfd >= 0:
            poller.register(pidfd, select.POLLIN)
        poller.register(self.ctl.fileno(), select.POLLIN)
        pending, answered = b"", False
        try:
            while True:
                try:
                    events = poller.poll(None if pidfd >= 0 else REPLY_TIMEOUT * 1000)
                except InterruptedError:
                    continue
                if not events or any(fd == pidfd for fd, _ in events):
                    return
                try:
                    chunk = self.ctl.recv(4096)
                except OSError:
                    chunk = b""
                if not chunk:
                    _say("the egress proxy stopped: no network for the rest of this command")
                    poller.unregister(self.ctl.fileno())
                    if not answered:
                        self._tell(b"X")
                    answered = True
                    if pidfd < 0:
                        return
                    continue
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    if not answered:
                        answered = True
                        self._tell(b"G" if line == b"OK" else b"X")
                        if line != b"OK":
                            _say("no network for this command: the egress proxy refused its registration "
                                 f"({line.decode('utf-8', 'replace')[:400]})")
                        if pidfd < 0:
                            return
                    elif line.startswith(b"REFUSED "):
                        _say("network: " + line[8:].decode("utf-8", "replace"))
                pending = pending[-4096:]
        finally:
            if pidfd >= 0:
                os.close(pidfd)
            if pidfd >= 0 or not answered:
                self.ctl.close()


def _peer_is_proxy(sock) -> bool:  # noqa: ANN001 (_socket.socket)
    """The registration socket's peer is this user's, in this process's network namespace (launcher.c's
    ``peer_is_proxy``)."""
    import _socket

    raw = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    pid, uid = int.from_bytes(raw[0:4], sys.byteorder), int.from_bytes(raw[4:8], sys.byteorder)
    try:
        peer, own = os.stat(f"/proc/{pid}/ns/net"), os.stat("/proc/self/ns/net")
    except OSError:
        return False
    return uid == os.geteuid() and (peer.st_dev, peer.st_ino) == (own.st_dev, own.st_ino)


def _lo_up() -> bool:
    import _socket
    import fcntl

    s = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    try:
        req = bytearray(b"lo".ljust(40, b"\0"))
        fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, req)
        flags = int.from_bytes(req[16:18], sys.byteorder) | IFF_UP
        req[16:18] = flags.to_bytes(2, sys.byteorder)
        fcntl.ioctl(s.fileno(), SIOCSIFFLAGS, req)
        return True
    except OSError:
        return False
    finally:
        s.close()


def _listen():  # -> _socket.socket | None
    import _socket

    s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    try:
        s.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", PORT))
        s.listen(4096)
        s.setblocking(False)
        return s
    except OSError:
        s.close()
        return None


class _Relay:
    """One forwarded connection: ``socks[0]`` the client (TCP), ``socks[1]`` the proxy; ``pending[i]``: bytes read
    from ``socks[i]`` not yet written to the other; ``eof[i]``: ``socks[i]`` ended; ``shut[i]``: its write side is
    shut (the other side's end of stream passed on)."""

    def __init__(self, client, up) -> None:  # noqa: ANN001 (_socket.socket)
        self.socks = (client, up)
        self.pending = [b"", b""]
        self.eof = [False, False]
        self.shut = [False, False]
        for s in self.socks:
            s.setblocking(False)

    def events(self, i: int) -> int:
        import select

        ev = select.POLLIN if not self.pending[i] and not self.eof[i] else 0
        return ev | (select.POLLOUT if self.pending[1 - i] else 0)

    def step(self, i: int) -> None:
        """Move direction ``i`` as far as it goes without blocking; OSError: the relay broke."""
        src, dst = self.socks[i], self.socks[1 - i]
        while True:
            if self.pending[i]:
                try:
                    sent = dst.send(self.pending[i])
                except BlockingIOError:
                    return
                self.pending[i] = self.pending[i][sent:]
                continue
            if self.eof[i]:
                if not self.shut[1 - i]:
                    dst.shutdown(1)
                    self.shut[1 - i] = True
                return
            try:
                data = src.recv(BUF)
            except BlockingIOError:
                return
            if not data:
                self.eof[i] = True
            self.pending[i] = data
            if data:
                return self._flush(i)

    def _flush(self, i: int) -> None:
        try:
            sent = self.socks[1 - i].send(self.pending[i])
            self.pending[i] = self.pending[i][sent:]
        except BlockingIOError:
            pass

    def done(self) -> bool:
        return all(self.eof) and all(self.shut)

    def close(self) -> None:
        for s in self.socks:
            s.close()


def _forward(listener, proxy: int) -> None:  # noqa: ANN001 (_socket.socket)
    """The forwarder: accept on ``listener``, relay each connection to the proxy, byte for byte, half-closes
    passed on (the same loop as launcher.c's ``forwarder``)."""
    import _socket
    import ctypes
    import select

    import _signal  # type: ignore[import-not-found]

    ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL: PID 1 gone, the forwarder goes too
    _signal.signal(_signal.SIGPIPE, _signal.SIG_IGN)
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    keep = sorted((listener.fileno(), proxy))
    os.closerange(3, keep[0])  # e.g. git mode's guardian pipe: its reader must see the command's end, not ours
    os.closerange(keep[0] + 1, keep[1])
    os.closerange(keep[1] + 1, 4096)
    relays: list[_Relay] = []
    told = False
    while True:
        poller = select.poll()
        poller.register(listener.fileno(), select.POLLIN)
        owner: dict[int, _Relay] = {}
        for r in relays:
            for i in (0, 1):
                owner[r.socks[i].fileno()] = r
                poller.register(r.socks[i].fileno(), r.events(i))
        try:
            ready = poller.poll()
        except InterruptedError:
            continue
        for fd, _ in ready:
            found = owner.get(fd)
            if found is None or found.socks[0].fileno() < 0:
                continue
            r = found
            try:
                r.step(0)
                r.step(1)
            except OSError:
                r.close()
                continue
            if r.done():
                r.close()
        relays = [r for r in relays if r.socks[0].fileno() >= 0]
        if any(fd == listener.fileno() for fd, _ in ready):
            while True:
                try:
                    client = _socket.socket(fileno=listener._accept()[0])
                except OSError:
                    break
                try:
                    up = _connect_fd(proxy)
                except OSError as exc:
                    if not told:
                        _say(f"the egress proxy is unreachable ({exc.strerror}): no network")
                        told = True
                    client.close()
                    continue
                relays.append(_Relay(client, up))
