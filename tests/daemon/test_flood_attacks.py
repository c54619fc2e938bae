"""redteam3: a sandboxed script that reaches ``orch serve``'s socket can no longer grow the daemon or its log.

Before: a refused peer's frame was still read whole (up to 16 MiB, for 5 s, one thread per connection), so a script
opening connections in a loop grew the daemon by 16 MiB each (40 → 665 MB peak) until the kernel's OOM killer chose
a victim — possibly the agent's own hook, which a host treats as a failed, i.e. non-blocking, hook. And every
connection added a line to ``run/refusals.jsonl``, whose rotation a flood used to push the real refusals out of.

The attacker runs as a sandboxed command the hook allowed (the real launcher), against a real daemon, through a
second name of its socket (tests/daemon/test_attacks.py: the daemon must hold even where a command reaches it).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from orchestrator.daemon import server as daemon
from tests.daemon.test_attacks import needs_landlock, ready, refusals, sandboxed, second_name, ws  # noqa: F401
from tests.waiting import wait_until

FLOOD = r'''
import socket, sys, threading
sock_path, count = sys.argv[1], int(sys.argv[2])
blob = b"ORCH1 claude-code\n\n" + b"x" * (16 * 1024 * 1024 - 64)
def one():
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(sock_path)
        s.sendall(blob)
        s.shutdown(socket.SHUT_WR)
        s.recv(100)
    except OSError:
        pass
threads = [threading.Thread(target=one) for _ in range(count)]
[t.start() for t in threads]
[t.join() for t in threads]
print("flooded", count, flush=True)
'''
CONNECTIONS = 24


def peak_mib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    raise AssertionError("no VmHWM")


@needs_landlock
def test_a_flood_of_refused_connections_neither_grows_the_daemon_nor_floods_its_log(ws: Path) -> None:  # noqa: F811
    (ws / "src" / "flood.py").write_text(FLOOD)
    ready(ws)
    pid = int((daemon.run_dir(ws) / daemon.PID_NAME).read_text())
    before = peak_mib(pid)
    command = sandboxed(ws, f"python3 src/flood.py {second_name(ws)} {CONNECTIONS}")
    done = subprocess.run(["/bin/bash", "-c", command], cwd=ws, capture_output=True, text=True, timeout=300)
    assert "flooded" in done.stdout, done.stdout + done.stderr
    grown = peak_mib(pid) - before
    assert grown < 100, f"the daemon grew by {grown} MiB for {CONNECTIONS} refused connections"
    logged = wait_until(lambda: refusals(ws) if len(refusals(ws)) >= daemon.LOG_BURST else None,
                        what="the daemon to log the refused peers")
    assert len(logged) <= daemon.LOG_BURST
    assert all(e["type"] == "peer-refused" for e in logged)
    # the ones not logged one by one are counted, in one line, once the window is over
    summary = wait_until(lambda: [e for e in refusals(ws) if e["type"] == "refusals-suppressed"],
                         what="the count of the refusals not logged", timeout=daemon.LOG_WINDOW + 60)
    assert summary[0]["count"] == CONNECTIONS - daemon.LOG_BURST
