"""What ``orch serve`` spends on one hook request, without the client process around it.

Two figures per event (an allowed ``Write`` of a new file, an allowed ``Edit`` whose pre-image is written for the
post-hook process, an allowed ``Read``):
- ``Daemon.handle_request`` timed in this process: the daemon's whole evaluation of one framed request (adapter,
  ``Governor.pre``, the pre-image, the framed answer);
- one request/answer on the Unix socket of a real ``orch serve`` (what the stdlib hook client waits for), which
  includes the daemon's check of its peer (issue 28), also timed alone.

The governance and session files are aged past the racy-key window first (orchestrator.core.fsutil.RACY_NS), as they
are in real use. The whole hook process (interpreter start, client imports, this) is bench/bench_hook.py.

Usage: PYTHONPATH=. python bench/bench_daemon.py [-n 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from _util import governed, report  # noqa: E402

from orchestrator import hookclient
from orchestrator.daemon import server as daemon  # noqa: E402
from orchestrator.core.fsutil import RACY_NS  # noqa: E402
from orchestrator.engine.pipeline import Governor  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=2000, help="requests per measurement")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="orch-bench-daemon-"))
    root = governed(tmp / "repo")
    (root / "src" / "a" / "b").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x = 1\n" * 200)
    Governor(root).select_intent("INT-1", "s")
    for rel in (".orchestration/active_intents.yaml", ".orchestration/policy.yaml", ".orchestration/.intentignore",
                ".orchestration/run/sessions/s.json"):
        if (root / rel).exists():
            os.utime(root / rel, ns=(0, 0))
    time.sleep(RACY_NS / 1e9 + 0.2)  # a benchmark, not a test: let the fresh stat keys age, as in real use

    def event(tool: str, tool_input: dict) -> bytes:
        raw = json.dumps({"session_id": "s", "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": tool,
                          "tool_input": tool_input, "tool_use_id": "toolu_bench"}).encode()
        return hookclient.encode_request("claude-code", {}, raw)

    events = {
        "allow: Write, new file": event("Write", {"file_path": str(root / "src/a/b/new.py"), "content": "x"}),
        "allow: Edit, existing file": event("Edit", {"file_path": str(root / "src/app.py"), "old_string": "x = 1",
                                                     "new_string": "x = 2"}),
        "allow: Read": event("Read", {"file_path": str(root / "src/app.py")}),
    }
    print(f"orch serve, one hook request (n={args.n})")
    d = daemon.Daemon(root)
    for name, request in events.items():
        for _ in range(200):
            d.handle_request(request)
        samples = []
        for _ in range(args.n):
            t0 = time.perf_counter()
            d.handle_request(request)
            samples.append(time.perf_counter() - t0)
        report(f"handle_request  {name}", samples)
    peer_check(args.n)
    env = {**os.environ, "PYTHONPATH": str(REPO), "ORCH_DAEMON_IDLE": "60"}
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "serve", "--root", str(root)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sock = str(daemon.socket_path(root))
    deadline = time.monotonic() + 20
    while not daemon.is_alive(sock) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        for name, request in events.items():
            for _ in range(50):
                hookclient._ask_daemon(sock, request)
            samples = []
            for _ in range(max(1, args.n // 4)):
                t0 = time.perf_counter()
                answer = hookclient._ask_daemon(sock, request)
                samples.append(time.perf_counter() - t0)
                assert answer is not None, "no answer from orch serve"
            report(f"socket round trip  {name}", samples)
    finally:
        daemon.stop(root)
        proc.wait(timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def peer_check(n: int) -> None:
    """What authenticating one connection costs the daemon (orchestrator/daemon/peer.py): ``SO_PEERCRED`` and the pidfd,
    the namespaces, ``no_new_privs``, the walk up this process's real ancestry, the liveness check."""
    try:
        from orchestrator.daemon import peer
    except ImportError:  # a checkout from before the peer checks (a paired run against main)
        return
    import socket

    me = peer.Self()
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    samples = []
    for i in range(n + 200):
        t0 = time.perf_counter()
        who = peer.of(a)
        why = peer.refusal(who, me)
        who.close()
        if i >= 200:
            samples.append(time.perf_counter() - t0)
        assert why is None, why
    a.close()
    b.close()
    report("peer check (SO_PEERCRED, /proc, ancestry)", samples)


if __name__ == "__main__":
    raise SystemExit(main())
