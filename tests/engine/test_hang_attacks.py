"""redteam3: a sandboxed command must not be able to make a hook hang — a host whose hook times out runs the call
without it (Claude Code's default ``onFailure: continue``, Copilot CLI, Qwen Code): for a shell command, unwrapped.

The attack, as found: a command the hook allowed (``python3 src/m.py``: runs-code, nobody asked) replaces a file
the session has read with a FIFO. The next Bash call that names the file hung in the stale check (a plain ``open``
of the FIFO waits for a writer); the hook client waited for the daemon, then evaluated in-process with no deadline,
and Claude Code, after its 600 s hook timeout, ran the original command outside the sandbox.

Each test runs the installed hook client (``orchestrator/hookclient.py``, a real process, as the hosts run it) on
events of a real workspace, and the attacker's commands as the hook allowed them (wrapped, through the launcher).
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from orchestrator.adapters.base import run_hook
from orchestrator.sandbox import landlock, unwrap
from tests.conftest import make_workspace
from tests.e2e import orch_support

REPO_ROOT = Path(__file__).resolve().parents[2]
CLIENT = REPO_ROOT / "orchestrator" / "hookclient.py"
SESSION = "5b0c3f0e-2a1d-4c7e-9f10-3e2d1c0b9a87"
README = "# project\n"
#: the attacker's helper: put a FIFO where a file of its scope was
PLANT = "import os, sys\nos.unlink(sys.argv[1])\nos.mkfifo(sys.argv[1])\n"
PAYLOAD = "python3 -c \"open('README.md', 'w').write('pwned')\""
needs_landlock = pytest.mark.skipif(landlock.abi() < 1, reason="this kernel has no Landlock")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path / "project", orch_support.INTENTS, git=True).resolve()
    (root / "README.md").write_text(README)
    (root / "src" / "plant.py").write_text(PLANT)
    hook(root, {"hook_event_name": "PreToolUse", "tool_use_id": "toolu_sel", "tool_input": {"intent_id": "INT-1"},
                "tool_name": "mcp__orchestrator__select_active_intent"})
    return root


def hook(root: Path, event: dict[str, Any]) -> Any:
    """The host's hook call, in-process (set-up steps whose answer is not under test)."""
    event = {"cwd": str(root), "transcript_path": None, "session_id": SESSION, **event}
    return run_hook("claude-code", json.dumps(event), env={"ORCH_ROOT": str(root), "ORCH_APPROVAL_CHANNEL": "deny"})


def client(root: Path, event: dict[str, Any], *, timeout: float = 60, **env: str) -> subprocess.CompletedProcess:
    """The installed hook client, a process of its own (no daemon: it evaluates in-process)."""
    event = {"cwd": str(root), "transcript_path": None, "session_id": SESSION, **event}
    return subprocess.run([sys.executable, "-S", str(CLIENT), "claude-code"], input=json.dumps(event),
                          capture_output=True, text=True, cwd=root, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "ORCH_NO_DAEMON": "1",
                               "ORCH_APPROVAL_CHANNEL": "deny", **env})


def read(root: Path, rel: str) -> None:
    """The agent reads ``rel`` (the session's read stamp: the stale check compares the file with it)."""
    inp = {"file_path": str(root / rel)}
    hook(root, {"hook_event_name": "PreToolUse", "tool_use_id": "toolu_read", "tool_name": "Read", "tool_input": inp})
    hook(root, {"hook_event_name": "PostToolUse", "tool_use_id": "toolu_read", "tool_name": "Read", "tool_input": inp,
                "tool_response": {"type": "text", "file": {"filePath": inp["file_path"], "content": ""}}})


def sandboxed(root: Path, command: str) -> subprocess.CompletedProcess:
    """``command`` as the hook allows it (wrapped), run by bash as Claude Code runs it."""
    out = json.loads(hook(root, {"hook_event_name": "PreToolUse", "tool_use_id": "toolu_plant", "tool_name": "Bash",
                                 "tool_input": {"command": command}}).stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "allow", out
    assert unwrap(out["updatedInput"]["command"]) == command
    return subprocess.run(["/bin/bash", "-c", out["updatedInput"]["command"]], cwd=root, capture_output=True,
                          text=True, timeout=60)


def bash_event(command: str) -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "tool_use_id": "toolu_next", "tool_name": "Bash",
            "tool_input": {"command": command, "description": "x"}}


def answer_of(done: subprocess.CompletedProcess) -> dict[str, Any]:
    assert done.returncode in (0, 2), done.stderr
    return json.loads(done.stdout)["hookSpecificOutput"] if done.stdout else {"permissionDecision": "deny"}


@needs_landlock
def test_a_fifo_put_where_a_read_file_was_does_not_hang_the_stale_check(ws: Path) -> None:
    read(ws, "src/app.py")
    done = sandboxed(ws, "python3 src/plant.py src/app.py")
    assert done.returncode == 0, done.stderr
    assert not (ws / "src" / "app.py").is_file()  # a FIFO now
    start = time.monotonic()
    answer = answer_of(client(ws, bash_event(f"{PAYLOAD}; echo x > src/app.py")))
    assert time.monotonic() - start < 30
    assert answer["permissionDecision"] == "deny" and "stale-file" in answer["permissionDecisionReason"]


@needs_landlock
@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_a_fifo_in_scope_does_not_hang_the_file_tools_capture(ws: Path, tool: str) -> None:
    done = sandboxed(ws, "python3 src/plant.py src/app.py")
    assert done.returncode == 0, done.stderr
    inp = {"file_path": str(ws / "src" / "app.py"), "content": "x = 2\n"} if tool == "Write" else \
        {"file_path": str(ws / "src" / "app.py"), "old_string": "x = 1", "new_string": "x = 2"}
    done = client(ws, {"hook_event_name": "PreToolUse", "tool_use_id": "toolu_w", "tool_name": tool,
                       "tool_input": inp})
    answer_of(done)  # answered (either way), not hung


def test_a_sparse_file_in_scope_is_hashed_not_read_whole(ws: Path) -> None:
    """A file far larger than the hook's memory (made in a millisecond: ``truncate -s``) is hashed in chunks: the
    hook answers instead of dying (a hook killed by the kernel's OOM killer exits 137, which a host ignores)."""
    big = ws / "src" / "big.py"
    with open(big, "wb") as fh:
        fh.truncate(3 << 30)
    read(ws, "src/big.py")  # the read stamp: the stale check hashes the file again
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "
    event = {"cwd": str(ws), "transcript_path": None, "session_id": SESSION, "hook_event_name": "PreToolUse",
             "tool_use_id": "toolu_big", "tool_name": "Write",
             "tool_input": {"file_path": str(big), "content": "x = 1\n"}}
    done = subprocess.run([sys.executable, "-c", limit + f"import runpy, sys; sys.argv = ['hookclient', 'claude-code']; "
                           f"runpy.run_path({str(CLIENT)!r}, run_name='__main__')"],
                          input=json.dumps(event), capture_output=True, text=True, cwd=ws, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "ORCH_NO_DAEMON": "1"})
    assert done.returncode == 0, done.stderr
    assert "MemoryError" not in done.stdout + done.stderr
    assert done.stdout == ""  # allowed (a file tool's allow prints nothing)


def test_whatever_hangs_the_hook_client_answers_blocked_before_the_hosts_timeout(ws: Path) -> None:
    """The class: any wait the evaluation cannot finish (here the write leases' lock, held by another process)
    ends in the client's own "blocked" within ``ORCH_HOOK_TIMEOUT``, never in the host's timeout."""
    lock = ws / ".orchestration" / "run" / "leases" / ".lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        start = time.monotonic()
        done = client(ws, bash_event(f"{PAYLOAD}; echo x > src/app.py"), ORCH_HOOK_TIMEOUT="3")
        took = time.monotonic() - start
    finally:
        os.close(fd)
    assert done.returncode == 2 and "did not finish within 3 s" in done.stderr, done.stderr
    assert took < 30
    assert (ws / "README.md").read_text() == README


def test_the_installed_claude_code_hook_blocks_when_it_fails(tmp_path: Path) -> None:
    """``onFailure: "block"`` on PreToolUse: a hook Claude Code cannot run, times out or sees killed blocks the call
    (its default would run it without the hook). The e2e test with the real CLI is in tests/e2e."""
    root = orch_support.app_repo(tmp_path)
    settings = json.loads((root / ".claude" / "settings.json").read_text())
    for group in settings["hooks"]["PreToolUse"]:
        for entry in group["hooks"]:
            assert entry["onFailure"] == "block" and entry["timeout"] >= 600


#: the attacker's helper: lock the ledger through a read-only descriptor and hold it until its stdin closes
HOLD = ("import fcntl, os, sys\nfd = os.open('.orchestration/agent_trace.jsonl', os.O_RDONLY)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('locked', flush=True)\nsys.stdin.read()\n")


@needs_landlock
def test_a_command_holding_a_lock_on_the_ledger_does_not_stall_the_post_hooks_append(ws: Path) -> None:
    """A ``flock`` needs only a descriptor open for reading, and a sandboxed command may read the ledger: one that
    locked it (here in the background, as an agent's background shell) held every post-hook's append — the records
    of the calls made meanwhile were never written. The writers lock ``run/<ledger>.lock``, hidden from the sandbox."""
    (ws / "src" / "hold.py").write_text(HOLD)
    ledger = ws / ".orchestration" / "agent_trace.jsonl"
    out = json.loads(hook(ws, {"hook_event_name": "PreToolUse", "tool_use_id": "toolu_hold", "tool_name": "Bash",
                               "tool_input": {"command": "python3 src/hold.py"}}).stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "allow", out
    holder = subprocess.Popen(["/bin/bash", "-c", out["updatedInput"]["command"]], cwd=ws, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n", holder.stderr
        before = ledger.read_bytes().count(b"\n") if ledger.exists() else 0
        inp = {"file_path": str(ws / "src" / "app.py"), "content": "x = 2\n"}
        pre = hook(ws, {"hook_event_name": "PreToolUse", "tool_use_id": "toolu_w", "tool_name": "Write",
                        "tool_input": inp})
        assert pre.stdout == "", pre.stdout  # allowed
        (ws / "src" / "app.py").write_text("x = 2\n")
        done = client(ws, {"hook_event_name": "PostToolUse", "tool_use_id": "toolu_w", "tool_name": "Write",
                           "tool_input": inp, "tool_response": {"filePath": inp["file_path"]}},
                      timeout=60, ORCH_HOOK_TIMEOUT="20")
        assert done.returncode == 0, done.stderr
        assert ledger.read_bytes().count(b"\n") > before
        assert holder.poll() is None  # still holding its lock: the append did not wait for it
    finally:
        holder.communicate(input="", timeout=30)
