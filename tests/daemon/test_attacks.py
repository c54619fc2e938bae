"""Issue 28, finding 2: ``orch serve`` obeyed any process that reached its socket. Each attack here runs against a
real daemon process, from a real attacker script speaking the wire protocol (``d.py`` below, as the red team's);
where it says so, the script runs as a sandboxed command the hook allowed (the real Landlock launcher, with and
without the PID namespace). The socket is reached through a second name outside the run directory, so these tests
hold the daemon itself to account even where the command's mount namespace hides ``.orchestration/run/``
(defence in depth: the daemon must be correct even if a sandboxed command *can* reach its socket).

Before the fix every attack worked: an intent selected for another session, a record signed with the machine's key
for a session that never made the call, README.md / .mcp.json written and .gitattributes deleted through a Post
frame's ``originalFile``, and a frame left half-open acted on once its sender was gone.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orchestrator.daemon import server as daemon
from tests.conftest import make_workspace
from tests.e2e import orch_support
from orchestrator.adapters.base import run_hook
from orchestrator.sandbox import landlock, unwrap
from tests.waiting import wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]
CLIENT = REPO_ROOT / "orchestrator" / "hookclient.py"
ENV = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "ORCH_DAEMON_IDLE": "60"}
SESSION = "0f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b"
VICTIM = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"
INTENTS = orch_support.INTENTS + """\
  - id: INT-3
    name: everything
    status: IN_PROGRESS
    owned_scope: ["**"]
"""
README = "# project\n"
GITATTRIBUTES = "*.py diff=python\n"

#: the attacker: about sixty lines that speak the daemon's wire protocol (orchestrator/hookclient.py)
ATTACKER = r'''
import json, os, socket, sys

sock_path, root, mode = sys.argv[1], sys.argv[2], sys.argv[3]
OWN, VICTIM = sys.argv[4], sys.argv[5]


def frame(event):
    head = ("ORCH1 claude-code\nORCH_ROOT=%s\n\n" % root).encode()
    return head + json.dumps({"cwd": root, "transcript_path": None, **event}).encode()


def send(event, half_open=False):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock_path)
    s.sendall(frame(event))
    if half_open:
        return s
    s.shutdown(socket.SHUT_WR)
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    print(mode, repr(data[:300]), flush=True)
    return None


def write_event(name, session, rel, tuid, response=None):
    event = {"hook_event_name": name, "session_id": session, "tool_name": "Write", "tool_use_id": tuid,
             "tool_input": {"file_path": os.path.join(root, rel), "content": "x\n"}}
    if response is not None:
        event["tool_response"] = response
    return event


def swap_then_post(rel, target, tuid, response):
    send(write_event("PreToolUse", OWN, rel, tuid))
    path = os.path.join(root, rel)
    if os.path.lexists(path):
        os.unlink(path)
    os.symlink(target, path)
    send(write_event("PostToolUse", OWN, rel, tuid, response))


if mode == "select":
    send({"hook_event_name": "PreToolUse", "session_id": VICTIM, "tool_use_id": "toolu_sel",
          "tool_name": "mcp__orchestrator__select_active_intent", "tool_input": {"intent_id": "INT-3"}})
elif mode == "forge":
    with open(os.path.join(root, "src", "forged.py"), "w") as fh:
        fh.write("def backdoor():\n    pass\n")
    send(write_event("PostToolUse", VICTIM, "src/forged.py", "toolu_forged",
                     {"type": "create", "originalFile": None}))
elif mode == "original":
    swap_then_post("src/r.py", "../README.md", "toolu_o1", {"type": "update", "originalFile": "PWNED\n"})
    swap_then_post("src/m.py", "../.mcp.json", "toolu_o2",
                   {"type": "update", "originalFile": '{"mcpServers": {"x": {"command": "sh"}}}\n'})
    swap_then_post("src/g.py", "../.gitattributes", "toolu_o3", {"type": "create", "originalFile": None})
elif mode == "halfopen":
    s = send({"hook_event_name": "PreToolUse", "session_id": VICTIM, "tool_use_id": "toolu_half",
              "tool_name": "mcp__orchestrator__select_active_intent", "tool_input": {"intent_id": "INT-3"}},
             half_open=True)
    print("sent", flush=True)
    sys.stdin.readline()  # the frame stays open until the test says so; exiting closes it
'''


@pytest.fixture
def ws(tmp_path: Path):
    root = make_workspace(tmp_path / "project", INTENTS, git=True)
    (root / "src" / "d.py").write_text(ATTACKER)
    (root / "README.md").write_text(README)
    (root / ".gitattributes").write_text(GITATTRIBUTES)
    root = root.resolve()
    yield root
    daemon.stop(root)


def start_daemon(root: Path, **env: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "serve", "--root", str(root)],
                            env={**ENV, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_until(lambda: daemon.is_alive(daemon.socket_path(root)) or proc.poll() is not None,
               what="the daemon to answer on its socket (or exit)")
    assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    return proc


def second_name(root: Path) -> Path:
    """The daemon's socket under a name outside the run directory (a hard link: the same socket)."""
    alias = root.parent / "reach.sock"
    os.link(daemon.socket_path(root), alias)
    return alias


def hook(root: Path, event: dict[str, Any]) -> Any:
    """The host's own hook call, in-process (the daemon is the attacker's target)."""
    event = {"cwd": str(root), "transcript_path": None, **event}
    return run_hook("claude-code", json.dumps(event), env={"ORCH_ROOT": str(root), "ORCH_APPROVAL_CHANNEL": "deny"})


def select(root: Path, session: str, intent: str = "INT-1") -> None:
    result = hook(root, {"hook_event_name": "PreToolUse", "session_id": session, "tool_use_id": "toolu_s",
                         "tool_name": "mcp__orchestrator__select_active_intent", "tool_input": {"intent_id": intent}})
    assert result.exit_code == 0 and not result.stdout, result


def session_intent(root: Path, session: str) -> str | None:
    path = root / ".orchestration" / "run" / "sessions" / f"{session}.json"
    return json.loads(path.read_text()).get("intent_id") if path.exists() else None


def sandboxed(root: Path, command: str) -> str:
    """The command as the hook allows it for the agent's session: wrapped in the Landlock launcher."""
    result = hook(root, {"hook_event_name": "PreToolUse", "session_id": SESSION, "tool_use_id": "toolu_bash",
                         "tool_name": "Bash", "tool_input": {"command": command, "description": "run it"}})
    out = json.loads(result.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "allow", out
    wrapped = out["updatedInput"]["command"]
    assert unwrap(wrapped) == command
    return wrapped


def attack(root: Path, sock: Path, mode: str, *, sandbox: bool = True, **popen: Any) -> Any:
    command = f"{sys.executable} src/d.py {sock} {root} {mode} {SESSION} {VICTIM}"
    argv = ["/bin/bash", "-c", sandboxed(root, command) if sandbox else command]
    if popen:
        return subprocess.Popen(argv, cwd=root, text=True, **popen)
    return subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=120)


def refusals(root: Path) -> list[dict[str, Any]]:
    path = root / ".orchestration" / "run" / "refusals.jsonl"
    if not path.exists():
        return []
    return [e for e in map(json.loads, path.read_text().splitlines()) if e.get("hook") == "daemon"]


def ledger_text(root: Path) -> str:
    path = root / ".orchestration" / "agent_trace.jsonl"
    return path.read_text() if path.exists() else ""


needs_landlock = pytest.mark.skipif(landlock.abi() < 1, reason="this kernel has no Landlock")
PID_NAMESPACE = pytest.mark.parametrize("pidns", [True, False], ids=["pidns", "no-pidns"])


def ready(root: Path, pidns: bool = True, **daemon_env: str) -> None:
    """Both sessions work on INT-1, the daemon runs (the launcher with or without its PID namespace)."""
    if not pidns:
        (root / ".orchestration" / "policy.yaml").write_text("version: 1\nsandbox:\n  pid_namespace: false\n")
    select(root, SESSION)
    select(root, VICTIM)
    start_daemon(root, **daemon_env)


@needs_landlock
@PID_NAMESPACE
def test_a_sandboxed_script_cannot_select_an_intent_for_another_session(ws: Path, pidns: bool) -> None:
    ready(ws, pidns)
    done = attack(ws, second_name(ws), "select")
    assert session_intent(ws, VICTIM) == "INT-1", done.stdout + done.stderr
    (entry,) = refusals(ws)
    assert entry["type"] == "peer-refused" and entry["decision"] == "refused" and entry["peer"]["pid"] > 0
    assert entry["message"] and entry["hint"]


@needs_landlock
@PID_NAMESPACE
def test_a_sandboxed_script_cannot_have_a_record_signed_for_another_session(ws: Path, pidns: bool) -> None:
    ready(ws, pidns)
    done = attack(ws, second_name(ws), "forge")
    assert "toolu_forged" not in ledger_text(ws), done.stdout + done.stderr
    assert refusals(ws) and all(e["type"] == "peer-refused" for e in refusals(ws))


@needs_landlock
def test_a_sandboxed_script_cannot_restore_its_own_original_file_through_links(ws: Path) -> None:
    select(ws, SESSION)
    start_daemon(ws)
    done = attack(ws, second_name(ws), "original")
    assert (ws / "README.md").read_text() == README, done.stdout + done.stderr
    assert not (ws / ".mcp.json").exists()
    assert (ws / ".gitattributes").read_text() == GITATTRIBUTES
    assert len(refusals(ws)) == 6, done.stdout + done.stderr  # three Pre and three Post frames, each refused


@needs_landlock
def test_a_half_open_frame_of_a_sandboxed_script_is_never_acted_on(ws: Path) -> None:
    ready(ws)
    proc = attack(ws, second_name(ws), "halfopen", stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                  stderr=subprocess.PIPE)
    assert proc.stdout.readline().strip() == "sent"
    proc.communicate("\n", timeout=60)  # the script exits: its frame is closed only now
    wait_until(lambda: refusals(ws), what="the daemon to log the refused peer")
    assert session_intent(ws, VICTIM) == "INT-1"


def test_a_frame_whose_sender_is_gone_is_dropped(ws: Path) -> None:
    """Unsandboxed too: a frame completed only by its sender's exit (nobody waits for the answer) is not acted on."""
    ready(ws)
    proc = attack(ws, daemon.socket_path(ws), "halfopen", sandbox=False, stdin=subprocess.PIPE,
                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline().strip() == "sent"
    proc.communicate("\n", timeout=60)
    entry = wait_until(lambda: [e for e in refusals(ws) if e["type"] == "peer-gone"],
                       what="the daemon to drop the frame of a sender that exited")[0]
    assert entry["peer"]["pid"] == proc.pid or entry["peer"]["pid"] > 0
    assert session_intent(ws, VICTIM) == "INT-1"


def test_a_frame_left_open_past_the_deadline_is_dropped(ws: Path) -> None:
    ready(ws, ORCH_DAEMON_FRAME_TIMEOUT="0.5")
    proc = attack(ws, daemon.socket_path(ws), "halfopen", sandbox=False, stdin=subprocess.PIPE,
                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline().strip() == "sent"
    wait_until(lambda: [e for e in refusals(ws) if e["type"] == "frame-timeout"],
               what="the daemon to drop the frame left open")
    proc.communicate("\n", timeout=60)
    assert session_intent(ws, VICTIM) == "INT-1"


def test_the_hook_client_is_still_served_by_the_daemon(ws: Path) -> None:
    """The legitimate peer: the stdlib client run by an interpreter that could not evaluate in-process (no engine
    dependencies), so an allow proves the daemon answered it."""
    select(ws, SESSION)
    start_daemon(ws)
    event = {"session_id": SESSION, "cwd": str(ws), "hook_event_name": "PreToolUse", "tool_name": "Write",
             "tool_input": {"file_path": str(ws / "src" / "a.py"), "content": "x"}, "tool_use_id": "toolu_ok"}
    system = "/usr/bin/python3"
    if not os.path.exists(system) or subprocess.run([system, "-c", "import pydantic"],
                                                     capture_output=True).returncode == 0:
        pytest.skip("needs an interpreter without the engine's dependencies")
    done = subprocess.run([system, "-S", str(CLIENT), "claude-code"], input=json.dumps(event), capture_output=True,
                          text=True, cwd=ws, env={**ENV, "ORCH_NO_DAEMON": "1"}, timeout=60)
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    assert refusals(ws) == []


@pytest.mark.skipif(not shutil.which("setpriv"), reason="needs setpriv(1)")
def test_a_refused_hook_client_evaluates_in_process_and_starts_no_daemon(ws: Path) -> None:
    """A hook client the daemon will not serve (here: no_new_privs set, as under the launcher) still gets its
    answer, in-process with its own rights, and does not try to start another daemon."""
    select(ws, SESSION)
    start_daemon(ws)
    event = {"session_id": SESSION, "cwd": str(ws), "hook_event_name": "PreToolUse", "tool_name": "Write",
             "tool_input": {"file_path": str(ws / "README.md"), "content": "x"}, "tool_use_id": "toolu_nnp"}
    done = subprocess.run(["setpriv", "--no-new-privs", sys.executable, "-S", str(CLIENT), "claude-code"],
                          input=json.dumps(event), capture_output=True, text=True, cwd=ws, env=ENV, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"  # out of scope
    assert [e["type"] for e in refusals(ws)] == ["peer-refused"]
    assert not (ws / ".orchestration" / "run" / "orch.spawn").exists()


def test_no_daemon_is_started_from_inside_a_sandboxed_command(ws: Path) -> None:
    """Its peers would share its namespaces and no_new_privs: a daemon started there would serve the sandbox."""
    done = subprocess.run([sys.executable, "-m", "orchestrator", "serve", "--root", str(ws)],
                          env={**ENV, "ORCH_SANDBOXED": "1"}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert not daemon.socket_path(ws).exists() and not (ws / ".orchestration" / "run" / "orch.lock").exists()


#: forks twice (reparented away from every launcher process) and execs the attacker with a clean environment (no
#: ORCH_SANDBOXED in /proc/PID/environ): what the ancestry rule looks at is gone
ESCAPE = r"""
import os, sys
if os.fork():
    os._exit(0)
os.setsid()
if os.fork():
    os._exit(0)
out = open(sys.argv[1], "w")
os.dup2(out.fileno(), 1)
os.dup2(out.fileno(), 2)
os.execve(sys.executable, [sys.executable, "src/d.py", *sys.argv[2:]], {"PATH": "/usr/bin:/bin"})
"""


def container() -> None:
    """What a container run with ``--security-opt no-new-privileges`` and the default seccomp profile gives every
    process in it: ``no_new_privs``, and ``unshare(2)`` refused (EPERM) so no namespace can be made (x86_64)."""
    class Insn(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Insn))]

    ld, jeq, ret = 0x20, 0x15, 0x06
    insns = (Insn * 6)(Insn(ld, 0, 0, 4), Insn(jeq, 0, 3, 0xC000003E), Insn(ld, 0, 0, 0), Insn(jeq, 0, 1, 272),
                       Insn(ret, 0, 0, 0x00050000 | 1), Insn(ret, 0, 0, 0x7FFF0000))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(Prog(6, insns)), 0, 0) != 0:
        os._exit(99)


@needs_landlock
@pytest.mark.skipif(platform.machine() != "x86_64", reason="the seccomp filter names x86_64's unshare")
def test_a_sandboxed_script_that_leaves_its_ancestry_is_refused_where_the_daemon_has_no_new_privs(ws: Path) -> None:
    """Where every process has no_new_privs (the daemon too: that rule tells nothing) and the kernel refuses the
    namespaces, a sandboxed script that forked twice and exec'd with a clean environment passed every check and had
    the daemon select an intent for another session (review, on the code before). The daemon now asks once whether
    a sandboxed command gets a mount namespace of its own; where it does not, it serves nobody."""
    (ws / ".orchestration" / "policy.yaml").write_text("version: 1\nsandbox:\n  pid_namespace: false\n")
    (ws / "src" / "esc.py").write_text(ESCAPE)
    select(ws, SESSION)
    select(ws, VICTIM)
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "serve", "--root", str(ws)], env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=container)
    wait_until(lambda: daemon.is_alive(daemon.socket_path(ws)) or proc.poll() is not None, what="the daemon")
    assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    out = ws / "src" / "answer.txt"
    command = f"{sys.executable} src/esc.py {out} {daemon.socket_path(ws)} {ws} select {SESSION} {VICTIM}"
    done = subprocess.run(["/bin/bash", "-c", sandboxed(ws, command)], cwd=ws, capture_output=True, text=True,
                          timeout=120, preexec_fn=container)
    assert done.returncode == 0, done.stderr
    wait_until(lambda: out.exists() and "select" in out.read_text(), what="the escaped script's answer")
    assert session_intent(ws, VICTIM) == "INT-1", out.read_text()
    (entry,) = refusals(ws)
    assert entry["type"] == "peer-refused" and "no mount namespace" in entry["message"]
