"""The egress proxy (orchestrator/egress/server.py), the real process: clients in network namespaces of their own,
registered as the launcher registers them, real upstream listeners, a real DNS server for the proxy's resolver."""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.egress.support import Dns, Proxy, Upstream, resolver_prefix


def _can_unshare_net() -> bool:
    import subprocess

    flags = ["-n"] if os.geteuid() == 0 else ["-rn"]
    return subprocess.run(["unshare", *flags, "true"], capture_output=True, check=False).returncode == 0


pytestmark = pytest.mark.skipif(not _can_unshare_net(), reason="the kernel refuses network namespaces here")
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="a DNS server on port 53 and a private resolv.conf need root")


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[Proxy]:
    p = Proxy(tmp_path)
    p.start()
    yield p
    p.stop()


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    up = Upstream()
    yield up
    up.close()


def test_connect_relays_byte_exact_both_ways_through_half_closes(proxy: Proxy, upstream: Upstream) -> None:
    plan = proxy.plan([f"127.0.0.1:{upstream.port}"])
    out, err, _ = proxy.run(f"""
        s, h = tunnel("127.0.0.1:{upstream.port}")
        print(h.split("\\r\\n")[0])
        data = bytes(range(256)) * 32768 + b"tail"   # 8 MiB and 4 bytes
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)                    # the upstream answers only after our end of stream
        print(read_all(s).decode() == f"{{len(data)}} {{hashlib.sha256(data).hexdigest()}}")
        s, h = tunnel("127.0.0.1:{upstream.port}")
        s.sendall(b"download 50000001")
        got = read_all(s)
        import sys; sys.path.insert(0, {os.getcwd()!r})
        from tests.egress.support import pattern
        print(len(got), got == pattern(50000001))
    """, plan)
    assert out.split("\n")[:3] == ["HTTP/1.1 200 Connection established", "True", "50000001 True"], err


def test_plain_http_is_forwarded_in_origin_form_with_the_checked_host(proxy: Proxy, upstream: Upstream) -> None:
    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]
    plan = proxy.plan([f"127.0.0.1:{port}"])
    srv.settimeout(60)
    import threading

    seen: list[bytes] = []

    def serve() -> None:
        conn, _ = srv.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(4096)
            seen.append(data)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")

    threading.Thread(target=serve, daemon=True).start()
    out, err, _ = proxy.run(f"""
        s = connect()
        s.sendall(b"GET http://127.0.0.1:{port}/simple/x/?q=1 HTTP/1.1\\r\\nHost: evil.example\\r\\n"
                  b"Proxy-Authorization: Basic c2VjcmV0\\r\\nConnection: keep-alive\\r\\nAccept: */*\\r\\n\\r\\n")
        print(read_all(s).decode().split("\\r\\n")[-1])
    """, plan)
    assert out.strip() == "ok", err
    request = seen[0].decode()
    assert request.startswith("GET /simple/x/?q=1 HTTP/1.1\r\n")
    assert f"Host: 127.0.0.1:{port}\r\n" in request and "evil.example" not in request
    assert "Proxy-Authorization" not in request and "Connection: close" in request and "Accept: */*" in request
    srv.close()


def test_refusals_name_the_host_and_the_key_and_never_open_a_connection(proxy: Proxy, upstream: Upstream) -> None:
    plan = proxy.plan(["registry.example.test"])
    out, err, notices = proxy.run(f"""
        for target in ("127.0.0.1:{upstream.port}", "0x7f.1:{upstream.port}", "2130706433:{upstream.port}",
                       "[::ffff:127.0.0.1]:{upstream.port}", "data.attacker.test:443"):
            s, h = tunnel(target)
            print(h.split("\\r\\n")[0])
    """, plan)
    status = out.strip().split("\n")
    assert len(status) == 5 and all(line.startswith("HTTP/1.1 403 orchestrator egress:") for line in status), err
    assert "IP address literals are refused unless listed" in status[0]
    assert "data.attacker.test:443 is not an allowed host" in status[4] and "sandbox.network.allow" in status[4]
    assert upstream.accepted == 0
    assert any("data.attacker.test:443" in n for n in notices) and all(n.startswith("REFUSED ") for n in notices)


def test_an_unregistered_namespace_gets_nothing(proxy: Proxy, upstream: Upstream) -> None:
    proxy.plan([f"127.0.0.1:{upstream.port}"])
    out, err, _ = proxy.run(f"""
        s, h = tunnel("127.0.0.1:{upstream.port}")
        print(h.split("\\r\\n")[0])
    """, None)
    assert out.startswith("HTTP/1.1 403") and "registered sandbox" in out, err
    assert upstream.accepted == 0
    assert "connection refused: peer pid" in (proxy.dir / "log").read_text()  # and the person can see who tried


def test_socks5_connect_is_served_and_bind_udp_and_socks4_are_refused(proxy: Proxy, upstream: Upstream) -> None:
    plan = proxy.plan([f"127.0.0.1:{upstream.port}"])
    out, err, notices = proxy.run(f"""
        import struct
        def socks(cmd, atyp_addr, port):
            s = connect()
            s.sendall(b"\\x05\\x01\\x00")
            assert s.recv(2) == b"\\x05\\x00"
            s.sendall(bytes((5, cmd, 0)) + atyp_addr + struct.pack(">H", port))
            return s, s.recv(10)
        s, reply = socks(1, b"\\x01" + socket.inet_aton("127.0.0.1"), {upstream.port})
        s.sendall(b"through socks"); s.shutdown(socket.SHUT_WR)
        print(reply[1], read_all(s).decode().split()[0])
        name = b"data.attacker.test"
        print(socks(1, b"\\x03" + bytes((len(name),)) + name, 443)[1][1])
        print(socks(2, b"\\x01" + socket.inet_aton("127.0.0.1"), {upstream.port})[1][1])
        print(socks(3, b"\\x01" + socket.inet_aton("0.0.0.0"), 0)[1][1])
        s = connect(); s.sendall(b"\\x04\\x01" + struct.pack(">H", {upstream.port}) + socket.inet_aton("127.0.0.1") + b"\\x00")
        print(s.recv(8)[1])
        s = connect(); s.sendall(b"\\x05\\x01\\x02")   # only username/password offered
        print(s.recv(2))
    """, plan)
    assert out.split("\n")[:6] == ["0 13", "2", "7", "7", "91", "b'\\x05\\xff'"], err
    assert upstream.accepted == 1  # only the CONNECT
    assert any("BIND is refused" in n for n in notices) and any("UDP ASSOCIATE is refused" in n for n in notices)


def test_malformed_and_oversized_requests_get_an_error_and_no_connection(proxy: Proxy, upstream: Upstream) -> None:
    plan = proxy.plan([f"127.0.0.1:{upstream.port}", "example.test"])
    out, err, _ = proxy.run(f"""
        for request in (b"CONNECT 127.0.0.1 HTTP/1.1\\r\\n\\r\\n",                       # no port
                        b"CONNECT 127.0.0.1:{upstream.port}\\r\\n\\r\\n",                 # no version
                        b"CONNECT example.test:99999 HTTP/1.1\\r\\n\\r\\n",
                        b"GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n",                       # not a proxy request
                        b"GET https://example.test/ HTTP/1.1\\r\\n\\r\\n",
                        b"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\\r\\nBad Header\\r\\n\\r\\n",
                        b"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\\r\\nX: " + b"a" * 20000 + b"\\r\\n\\r\\n"):
            s = connect()
            s.sendall(request)
            print(head(s).split("\\r\\n")[0][:12])
        s = connect()                                  # half a head, then end of stream
        s.sendall(b"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\\r\\n")
        s.shutdown(socket.SHUT_WR)
        print(repr(read_all(s)[:12]))
    """, plan)
    assert out.split("\n")[:8] == ["HTTP/1.1 400"] * 6 + ["HTTP/1.1 431", "b'HTTP/1.1 400'"], err
    assert upstream.accepted == 0


def _register_raw(proxy: Proxy, message: bytes, fds: list[int]) -> bytes:
    ctl = socket.socket(socket.AF_UNIX)
    ctl.settimeout(30)
    ctl.connect(str(proxy.dir / "ctl"))
    ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack(f"{len(fds)}i", *fds))] if fds else []
    ctl.sendmsg([message], ancillary)
    with ctl:
        return ctl.recv(600)


@pytest.fixture
def other_netns() -> Iterator[int]:
    """A process in a network namespace of its own, as the launcher's init; its pid."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "import ctypes,os,sys; ctypes.CDLL(None).unshare(0x40000000 | "
                              "(0x10000000 if os.geteuid() else 0)); print('x', flush=True); sys.stdin.read()"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdout is not None and child.stdout.readline()
    yield child.pid
    child.kill()
    child.wait()


def test_registrations_that_name_no_plan_of_the_engine_or_the_proxys_own_namespace_are_refused(
        proxy: Proxy, tmp_path: Path, other_netns: int) -> None:
    own = os.open("/proc/self/ns/net", os.O_RDONLY)
    mnt = os.open("/proc/self/ns/mnt", os.O_RDONLY)
    other = os.open(f"/proc/{other_netns}/ns/net", os.O_RDONLY)
    plan = proxy.plan(["example.test"])
    forged = tmp_path / "elsewhere" / (os.path.basename(plan))
    forged.parent.mkdir()
    forged.write_bytes(Path(plan).read_bytes())
    tampered = Path(plan).with_name("0" * 16 + ".egress")
    tampered.write_text('{"format":1,"allow":[["*.test","x"]],"deny":[]}')
    try:
        assert _register_raw(proxy, f"ORCHEGRESS1 {plan}\n".encode(), [own]).startswith(b"ERR the proxy's own")
        assert _register_raw(proxy, f"ORCHEGRESS1 {plan}\n".encode(), [mnt]).startswith(b"ERR the descriptor is not a "
                                                                                         b"network namespace")
        assert _register_raw(proxy, f"ORCHEGRESS1 {plan}\n".encode(), []).startswith(b"ERR malformed")
        assert b"outside a workspace" in _register_raw(proxy, f"ORCHEGRESS1 {forged}\n".encode(), [other])
        assert b"does not match its name" in _register_raw(proxy, f"ORCHEGRESS1 {tampered}\n".encode(), [other])
        assert b"no egress plan" in _register_raw(proxy, f"ORCHEGRESS1 {plan[:-23]}{'1' * 16}.egress\n".encode(),
                                                  [other])
        assert _register_raw(proxy, b"HELLO\n", [other]).startswith(b"ERR malformed")
        assert _register_raw(proxy, f"ORCHEGRESS1 {plan}\n".encode(), [other]) == b"OK\n"  # and the real one works
    finally:
        for fd in (own, mnt, other):
            os.close(fd)
    assert "registration refused" in (proxy.dir / "log").read_text()


def test_a_sandboxed_process_cannot_register_a_namespace(proxy: Proxy, upstream: Upstream) -> None:
    """The registration socket answers only processes in the proxy's own network namespace: a command inside a
    sandbox (here: a process in a namespace of its own) that reaches it is refused and logged."""
    plan = proxy.plan([f"127.0.0.1:{upstream.port}"])
    out, err, _ = proxy.run(f"""
        import struct
        ctl = socket.socket(socket.AF_UNIX); ctl.connect({str(proxy.dir / "ctl")!r})
        fd = os.open("/proc/self/ns/net", os.O_RDONLY)
        try:  # the proxy answers (and hangs up) as soon as it has seen who connected
            ctl.sendmsg([b"ORCHEGRESS1 {plan}\\n"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", fd))])
        except BrokenPipeError:
            pass
        print(ctl.recv(200).decode().strip())
        s, h = tunnel("127.0.0.1:{upstream.port}")
        print(h.split("\\r\\n")[0])
    """, None)
    lines = out.split("\n")
    assert lines[0].startswith("ERR registrations are accepted only from outside the sandbox"), err
    assert lines[1].startswith("HTTP/1.1 403")
    assert upstream.accepted == 0
    assert "registration refused: peer pid" in (proxy.dir / "log").read_text()


def test_the_registration_ends_with_its_connection(proxy: Proxy, upstream: Upstream, other_netns: int) -> None:
    plan = proxy.plan([f"127.0.0.1:{upstream.port}"])
    ctl, answer = proxy.register(other_netns, plan)
    assert answer == b"OK\n"
    again, second = proxy.register(other_netns, plan)
    assert second.startswith(b"ERR this network namespace is registered already")
    again.close()
    ctl.close()
    from tests.waiting import wait_until

    # registered again once the first registration's connection is gone
    def fresh() -> bool:
        c, a = proxy.register(other_netns, plan)
        c.close()
        return a == b"OK\n"

    wait_until(fresh, timeout=30, what="the closed registration to be dropped")


def test_no_tunnel_outlives_its_command(tmp_path: Path) -> None:
    """An upstream that stays silent after the client's end (half-closed, never answering) keeps no tunnel open
    once the command's registration ends: the proxy then has nothing in flight and goes idle."""
    import threading

    silent = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def hold() -> None:
        while True:
            try:
                held.append(silent.accept()[0])  # read nothing, answer nothing, never close
            except OSError:
                return

    threading.Thread(target=hold, daemon=True).start()
    proxy = Proxy(tmp_path)
    proxy.start(env={"ORCH_EGRESS_IDLE": "1"})
    try:
        port = silent.getsockname()[1]
        out, err, _ = proxy.run(f"""
            s, h = tunnel("127.0.0.1:{port}")
            s.sendall(b"x"); s.close()
            print(h.split("\\r\\n")[0])
        """, proxy.plan([f"127.0.0.1:{port}"]))
        assert out.startswith("HTTP/1.1 200"), err
        from tests.waiting import wait_until

        assert proxy.proc is not None
        wait_until(lambda: proxy.proc.poll() is not None, timeout=30,  # type: ignore[union-attr]
                   what="the proxy to go idle and exit once the command's tunnel was dropped")
    finally:
        proxy.stop()
        silent.close()
        for conn in held:
            conn.close()


@pytest.fixture
def resolving(tmp_path: Path) -> Iterator[tuple[Proxy, Dns]]:
    """The proxy with a resolver of its own: :class:`Dns` answers it (a private /etc/resolv.conf)."""
    dns = Dns({})
    proxy = Proxy(tmp_path)
    proxy.start(prefix=resolver_prefix(tmp_path, dns))
    yield proxy, dns
    proxy.stop()
    dns.close()


@as_root
def test_names_are_decided_before_anything_is_resolved(resolving: tuple[Proxy, Dns], upstream: Upstream) -> None:
    proxy, dns = resolving
    dns.answers.update({"allowed.example.test": ["127.0.0.1"], "wild.corp.test": ["127.0.0.1"],
                        "private.corp.test": ["10.0.0.1"], "meta.example.test": ["169.254.169.254"]})
    plan = proxy.plan(["allowed.example.test", "*.corp.test", "meta.example.test"])
    out, err, notices = proxy.run(f"""
        for target in ("data-secret.attacker.test:443", "allowed.example.test:{upstream.port}",
                       "wild.corp.test:{upstream.port}", "private.corp.test:443", "meta.example.test:80"):
            s, h = tunnel(target)
            print(h.split("\\r\\n")[0][:40])
    """, plan)
    status = out.split("\n")
    assert status[0].startswith("HTTP/1.1 403"), err
    assert status[1].startswith("HTTP/1.1 200")  # an exactly listed name may resolve to loopback
    assert all(line.startswith("HTTP/1.1 403") for line in status[2:5])
    assert "data-secret.attacker.test" not in dns.asked  # refused before any resolution: DNS carried nothing
    assert {"allowed.example.test", "wild.corp.test", "private.corp.test"} <= set(dns.asked)
    assert any("wild.corp.test resolves to a loopback address" in n for n in notices)
    assert any("resolves to a private address" in n for n in notices)
    assert any("cloud metadata address" in n for n in notices)
    assert upstream.accepted == 1


@as_root
def test_a_name_is_resolved_once_and_the_checked_address_is_dialled(resolving: tuple[Proxy, Dns]) -> None:
    """DNS rebinding: the first answer is a listed address, every later one loopback. The proxy dials what it
    checked; resolving again to dial would reach the loopback listener."""
    proxy, dns = resolving
    target = Upstream("127.0.0.3")
    try:
        loopback = socket.create_server(("127.0.0.1", target.port))
    except OSError:
        pytest.skip("the port is taken on 127.0.0.1")
    loopback.setblocking(False)
    dns.answers["rebind.example.test"] = [["127.0.0.3"], ["127.0.0.1"]]
    plan = proxy.plan(["*.example.test", "127.0.0.3"])
    out, err, _ = proxy.run(f"""
        for _ in range(2):
            s, h = tunnel("rebind.example.test:{target.port}")
            print(h.split("\\r\\n")[0][:12])
            if h.startswith("HTTP/1.1 200"):
                s.sendall(b"x"); s.shutdown(socket.SHUT_WR); print(read_all(s).decode().split()[0])
    """, plan)
    assert out.split("\n")[:3] == ["HTTP/1.1 200", "1", "HTTP/1.1 403"], err
    assert target.accepted == 1
    with pytest.raises(BlockingIOError):
        loopback.accept()
    assert dns.a_queries("rebind.example.test") == 2  # one per connection: none to dial again
    loopback.close()
    target.close()


def test_a_burst_of_half_closed_tunnels_loses_nothing(proxy: Proxy) -> None:
    """Hundreds of tunnels at once, each half-closed by the client before the answer comes: every answer arrives.
    (The relay tasks must stay referenced: a collected task dropped answers mid-relay.)"""
    up = Upstream("127.0.0.2")
    plan = proxy.plan(["127.0.0.2"])
    out, err, _ = proxy.run(f"""
        import threading
        bad = []
        def one(i):
            s, h = tunnel("127.0.0.2:{up.port}")
            s.sendall(b"x" * (i + 1)); s.shutdown(socket.SHUT_WR)
            if read_all(s).split()[:1] != [str(i + 1).encode()]:
                bad.append(i)
        for _ in range(5):
            threads = [threading.Thread(target=one, args=(i,)) for i in range(200)]
            for t in threads: t.start()
            for t in threads: t.join()
        print(len(bad))
    """, plan)
    up.close()
    assert out.strip() == "0", (out, err)


def test_a_request_that_disguises_its_host_is_judged_by_the_host_it_would_reach(proxy: Proxy,
                                                                                upstream: Upstream) -> None:
    """Hostile pass on the proxy: user info, fragments, backslashes and odd spellings in the target."""
    plan = proxy.plan([f"127.0.0.1:{upstream.port}", "allowed.example.test"])
    out, err, notices = proxy.run(f"""
        for request in (b"GET http://127.0.0.1:{upstream.port}@data.attacker.test/ HTTP/1.1\\r\\n\\r\\n",
                        b"GET http://data.attacker.test#@127.0.0.1:{upstream.port}/ HTTP/1.1\\r\\n\\r\\n",
                        b"GET http://allowed.example.test\\\\@data.attacker.test/ HTTP/1.1\\r\\n\\r\\n",
                        b"CONNECT allowed.example.test.data.attacker.test:443 HTTP/1.1\\r\\n\\r\\n",
                        b"CONNECT data.attacker.test%00.allowed.example.test:443 HTTP/1.1\\r\\n\\r\\n",
                        b"CONNECT [::ffff:7f00:1]:{upstream.port} HTTP/1.1\\r\\n\\r\\n"):
            s = connect()
            s.sendall(request)
            print(head(s).split("\\r\\n")[0][:12])
    """, plan)
    assert out.split("\n")[:6] == ["HTTP/1.1 403"] * 3 + ["HTTP/1.1 403", "HTTP/1.1 403", "HTTP/1.1 200"], err
    assert upstream.accepted == 1  # only the last: the same address, listed, in another spelling
