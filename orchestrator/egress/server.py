"""The egress proxy: the only way out of a sandboxed command's network namespace (one per user, installation and
user namespace).

Two Unix sockets in its private directory (:mod:`orchestrator.egress.paths`, mode 0700, sockets 0600):

- ``ctl``, the **registration** socket. The launcher, before it starts a command, connects from the host's network
  namespace and sends ``ORCHEGRESS1 <plan file>`` with the command's new network namespace attached as a file
  descriptor (``SCM_RIGHTS``). The proxy checks the peer (``SO_PEERCRED``: the same user, and a process in the
  proxy's own network namespace, which no sandboxed process can be in), that the descriptor is a network namespace
  other than its own, and that the plan is one the engine wrote (:func:`orchestrator.egress.plans.load`); then
  it answers ``OK`` and keeps the descriptor, so the namespace's identity (its inode) stays pinned. The
  registration lasts as long as that connection: the launcher holds it until the command ends. Each refusal is
  also sent back on it (``REFUSED <message>``): the launcher prints the line on the command's stderr, so the
  person (or the agent) sees which host was refused and which policy key would allow it, whatever the client
  program makes of a 403 or a SOCKS error.
- ``proxy``, the **traffic** socket, which the launcher's forwarder inside the namespace connects to for every
  connection a program opens to ``127.0.0.1:3128``. Who is asking is not something the client says: it is the
  network namespace of the connecting process (``SO_PEERCRED`` pid -> ``/proc/PID/ns/net``), which the kernel sets
  and no process can leave once its sandbox is restricted; its registration names the plan. A connection from an
  unregistered namespace (a nested launcher, a process that made its own) is refused.

On the traffic socket the first byte selects the protocol: ``0x05`` SOCKS5 (CONNECT only; BIND and UDP ASSOCIATE
are refused), ``0x04`` SOCKS4 (refused), anything else HTTP: ``CONNECT host:port`` or a plain-HTTP request with an
absolute ``http://`` URI (package indexes served over http). The decision, resolution and dial are
:meth:`Proxy.open`'s (see :mod:`orchestrator.egress.hosts`).

Lifecycle: started on demand by the engine when it plans a command with egress
(:func:`orchestrator.egress.supervise.ensure`), one per directory under an exclusive ``flock``; it exits after
``ORCH_EGRESS_IDLE`` seconds (default 600) with no registration and no connection, when its sockets or its
directory disappear, or when orchestrator's code changed and nothing is in flight.
"""

from __future__ import annotations

import asyncio
import fcntl
import ipaddress
import os
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Any

from orchestrator.egress import hosts, plans, wire
from orchestrator.egress.paths import CTL, INFO, LOCK, PROXY

PROTOCOL = b"ORCHEGRESS1"
NS_GET_NSTYPE = 0xB703
CLONE_NEWNET = 0x40000000
#: distinct refusal notices sent to one launcher (a build that retries a refused host must not flood the terminal)
MAX_NOTICES = 20
DIAL_TIMEOUT = 15.0
DEFAULT_IDLE = 600.0


class Refused(Exception):
    """A connection the proxy will not open: HTTP ``status`` (403 policy, 502 unreachable) and the message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def peer_credentials(sock: socket.socket) -> tuple[int, int, int]:
    """(pid, uid, gid) of the process that connected ``sock`` (the kernel's word, ``SO_PEERCRED``)."""
    pid, uid, gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    return pid, uid, gid


def no_new_privs(pid: int) -> bool | None:
    """Whether ``pid`` runs with no_new_privs (None: gone, or a kernel older than 4.10 that does not say)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            data = fh.read(16384)
    except OSError:
        return None
    at = data.find(b"\nNoNewPrivs:")
    return None if at < 0 else data[at + 12:data.index(b"\n", at + 1)].strip() == b"1"


def netns_of(pid: int) -> tuple[int, int] | None:
    """(device, inode) of ``pid``'s network namespace, or None when it is gone."""
    try:
        st = os.stat(f"/proc/{pid}/ns/net")
    except OSError:
        return None
    return st.st_dev, st.st_ino


class Registration:
    """One command's network namespace, registered by its launcher: the plan's rules and the notice channel."""

    def __init__(self, key: tuple[int, int], nsfd: int, conn: socket.socket, plan: str, rules: hosts.Rules) -> None:
        self.key = key
        self.nsfd = nsfd
        self.conn = conn
        self.plan = plan
        self.rules = rules
        self.notified: set[str] = set()
        #: the command's open tunnels (both ends' writers): none outlives the registration, i.e. the command
        self.tunnels: set[asyncio.StreamWriter] = set()

    def notice(self, message: str) -> None:
        """Tell the launcher (best effort: a full socket buffer drops the line, never blocks the proxy)."""
        if message in self.notified or len(self.notified) >= MAX_NOTICES:
            return
        self.notified.add(message)
        try:
            self.conn.send(b"REFUSED " + " ".join(message.split()).encode("utf-8", "replace") + b"\n")
        except OSError:
            pass

    def close(self) -> None:
        # the command is over (its init, and every process of its namespace, with it): a tunnel still open is one
        # whose upstream stays silent after the client's end; it would keep the proxy busy for ever
        for writer in list(self.tunnels):
            writer.transport.abort()
        for close in (lambda: os.close(self.nsfd), self.conn.close):
            try:
                close()
            except OSError:
                pass


class Proxy:
    """The workspace's egress proxy (see the module doc)."""

    def __init__(self, directory: str | os.PathLike[str], *, idle_timeout: float | None = None) -> None:
        self.dir = Path(directory).absolute()
        self.idle_timeout = idle_timeout if idle_timeout is not None else float(
            os.environ.get("ORCH_EGRESS_IDLE", DEFAULT_IDLE))
        self.own_netns = netns_of(os.getpid())
        #: every sandboxed command runs with no_new_privs (its launcher sets it before Landlock), a launcher
        #: registers before it restricts anything; a proxy started with the flag (an agent host run with it) cannot
        #: tell them apart by it (docs/security.md)
        self.own_nnp = no_new_privs(os.getpid())
        self.registrations: dict[tuple[int, int], Registration] = {}
        self.active = 0
        self.last_activity = time.monotonic()
        self._rules: dict[tuple[str, int, int, int, int], hosts.Rules] = {}
        self._lock_fd: int | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.trace = bool(os.environ.get("ORCH_EGRESS_TRACE"))
        self._stop: asyncio.Event | None = None

    # -- lifecycle ------------------------------------------------------------------------------------------------
    def acquire(self) -> bool:
        """The directory's lock; False when another proxy holds it."""
        from orchestrator.core.fsutil import try_lock

        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.dir, 0o700)
        self._lock_fd = try_lock(self.dir / LOCK)
        return self._lock_fd is not None

    async def serve(self) -> None:
        """Bind both sockets and serve until idle, stopped or orphaned. Call :meth:`acquire` first."""
        assert self._lock_fd is not None, "acquire() first"
        loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        # relative names from inside the directory: a Unix socket path is limited to 108 bytes, a workspace is not
        os.chdir(self.dir)
        for name in (CTL, PROXY):
            if os.path.lexists(name):
                os.unlink(name)
        old = os.umask(0o177)
        try:
            ctl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
            ctl.bind(CTL)
            ctl.listen(512)
            ctl.setblocking(False)
            server = await asyncio.start_unix_server(self._client, path=PROXY, backlog=4096, limit=wire.CHUNK)
        finally:
            os.umask(old)
        loop.add_reader(ctl.fileno(), self._accept_ctl, ctl)
        self._write_info()
        try:
            await self._watch()
        finally:
            loop.remove_reader(ctl.fileno())
            ctl.close()
            server.close()
            for reg in list(self.registrations.values()):
                reg.close()
            for name in (CTL, PROXY, INFO):
                try:
                    os.unlink(name)
                except OSError:
                    pass

    def _write_info(self) -> None:
        import json

        from orchestrator._version import __version__

        with open(INFO + ".tmp", "w", encoding="utf-8") as fh:
            json.dump({"pid": os.getpid(), "version": __version__, "started": time.time()}, fh)
        os.replace(INFO + ".tmp", INFO)

    async def _watch(self) -> None:
        from orchestrator.egress.supervise import code_stamp

        code = code_stamp()
        assert self._stop is not None
        while not self._stop.is_set():
            try:
                await asyncio.wait_for(self._stop.wait(), 1.0)
            except asyncio.TimeoutError:
                pass
            busy = self.active > 0 or bool(self.registrations)
            if busy:
                self.last_activity = time.monotonic()
            gone = not (os.path.exists(CTL) and os.path.exists(PROXY) and os.path.samefile(".", self.dir))
            idle = not busy and time.monotonic() - self.last_activity > self.idle_timeout
            if gone or idle or (not busy and code_stamp() != code):
                return

    def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()

    # -- registrations --------------------------------------------------------------------------------------------
    def _accept_ctl(self, listener: socket.socket) -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        conn.setblocking(False)
        pid, uid, _ = peer_credentials(conn)
        # Not the network namespace alone: a command without one of its own (sandbox.pid_namespace: false, an
        # abstract socket allowed) shares the proxy's, and registered a namespace it made with a plan it wrote
        # (redteam3); no_new_privs, which no sandboxed process can shed, tells it from a launcher
        if uid != os.getuid() or netns_of(pid) != self.own_netns or (
                self.own_nnp is False and no_new_privs(pid) is not False):
            # a sandboxed process (or another user) trying to register a namespace of its choice
            self._log(f"registration refused: peer pid {pid} uid {uid} is not a launcher of this user outside "
                      "the sandbox")
            _send(conn, b"ERR registrations are accepted only from outside the sandbox\n")
            conn.close()
            return
        asyncio.get_running_loop().add_reader(conn.fileno(), self._ctl_readable, conn, [None])

    def _ctl_readable(self, conn: socket.socket, state: list[Any]) -> None:
        loop = asyncio.get_running_loop()
        reg: Registration | None = state[0]
        if reg is None:
            try:
                reg = self._register(conn)
            except ValueError as exc:
                self._log(f"registration refused: {exc}")
                _send(conn, f"ERR {exc}\n".encode())
                loop.remove_reader(conn.fileno())
                conn.close()
                return
            state[0] = reg
            _send(conn, b"OK\n")
            return
        try:
            data = conn.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # the launcher exited: its command is over
            loop.remove_reader(conn.fileno())
            if self.registrations.get(reg.key) is reg:
                del self.registrations[reg.key]
            reg.close()
            self.last_activity = time.monotonic()

    def _register(self, conn: socket.socket) -> Registration:
        msg, ancdata, _, _ = conn.recvmsg(8192, socket.CMSG_SPACE(4 * struct.calcsize("i")))
        fds: list[int] = []
        for level, kind, data in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds += list(struct.unpack(f"{len(data) // 4}i", data[:len(data) - len(data) % 4]))
        try:
            head, _, path_bytes = msg.rstrip(b"\n").partition(b" ")
            if head != PROTOCOL or not path_bytes or b"\n" in path_bytes or len(fds) != 1:
                raise ValueError("malformed registration (expected 'ORCHEGRESS1 <plan file>' and one namespace)")
            nsfd = fds.pop()
            key = self._netns_key(nsfd)
            ident = os.fsdecode(path_bytes)
            rules = self._rules_of(ident)
            if key in self.registrations:
                raise ValueError("this network namespace is registered already")
        except ValueError:
            for fd in fds + ([nsfd] if "nsfd" in locals() else []):
                os.close(fd)
            raise
        reg = Registration(key, nsfd, conn, ident, rules)
        self.registrations[key] = reg
        return reg

    def _netns_key(self, fd: int) -> tuple[int, int]:
        try:
            kind = fcntl.ioctl(fd, NS_GET_NSTYPE)
        except OSError:
            raise ValueError("the descriptor is not a namespace") from None
        if kind != CLONE_NEWNET:
            raise ValueError("the descriptor is not a network namespace")
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino)
        if key == self.own_netns:
            raise ValueError("the proxy's own network namespace cannot be registered")
        return key

    def _rules_of(self, path: str) -> hosts.Rules:
        """The plan's rules: read and checked once (:func:`plans.load`), then known by the file's identity (the same
        inode, size and mtime is the same content-addressed file: no read, hash or parse on the launch path)."""
        try:
            st = os.stat(path)
        except OSError:
            st = None
        key = (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) if st is not None else None
        rules = self._rules.get(key) if key is not None else None
        if rules is None:
            allow, deny = plans.load(path)
            if len(self._rules) > 4096:
                self._rules.clear()
            rules = hosts.rules(allow, deny)
            if key is not None:
                self._rules[key] = rules
        return rules

    # -- traffic --------------------------------------------------------------------------------------------------
    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.active += 1
        # a strong reference: the loop keeps only weak ones, and a stream's protocol drops its task when the client
        # side is gone, while the relay may still be handing the last bytes over (a collected task loses them)
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            reg = self._identify(writer)
            first = await asyncio.wait_for(reader.read(1), wire.HEAD_TIMEOUT)
            if not first:
                return
            if first[0] == 5:
                await self._socks(reg, reader, writer)
            elif first[0] == 4:
                writer.write(b"\x00\x5b" + bytes(6))  # SOCKS4: request rejected
            else:
                await self._http(reg, reader, writer, first)
        except (asyncio.TimeoutError, asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        finally:
            self.active -= 1
            self.last_activity = time.monotonic()
            writer.close()
            self._tasks.discard(task)  # type: ignore[arg-type]

    def _identify(self, writer: asyncio.StreamWriter) -> Registration | None:
        sock = writer.get_extra_info("socket")
        try:
            pid, uid, _ = peer_credentials(sock)
        except OSError:
            return None
        key = netns_of(pid) if uid == os.getuid() else None
        reg = self.registrations.get(key) if key is not None else None
        if reg is None:  # answered with a refusal, never relayed; logged so that the person can see who tried
            self._log(f"connection refused: peer pid {pid} uid {uid} is not in a registered sandbox's namespace")
        return reg

    async def _http(self, reg: Registration | None, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    first: bytes) -> None:
        try:
            head, rest = await asyncio.wait_for(wire.read_head(reader, first), wire.HEAD_TIMEOUT)
            req = wire.parse_http(head, rest)
            if reg is None:
                raise Refused(403, "orchestrator egress: this connection does not come from a registered sandbox")
            up_reader, up_writer = await self.open(reg, req.host, req.port)
        except wire.BadRequest as exc:
            writer.write(wire.http_error(exc.status, f"orchestrator egress: {exc}"))
            return
        except Refused as exc:
            writer.write(wire.http_error(exc.status, str(exc)))
            return
        if req.connect:
            writer.write(wire.CONNECTED)
        else:
            up_writer.write(req.head)
        if req.rest:
            up_writer.write(req.rest)
        await self._relay(reg, f"{req.host}:{req.port}", (reader, writer), (up_reader, up_writer))

    async def _socks(self, reg: Registration | None, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter) -> None:
        try:
            host, port = await asyncio.wait_for(wire.read_socks5(reader, writer), wire.HEAD_TIMEOUT)
            if reg is None:
                raise Refused(403, "not from a registered sandbox")
            up_reader, up_writer = await self.open(reg, host, port)
        except wire.BadRequest as exc:
            if exc.status != wire.SOCKS_FAILURE:
                writer.write(wire.socks_reply(exc.status))
            if reg is not None:
                reg.notice(str(exc))
            return
        except Refused as exc:
            writer.write(wire.socks_reply(wire.SOCKS_NOT_ALLOWED if exc.status == 403 else wire.SOCKS_HOST_UNREACHABLE))
            return
        writer.write(wire.socks_reply(wire.SOCKS_OK))
        await self._relay(reg, f"{host}:{port}", (reader, writer), (up_reader, up_writer))

    async def _relay(self, reg: Registration, target: str, client: tuple[asyncio.StreamReader, asyncio.StreamWriter],
                     upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter]) -> None:
        """The tunnel's bytes both ways; with ``ORCH_EGRESS_TRACE`` set, one log line per tunnel (its sizes)."""
        if self.trace:
            self._log(f"open {target} (plan {os.path.basename(reg.plan)})")
        ends = (client[1], upstream[1])
        reg.tunnels.update(ends)
        try:
            up, down = await wire.relay(client[0], client[1], upstream[0], upstream[1])
        finally:
            reg.tunnels.difference_update(ends)
        if self.trace:
            self._log(f"closed {target}: {up} bytes up, {down} bytes down")

    async def open(self, reg: Registration, host: str, port: int) -> tuple[asyncio.StreamReader,
                                                                          asyncio.StreamWriter]:
        """Decide, resolve once, check every address, dial one that passed; raises :class:`Refused`."""
        decision = reg.rules.decide(host, port)
        if not decision.allowed:
            message = f"orchestrator egress: {decision.message}"
            reg.notice(decision.message)
            self._log(f"refused {host}:{port} (plan {reg.plan}): {decision.message}")
            raise Refused(403, message)
        value = decision.host
        if isinstance(value, str):
            addresses = await self._resolve(reg, value, port, decision.exact)
        else:
            addresses = [value]
        error: Exception | None = None
        for addr in addresses:
            try:
                return await asyncio.wait_for(asyncio.open_connection(str(addr), port, limit=wire.CHUNK),
                                              DIAL_TIMEOUT)
            except (OSError, asyncio.TimeoutError) as exc:
                error = exc
        raise Refused(502, f"orchestrator egress: cannot reach {host}:{port} ({error or 'no address'})")

    async def _resolve(self, reg: Registration, name: str, port: int, exact: bool) -> list[hosts.Address]:
        """The addresses ``name`` resolves to that the rules let it reach (resolved once: these are dialled)."""
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(name, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise Refused(502, f"orchestrator egress: cannot resolve {name} ({exc})") from None
        allowed: list[hosts.Address] = []
        reasons: list[str] = []
        for info in infos:
            addr = ipaddress.ip_address(str(info[4][0]).partition("%")[0])
            if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
                addr = addr.ipv4_mapped
            if addr in allowed:
                continue
            why = reg.rules.check_address(name, addr, port, exact)
            if why is None:
                allowed.append(addr)
            else:
                reasons.append(why)
        if not allowed:
            reason = reasons[0] if reasons else f"{name} resolves to no address"
            message = f"orchestrator egress: {reason}"
            reg.notice(reason)
            self._log(f"refused {name}:{port} (plan {reg.plan}): {message}")
            raise Refused(403, message)
        return allowed

    def _log(self, line: str) -> None:
        """One line in ``run/egress/log`` (refusals; kept under 1 MiB)."""
        path = self.dir / "log"
        try:
            if path.exists() and path.stat().st_size > 1 << 20:
                os.replace(path, self.dir / "log.1")
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n")
        except OSError:
            pass


def _send(conn: socket.socket, data: bytes) -> None:
    try:
        conn.send(data)
    except OSError:
        pass


def serve(directory: str | os.PathLike[str], *, idle_timeout: float | None = None) -> int:
    """Run the proxy in ``directory`` in the foreground; 0 also when another proxy already serves it."""
    proxy = Proxy(directory, idle_timeout=idle_timeout)
    if not proxy.acquire():
        return 0
    try:
        asyncio.run(proxy.serve())
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1]))
