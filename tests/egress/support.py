"""Real stand-ins for the egress tests: the proxy process, a client in a network namespace of its own registered with
it, upstream servers, and a DNS server the proxy's resolver asks (so a test sees which names were resolved)."""

from __future__ import annotations

import functools
import hashlib
import os
import socket
import struct
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from orchestrator.egress import plans
from tests.waiting import wait_until

#: runs first in the client: a network namespace of its own (a user namespace too when not root), then it waits
#: until the test has registered that namespace with the proxy. PROXY is the proxy's traffic socket.
PRELUDE = textwrap.dedent("""\
    import ctypes, hashlib, os, socket, sys
    lib = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.geteuid(), os.getegid()
    if lib.unshare(0x40000000 | (0x10000000 if uid else 0)) != 0:
        raise SystemExit("unshare failed")
    if uid:
        for name, text in (("uid_map", f"{uid} {uid} 1\\n"), ("setgroups", "deny"), ("gid_map", f"{gid} {gid} 1\\n")):
            with open(f"/proc/self/{name}", "w") as fh:
                fh.write(text)
    print("ready", flush=True)
    sys.stdin.readline()
    PROXY = sys.argv[1]

    def connect():
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(60)
        s.connect(PROXY)
        return s

    def head(s):
        data = b""
        while b"\\r\\n\\r\\n" not in data:
            chunk = s.recv(1)
            if not chunk:
                break
            data += chunk
        return data.decode("latin-1")

    def tunnel(target):
        s = connect()
        s.sendall(f"CONNECT {target} HTTP/1.1\\r\\nHost: {target}\\r\\n\\r\\n".encode())
        return s, head(s)

    def read_all(s):
        out = []
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                return b"".join(out)
            out.append(chunk)
""")


@functools.lru_cache(maxsize=4)
def pattern(size: int) -> bytes:
    """Deterministic bytes whose every 4 KiB block differs (a lost or repeated block changes the digest)."""
    block = b"".join(struct.pack(">Q", i) for i in range(512))
    whole = bytearray()
    n = 0
    while len(whole) < size:
        whole += hashlib.sha256(n.to_bytes(8, "big")).digest() + block[32:]
        n += 1
    return bytes(whole[:size])


class Proxy:
    """The real proxy (``python -m orchestrator.egress DIR``) and a workspace whose plans it may read."""

    def __init__(self, base: Path) -> None:
        self.dir = base / "egress"
        self.plans = base / "ws" / ".orchestration" / "run" / "sandbox"
        self.plans.mkdir(parents=True)
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, prefix: list[str] | None = None, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen([*(prefix or []), sys.executable, "-m", "orchestrator.egress", str(self.dir)],
                                     env={**os.environ, **(env or {})})
        wait_until(lambda: (self.dir / "ctl").exists() and (self.dir / "proxy").exists()
                   and (self.dir / "info.json").exists(), timeout=30, what="the proxy's sockets")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=30)

    def plan(self, allow: list[str], deny: list[str] = ()) -> str:  # type: ignore[assignment]
        return plans.write(str(self.plans), [(a, "sandbox.network.allow") for a in allow],
                           [(d, "sandbox.network.deny") for d in deny])

    def register(self, pid: int, plan: str) -> tuple[socket.socket, bytes]:
        """Register ``pid``'s network namespace as a launcher does; the connection and the proxy's answer."""
        nsfd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
        ctl = socket.socket(socket.AF_UNIX)
        ctl.settimeout(30)
        ctl.connect(str(self.dir / "ctl"))
        try:
            ctl.sendmsg([f"ORCHEGRESS1 {plan}\n".encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                                                struct.pack("i", nsfd))])
        finally:
            os.close(nsfd)
        return ctl, ctl.recv(600)

    def run(self, code: str, plan: str | None, timeout: float = 120) -> tuple[str, str, list[str]]:
        """Run ``code`` (after :data:`PRELUDE`) in a network namespace registered with ``plan`` (None: not
        registered); its stdout, stderr and the refusals the proxy sent to the registration."""
        child = subprocess.Popen([sys.executable, "-c", PRELUDE + textwrap.dedent(code), str(self.dir / "proxy")],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "ready", child.stderr.read() if child.stderr else ""
        ctl = None
        if plan is not None:
            ctl, answer = self.register(child.pid, plan)
            assert answer == b"OK\n", answer
        out, err = child.communicate("go\n", timeout=timeout)
        notices: list[str] = []
        if ctl is not None:
            ctl.setblocking(False)
            try:
                notices = [line for line in ctl.recv(1 << 16).decode().split("\n") if line]
            except BlockingIOError:
                pass
            ctl.close()
        return out, err, notices


class Upstream:
    """A TCP server on ``host``: ``download N`` sends N pattern bytes and closes; otherwise it reads to the
    client's end of stream and answers the length and sha256 of what it got (a half-close must pass through)."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.sock = socket.create_server((host, 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            first = conn.recv(64)
            if first.startswith(b"download "):
                conn.sendall(pattern(int(first.split()[1])))
                return
            digest, total = hashlib.sha256(first), len(first)
            while True:
                chunk = conn.recv(1 << 20)
                if not chunk:
                    break
                digest.update(chunk)
                total += len(chunk)
            conn.sendall(f"{total} {digest.hexdigest()}".encode())

    def close(self) -> None:
        # shutdown first: a close alone leaves the socket listening inside the accept() the serving thread is
        # blocked in, and a later server given the same port would see its connections taken by this one
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class Dns:
    """A DNS server on UDP port 53 of its own loopback address (:attr:`address`) answering A queries from ``answers`` (name -> [addresses], each
    query taking the next list if several were given); every query's name is kept in ``asked``."""

    _next = [77]

    def __init__(self, answers: dict[str, Any]) -> None:
        # an address of its own (127.0.0.77, .78, ...): a previous server's port may not be free again at once
        self.address = f"127.0.0.{self._next[0]}"
        self._next[0] = 77 + (self._next[0] - 76) % 100
        self.answers = answers
        self.asked: list[str] = []
        self.a_asked: list[str] = []
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((self.address, 53))
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                data, peer = self.sock.recvfrom(4096)
            except OSError:
                return
            if len(data) < 17:
                return  # closed (or not a query)
            labels, i = [], 12
            while data[i]:
                labels.append(data[i + 1:i + 1 + data[i]].decode("ascii", "replace"))
                i += data[i] + 1
            name, qtype = ".".join(labels).lower(), struct.unpack(">H", data[i + 1:i + 3])[0]
            self.asked.append(name)
            if qtype == 1:
                self.a_asked.append(name)
            question = data[12:i + 5]
            found = self.answers.get(name)
            if isinstance(found, list) and found and isinstance(found[0], list):  # successive answers (A queries)
                found = (found.pop(0) if len(found) > 1 else found[0]) if qtype == 1 else found[0]
            records = [a for a in (found or []) if qtype == 1]
            flags = 0x8180 if found is not None else 0x8183
            reply = data[:2] + struct.pack(">HHHHH", flags, 1, len(records), 0, 0) + question
            for addr in records:
                reply += b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 0, 4) + socket.inet_aton(addr)
            self.sock.sendto(reply, peer)

    def a_queries(self, name: str) -> int:
        return self.a_asked.count(name)

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the serving thread's recvfrom: the port is free again
        except OSError:
            pass
        self.sock.close()


def resolver_prefix(base: Path, dns: Dns) -> list[str]:
    """A command prefix that runs the proxy with ``/etc/resolv.conf`` naming ``dns`` (a mount namespace of its own:
    nothing else on the machine sees it)."""
    conf = base / "resolv.conf"
    conf.write_text(f"nameserver {dns.address}\noptions timeout:2 attempts:1\n")
    hosts = base / "hosts"
    hosts.write_text("127.0.0.1 localhost\n")
    script = f"mount --bind {conf} /etc/resolv.conf && mount --bind {hosts} /etc/hosts && exec \"$@\""
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "resolver"]


def lines(text: str) -> Iterator[str]:
    yield from (line for line in text.splitlines() if line)
