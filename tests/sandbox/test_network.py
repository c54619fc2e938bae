"""The sandbox's network rule (Landlock ABI >= 4): real sockets on 127.0.0.1, real launches, real policies."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.core.errors import ConfigError
from orchestrator.sandbox import landlock, network
from tests.sandbox.conftest import Host, needs_landlock

LAUNCHER = landlock.__file__
needs_net = pytest.mark.skipif(landlock.abi() < 4, reason="TCP rules need Landlock ABI 4")

#: connect to PORT on 127.0.0.1, send a line, print what happened (OK or the errno name)
CLIENT = textwrap.dedent("""\
    import errno, socket, sys
    s = socket.socket()
    s.settimeout(20)
    try:
        s.connect(("127.0.0.1", int(sys.argv[1])))
        s.sendall(b"secret-token\\n")
        print("OK")
    except OSError as e:
        print(errno.errorcode.get(e.errno, e.errno))
""")
BIND = "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print('BOUND')"


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """The "attacker": a listener on 127.0.0.1 (an unprivileged, ephemeral port)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    srv.settimeout(20)
    yield srv
    srv.close()


def run(tmp_path: Path, net: str | None, code: str, *args: str) -> str:
    (tmp_path / "c.py").write_text(code)
    opts = ["--net", net] if net is not None else []
    proc = subprocess.run([sys.executable, "-I", "-S", LAUNCHER, "--orch-sandbox", "-w", "/dev/null", *opts, "--",
                           " ".join([sys.executable, "c.py", *args])], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout.strip()


def received(srv: socket.socket) -> bytes:
    conn, _ = srv.accept()
    with conn:
        return conn.recv(100)


@needs_landlock
@needs_net
def test_default_ports_block_a_local_listener(tmp_path: Path, listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    assert run(tmp_path, network.option(None, None, landlock.abi(), env={}), CLIENT, str(port)) in ("EACCES", "EPERM")


@needs_landlock
@needs_net
def test_a_listed_port_connects(tmp_path: Path, listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    assert run(tmp_path, f"443,{port}", CLIENT, str(port)) == "OK"
    assert received(listener) == b"secret-token\n"


@needs_landlock
@needs_net
def test_deny_refuses_connect_and_bind(tmp_path: Path, listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    assert run(tmp_path, "deny", CLIENT, str(port)) in ("EACCES", "EPERM")
    (tmp_path / "b.py").write_text(BIND)
    proc = subprocess.run([sys.executable, "-I", "-S", LAUNCHER, "--orch-sandbox", "--net", "deny", "--",
                           f"{sys.executable} b.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert "PermissionError" in proc.stderr and "BOUND" not in proc.stdout


@needs_landlock
@needs_net
def test_a_port_list_leaves_bind_free(tmp_path: Path) -> None:
    assert run(tmp_path, "443", BIND) == "BOUND"


@needs_landlock
def test_no_net_option_leaves_tcp_alone(tmp_path: Path, listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    assert run(tmp_path, None, CLIENT, str(port)) == "OK"


def test_malformed_or_unenforceable_net_values_fail_closed() -> None:
    with pytest.raises(landlock.LandlockError):
        landlock.net_rules("22,x", 7)
    with pytest.raises(landlock.LandlockError):
        landlock.net_rules("70000", 7)
    with pytest.raises(landlock.LandlockError):
        landlock.net_rules("deny", 3)  # the kernel cannot hold it: the command must not run open
    assert landlock.net_rules(None, 3) == (0, [])
    assert landlock.net_rules("443,22", 4) == (landlock.NET_CONNECT_TCP, [22, 443])


def test_option_follows_policy_intent_and_proxy() -> None:
    class Sb:
        network: object = "deny"

    class Pol:
        sandbox = Sb()

    class Intent:
        extra: dict[str, object] = {}

    assert network.option(Pol(), Intent(), 7, env={}) == "deny"
    Intent.extra = {"network": "allow"}
    assert network.option(Pol(), Intent(), 7, env={}) is None
    Intent.extra = {"network": [8080]}
    assert network.option(Pol(), Intent(), 7, env={"HTTPS_PROXY": "http://proxy:3128"}) == "3128,8080"
    assert network.option(Pol(), Intent(), 3, env={}) is None  # ABI < 4: nothing to pass (doctor says so)
    assert network.option(None, None, 7, env={}) == "22,53,80,443"


@pytest.mark.parametrize("value", ["open", [0], [70000], True, {"port": 1}])
def test_policy_and_intent_values_are_validated(tmp_path: Path, value: object) -> None:
    from orchestrator.config import intents
    from orchestrator.config import policy
    from tests.conftest import make_workspace

    ws = make_workspace(tmp_path / "w")
    (ws / ".orchestration" / "policy.yaml").write_text(f"version: 1\nsandbox:\n  network: {value!r}\n")
    with pytest.raises(ConfigError):
        policy.load(ws / ".orchestration" / "policy.yaml")
    (ws / ".orchestration" / "active_intents.yaml").write_text(
        f"active_intents:\n  - id: A\n    name: a\n    status: IN_PROGRESS\n    network: {value!r}\n")
    with pytest.raises(ConfigError):
        intents.load(ws / ".orchestration" / "active_intents.yaml")


@needs_landlock
def test_a_wrapped_command_meets_the_intent_network_rule(sws: Path, listener: socket.socket) -> None:
    """The default: a network namespace with the egress proxy (the listener on the host is out of reach, whatever
    ports a list names); an intent's ``network: allow`` leaves the network alone, as before."""
    port = listener.getsockname()[1]
    (sws / "src" / "c.py").write_text(CLIENT)
    host = Host(sws)
    blocked = host.run(f"python3 src/c.py {port}")
    net = blocked.verdict.sandbox["network"]
    assert net["namespace"] is True and len(net["egress"]) == 16 and net["fallback_ports"] == "22,53,80,443"
    assert blocked.stdout.strip() in ("ECONNREFUSED", "EACCES", "EPERM"), blocked.stderr
    text = (sws / ".orchestration" / "active_intents.yaml").read_text()
    scope = 'owned_scope: ["src/**", "tests/**", "build/**", "Makefile"]'
    for value, expected in ((f"[{port}]", ("ECONNREFUSED",)), ("allow", ("OK",))):
        (sws / ".orchestration" / "active_intents.yaml").write_text(text.replace(scope, f"{scope}\n    network: {value}"))
        proc = Host(sws).run(f"python3 src/c.py {port}")
        assert proc.stdout.strip() in expected, (value, proc.stdout, proc.stderr)
    assert received(listener) == b"secret-token\n"  # only the run with `network: allow` reached it


def test_the_policy_shapes_and_how_an_intent_changes_them() -> None:
    class Sb:
        network: object = {"allow": ["*.corp.example"], "deny": ["bad.corp.example"], "ports": [443]}

    class Pol:
        sandbox = Sb()

    class Intent:
        id = "INT-9"
        extra: dict[str, object] = {"network": {"allow": ["api.example.com:443"], "configured": False}}

    value = network.effective(Pol(), Intent())
    assert isinstance(value, dict)
    assert value["allow"] == [("*.corp.example", "sandbox.network.allow"),
                              ("api.example.com:443", "intent INT-9 network.allow")]
    assert value["deny"] == [("bad.corp.example", "sandbox.network.deny")]
    assert value["configured"] is False and value["ports"] == [443]
    assert network.normalize([22, 443]) == {"allow": [], "deny": [], "configured": True, "ports": [22, 443]}
    assert network.normalize(None)["ports"] == [22, 53, 80, 443]  # type: ignore[index]
    Intent.extra = {"network": "deny"}
    assert network.effective(Pol(), Intent()) == "deny"
    Intent.extra = {"network": {"allow": ["*"]}}  # slipped past validation: fails closed
    assert network.effective(Pol(), Intent()) == "deny"
    for bad in ({"allow": "x.com"}, {"allow": ["*.com"]}, {"hosts": []}, {"ports": [0]}, {"configured": 1}):
        with pytest.raises(ValueError):
            network.normalize(bad)


def test_an_opened_abstract_socket_keeps_the_hosts_network_under_the_port_rules(tmp_path: Path) -> None:
    """``sandbox.sockets.allow: ['@name']``: a network namespace has abstract sockets of its own, so the command
    stays in the host's (the opened name is reachable) and the port rules apply; explain and the summary say so."""
    from orchestrator.config.policy import load

    (tmp_path / ".orchestration" / "run").mkdir(parents=True)
    (tmp_path / ".orchestration" / "policy.yaml").write_text("version: 1\nsandbox:\n  sockets:\n    allow: ['@bus']\n")
    policy = load(tmp_path / ".orchestration" / "policy.yaml")
    assert network.host_abstract(policy)
    opts = network.launcher_options(policy, None, 7, str(tmp_path), str(tmp_path / ".orchestration" / "run"), env={})
    assert opts == ["--net", "22,53,80,443"]
    line = network.explain(network.summary(opts), str(tmp_path / ".orchestration" / "run"))
    assert "host's network" in line and "22,53,80,443" in line and "abstract socket" in line
    (tmp_path / ".orchestration" / "policy.yaml").write_text("version: 1\nsandbox:\n  sockets:\n    allow: ['/x']\n")
    assert not network.host_abstract(load(tmp_path / ".orchestration" / "policy.yaml"))
