"""The hook daemon and its stdlib-only client: same answers as in-process, one daemon per workspace, stale sockets,
reloads, and fallbacks that never allow by default."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from orchestrator import hookclient
from orchestrator.daemon import server as daemon
from orchestrator.config import workspace
from orchestrator.adapters.base import run_hook
from tests.waiting import TIMEOUT, wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]
CLIENT = REPO_ROOT / "orchestrator" / "hookclient.py"
ENV = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "ORCH_DAEMON_IDLE": "30"}
INTENTS = """\
active_intents:
  - id: INT-1
    name: app
    status: IN_PROGRESS
    owned_scope: ["src/**"]
  - id: INT-2
    name: docs
    status: PENDING
    owned_scope: ["docs/**"]
"""


@pytest.fixture
def ws(tmp_path: Path):
    root = tmp_path / "ws"
    root.mkdir()
    workspace.init(root)
    (root / ".orchestration/active_intents.yaml").write_text(INTENTS)
    root = root.resolve()
    yield root
    daemon.stop(root)


def event(root: Path, tool: str = "Write", **tool_input) -> dict:
    return {"session_id": "s1", "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": tool,
            "tool_input": tool_input or {"file_path": str(root / "src/a.py"), "content": "x"},
            "tool_use_id": "t1"}


def start_daemon(root: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "serve", "--root", str(root)], env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_until(lambda: daemon.is_alive(daemon.socket_path(root)) or proc.poll() is not None,
               what="the daemon to answer on its socket (or exit)")
    return proc


def client(root: Path, ev: dict | str, **env: str) -> subprocess.CompletedProcess:
    raw = ev if isinstance(ev, str) else json.dumps(ev)
    return subprocess.run([sys.executable, "-S", str(CLIENT), "claude-code"], input=raw, capture_output=True,
                          text=True, cwd=root, env={**ENV, **env}, timeout=60)


def ask(root: Path, ev: dict, **env: str):
    request = hookclient.encode_request("claude-code", env, json.dumps(ev).encode())
    return hookclient._ask_daemon(str(daemon.socket_path(root)), request)


def test_daemon_answers_like_in_process(ws: Path) -> None:
    start_daemon(ws)
    for ev in (event(ws), event(ws, "Read", file_path=str(ws / "src/a.py"))):
        code, out, err = ask(ws, ev)
        expected = run_hook("claude-code", json.dumps(ev))
        assert (code, out.decode(), err.decode()) == (expected.exit_code, expected.stdout, expected.stderr)
    assert json.loads(ask(ws, event(ws))[1])["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_forwarded_approval_channel_is_per_request(ws: Path) -> None:
    start_daemon(ws)
    select = {**event(ws, "mcp__orchestrator__select_active_intent", intent_id="INT-1")}
    assert ask(ws, select)[0] == 0
    rm = event(ws, "Bash", command="rm -rf src")
    ask_answer = json.loads(ask(ws, rm, ORCH_APPROVAL_CHANNEL="agent-ask")[1])
    deny_answer = json.loads(ask(ws, rm, ORCH_APPROVAL_CHANNEL="deny")[1])
    assert ask_answer["hookSpecificOutput"]["permissionDecision"] == "ask"
    assert deny_answer["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_one_daemon_per_workspace_under_concurrent_starts(ws: Path) -> None:
    procs = [subprocess.Popen([sys.executable, "-m", "orchestrator", "serve", "--root", str(ws)], env=ENV,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(3)]
    wait_until(lambda: sum(p.poll() is not None for p in procs) == 2, what="two of three daemons to give way")
    survivors = [p for p in procs if p.poll() is None]
    assert len(survivors) == 1 and all(p.returncode == 0 for p in procs if p not in survivors)
    wait_until(lambda: daemon.is_alive(daemon.socket_path(ws)), what="the surviving daemon's socket")
    assert int((ws / ".orchestration/run/orch.pid").read_text()) == survivors[0].pid


def test_stale_socket_is_replaced(ws: Path) -> None:
    path = daemon.socket_path(ws)
    path.parent.mkdir(parents=True, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # the file stays, nobody listens: what a crashed daemon leaves behind
    assert path.exists() and not daemon.is_alive(path)
    start_daemon(ws)
    assert daemon.is_alive(path)
    assert ask(ws, event(ws))[0] == 0


def test_daemon_reloads_intents_when_the_file_changes(ws: Path) -> None:
    start_daemon(ws)
    select2 = event(ws, "mcp__orchestrator__select_active_intent", intent_id="INT-2")
    assert json.loads(ask(ws, select2)[1])["hookSpecificOutput"]["permissionDecision"] == "deny"
    # No wait for a new mtime tick: the new text is longer, and the intents cache is keyed by (mtime, size, ctime,
    # inode) (orchestrator/config/confcache.py), so a rewrite within the same clock tick is still seen as a change.
    (ws / ".orchestration/active_intents.yaml").write_text(INTENTS.replace("PENDING", "IN_PROGRESS  "))
    assert ask(ws, select2) == (0, b"", b"")


def test_stop_and_bad_requests(ws: Path) -> None:
    proc = start_daemon(ws)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(daemon.socket_path(ws)))
    sock.sendall(b"HELLO\n\n{}")
    sock.shutdown(socket.SHUT_WR)
    answer = hookclient.decode_answer(sock.recv(65536))
    sock.close()
    assert answer is not None and answer[0] == 2 and b"bad request" in answer[2]
    assert daemon.stop(ws, timeout=TIMEOUT)
    proc.wait(timeout=TIMEOUT)
    assert not daemon.socket_path(ws).exists()


def test_client_without_daemon_evaluates_in_process_and_starts_one(ws: Path) -> None:
    proc = client(ws, event(ws))
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    wait_until(lambda: daemon.is_alive(daemon.socket_path(ws)), what="the daemon the client started")
    again = client(ws, event(ws))
    assert again.returncode == 0 and again.stdout == proc.stdout


def test_client_no_daemon_flag_and_failures_block(ws: Path, tmp_path: Path) -> None:
    proc = client(ws, event(ws), ORCH_NO_DAEMON="1")
    assert proc.returncode == 0 and "deny" in proc.stdout
    # no start was even attempted: the client stamps run/orch.spawn before it starts a daemon (hookclient._start_daemon)
    assert not (ws / ".orchestration/run/orch.spawn").exists()
    assert not daemon.socket_path(ws).exists()
    bad = client(ws, "garbage", ORCH_NO_DAEMON="1")
    assert bad.returncode == 2 and "malformed" in bad.stderr
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    lost = subprocess.run([sys.executable, "-S", str(CLIENT), "claude-code"], input=json.dumps(event(nowhere)),
                          capture_output=True, text=True, cwd=nowhere,
                          env={k: v for k, v in ENV.items() if k not in ("CLAUDE_PROJECT_DIR", "ORCH_ROOT")})
    assert lost.returncode == 2 and "no .orchestration/ workspace" in lost.stderr


@pytest.mark.parametrize("behaviour", ["garbage", "hang"])
def test_client_falls_back_when_the_daemon_misbehaves(ws: Path, behaviour: str) -> None:
    """A daemon that answers junk or never answers must not turn into an allow: the client evaluates itself, or
    blocks once its deadline has passed."""
    path = daemon.socket_path(ws)
    path.parent.mkdir(parents=True, exist_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(4)
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            if behaviour == "garbage":
                conn.sendall(b"0 0 0\nallow")  # lengths do not match: rejected
                conn.close()
            else:
                stop.wait(2)
                conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        proc = client(ws, event(ws), ORCH_NO_DAEMON="1", ORCH_HOOK_TIMEOUT="0.5")
    finally:
        stop.set()
        thread.join()
        server.close()
        path.unlink(missing_ok=True)
    if behaviour == "hang":
        # the client's deadline (ORCH_HOOK_TIMEOUT) covers the daemon's answer and any evaluation after it: it
        # answers "blocked" itself, before a host's hook timeout could run the call without it (redteam3)
        assert proc.returncode == 2 and "did not finish within 0.5 s" in proc.stderr, proc.stderr
        return
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_daemon_exits_when_its_workspace_is_deleted(tmp_path: Path) -> None:
    root = tmp_path / "gone"
    root.mkdir()
    workspace.init(root)
    proc = start_daemon(root)
    import shutil

    shutil.rmtree(root / ".orchestration")
    proc.wait(timeout=TIMEOUT)
    assert proc.returncode == 0


def test_client_hot_path_imports_neither_json_nor_the_engine(ws: Path) -> None:
    """Structural guard of the fast path (not a timing): with a daemon up, the client imports no json, no socket
    wrapper and nothing of orchestrator; the answer comes from the daemon."""
    start_daemon(ws)
    proc = subprocess.run([sys.executable, "-S", "-X", "importtime", str(CLIENT), "claude-code"],
                          input=json.dumps(event(ws)), capture_output=True, text=True, cwd=ws, env=ENV, timeout=60)
    assert proc.returncode == 0 and "deny" in proc.stdout
    modules = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time")}
    assert "_socket" in modules
    assert not {m for m in modules if m.split(".")[0] in ("json", "socket", "orchestrator", "site", "re", "enum")}


def test_daemon_exits_when_orchestrator_code_changes(ws: Path) -> None:
    """In-process: a daemon whose recorded code stamp no longer matches the package stops by itself."""
    d = daemon.Daemon(ws, idle_timeout=60)
    assert d.acquire()
    d.bind()
    d._code = {"pretend": 0}  # as if a module had changed since start
    thread = threading.Thread(target=d.serve_forever, daemon=True)
    thread.start()
    thread.join(timeout=TIMEOUT)
    assert not thread.is_alive()
    assert not daemon.socket_path(ws).exists()


def test_client_does_not_spawn_a_daemon_per_call(ws: Path) -> None:
    """Within the back-off window after a start attempt, further calls evaluate in-process without spawning."""
    marker = ws / ".orchestration/run/orch.spawn"
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.touch()
    # A start was just attempted. Dated a minute ahead, so the 3 s window cannot lapse while a loaded machine starts
    # the client (the client compares the marker's age with hookclient.SPAWN_BACKOFF).
    attempted = time_ns_ahead(marker, seconds=60)
    proc = client(ws, event(ws))
    assert proc.returncode == 0 and "deny" in proc.stdout
    # no new attempt: the client re-stamps the marker before every start, and it is untouched
    assert marker.stat().st_mtime_ns == attempted
    assert not daemon.socket_path(ws).exists()


def time_ns_ahead(path: Path, *, seconds: int) -> int:
    """Set ``path``'s mtime ``seconds`` after its current one; returns the new mtime in ns."""
    st = path.stat()
    mtime = st.st_mtime_ns + seconds * 1_000_000_000
    os.utime(path, ns=(st.st_atime_ns, mtime))
    return mtime
