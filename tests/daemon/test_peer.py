"""orchestrator/daemon/peer.py, rule by rule: who the daemon may serve. A real listening socket here, a real process at
the other end of each connection, made to differ from this one in exactly one way (the attack tests in
tests/test_daemon_attacks.py run the same rules against the real sandbox launcher)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.daemon import peer

#: connects, says so, and holds the connection until told to exit
CONNECT = """\
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
print("connected", flush=True)
sys.stdin.readline()
"""
NO_NEW_PRIVS = "import ctypes; ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)\n" + CONNECT  # PR_SET_NO_NEW_PRIVS


@pytest.fixture
def server() -> Iterator[tuple[socket.socket, str]]:
    where = tempfile.mkdtemp(prefix="orch-peer-")  # not under pytest's 0700 tmp: another user must reach it
    os.chmod(where, 0o711)
    path = os.path.join(where, "s.sock")
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    os.chmod(path, 0o777)  # so that another user can reach it: the rule under test is the daemon's, not the mode
    srv.listen()
    srv.settimeout(60)
    yield srv, path
    srv.close()
    shutil.rmtree(where)


def judge(server: tuple[socket.socket, str], argv: list[str], me: peer.Self | None = None,
          **popen) -> tuple[str | None, peer.Peer]:
    """Run ``argv`` (which connects), and say what the rules make of it (as a daemon ``me``, by default this
    process) while it holds the connection."""
    srv, _ = server
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, **popen)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "connected"
        conn, _ = srv.accept()
        who = peer.of(conn)
        why = peer.refusal(who, me or peer.Self())
        assert who.pid > 0
        return why, who
    finally:
        proc.communicate("\n", timeout=60)


def script(code: str, path: str) -> list[str]:
    return [sys.executable, "-c", code, path]


def test_a_plain_child_of_this_process_is_served(server) -> None:
    why, who = judge(server, script(CONNECT, server[1]))
    assert why is None and who.uid == os.geteuid()
    if who.pidfd is not None:
        assert os.readlink(f"/proc/self/fd/{who.pidfd}") == "anon_inode:[pidfd]"


def test_no_new_privs_is_refused(server) -> None:
    why, _ = judge(server, script(NO_NEW_PRIVS, server[1]))
    assert why is not None and "no_new_privs" in why


def test_the_launchers_environment_mark_is_refused_where_no_new_privs_tells_nothing(server) -> None:
    """A daemon that runs with no_new_privs itself (some container runtimes set it for everything) cannot tell a
    sandboxed peer by that flag: the launcher's mark in an ancestor's environment still does."""
    marked = {**os.environ, "ORCH_SANDBOXED": "1"}
    contained = peer.Self(isolates=lambda: True)  # sandboxed commands get their own mount namespace here
    contained.no_new_privs = True
    why, _ = judge(server, script(CONNECT, server[1]), contained, env=marked)
    assert why is not None and "ORCH_SANDBOXED" in why
    why, _ = judge(server, script(NO_NEW_PRIVS, server[1]), contained)
    assert why is None  # the flag alone, shared with the daemon, refuses nothing


def test_where_no_new_privs_tells_nothing_the_daemon_serves_only_if_the_sandbox_has_its_own_namespace(server) -> None:
    """With no_new_privs on the daemon too and no namespace of the sandbox's own, the ancestry and the environment
    are all that is left, and a sandboxed command can shed both (tests/daemon/test_attacks.py): nobody is served.
    The question is asked once."""
    asked: list[bool] = []

    def isolates(answer: bool) -> peer.Self:
        me = peer.Self(isolates=lambda: asked.append(answer) or answer)
        me.no_new_privs = True
        return me

    me = isolates(False)
    why, _ = judge(server, script(NO_NEW_PRIVS, server[1]), me)
    assert why is not None and "no mount namespace" in why
    why, _ = judge(server, script(NO_NEW_PRIVS, server[1]), me)
    assert why is not None and asked == [False]
    why, _ = judge(server, script(NO_NEW_PRIVS, server[1]), isolates(True))
    assert why is None
    broken = peer.Self(isolates=lambda: 1 / 0)  # a probe that fails: cannot tell, refused
    broken.no_new_privs = True
    why, _ = judge(server, script(NO_NEW_PRIVS, server[1]), broken)
    assert why is not None and "no mount namespace" in why


def test_a_descendant_of_a_process_named_like_the_launcher_is_refused(server, tmp_path: Path) -> None:
    launcher = tmp_path / "orch-sandbox"
    launcher.symlink_to(sys.executable)  # the kernel names the process after the path it was started from
    parent = f"import subprocess, sys\nsubprocess.run([{sys.executable!r}, '-c', {CONNECT!r}, sys.argv[1]])\n"
    why, _ = judge(server, [str(launcher), "-c", parent, server[1]])
    assert why is not None and "sandbox launcher" in why and "orch-sandbox" in why


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root and unshare(1)")
def test_another_mount_namespace_is_refused(server) -> None:
    why, _ = judge(server, ["unshare", "--mount", *script(CONNECT, server[1])])
    assert why is not None and "mnt namespace" in why


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv(1)")
def test_another_user_is_refused(server) -> None:
    argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *script(CONNECT, server[1])]
    why, who = judge(server, argv)
    assert who.uid == 65534 and why is not None and "another user" in why


def test_a_peer_that_exited_is_not_alive(server) -> None:
    srv, path = server
    proc = subprocess.run(script("import socket, sys\nsocket.socket(socket.AF_UNIX).connect(sys.argv[1])\n", path),
                          timeout=60)
    assert proc.returncode == 0
    conn, _ = srv.accept()
    who = peer.of(conn)
    assert not peer.alive(who)
    assert peer.refusal(who, peer.Self()) is not None  # it cannot be checked any more: refused
    who.close()
    assert not peer.alive(who)  # without a pidfd, by its start time: gone (or another process now)


def test_without_a_pidfd_a_live_peer_is_alive_by_its_start_time(server) -> None:
    srv, path = server
    proc = subprocess.Popen(script(CONNECT, path), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "connected"
        conn, _ = srv.accept()
        who = peer.of(conn)
        who.close()
        assert who.pidfd is None and peer.alive(who)
        assert peer.alive(peer.Peer(who.pid, who.uid, who.gid, None, (who.start or 0) + 1)) is False
    finally:
        proc.communicate("\n", timeout=60)
