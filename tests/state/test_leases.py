"""Write leases (orchestrator/state/leases.py, orchestrator/pre/lease.py): one session at a time changes a file.

Real files, real Governors (one per session, as hook processes are), real processes for the holder's liveness and
for the simultaneous writers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from orchestrator import hookclient
from orchestrator.state import leases
from orchestrator.core.models import ToolResult
from orchestrator.engine.pipeline import Governor
from orchestrator.engine.tools import to_call

REPO = Path(__file__).resolve().parents[2]


def _select(gov: Governor, *sessions: str) -> None:
    for s in sessions:
        gov.select_intent("INT-001", s)


def _read(gov: Governor, session: str, path: str = "src/app.py") -> None:
    call = to_call("Read", {"file_path": path}, session_id=session)
    assert gov.pre(call).allowed
    gov.post(call)


# --- the lease store ---------------------------------------------------------------------------------------------
def test_second_session_is_refused_until_the_first_releases(tmp_path: Path) -> None:
    d, root = str(tmp_path / "leases"), str(tmp_path)
    assert leases.acquire(d, root, ["src/a.py"], {"session": "a", "intent": "I1"}) is None
    busy = leases.acquire(d, root, ["src/b.py", "src/a.py"], {"session": "b", "intent": "I2"})
    assert busy is not None and busy["session"] == "a" and busy["path"] == "src/a.py" and busy["intent"] == "I1"
    # all or nothing: b got no lease on src/b.py either
    assert leases.acquire(d, root, ["src/b.py"], {"session": "c"}) is None
    # a session never blocks itself (a retry after a lost post-hook)
    assert leases.acquire(d, root, ["src/a.py"], {"session": "a"}) is None
    assert leases.release(d, root, ["src/a.py"], "b") == 0  # not b's to release
    assert leases.release(d, root, ["src/a.py"], "a") == 1
    assert leases.acquire(d, root, ["src/a.py"], {"session": "b"}) is None
    assert [lease["session"] for lease in leases.held(d)] == ["c", "b"]


def test_an_expired_lease_is_broken(tmp_path: Path) -> None:
    d, root = str(tmp_path / "leases"), str(tmp_path)
    assert leases.acquire(d, root, ["f"], {"session": "a"}, ttl=-1) is None
    assert leases.held(d) == []
    assert leases.acquire(d, root, ["f"], {"session": "b"}) is None


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_lease_whose_agent_process_is_gone_is_broken_at_once(tmp_path: Path) -> None:
    d, root = str(tmp_path / "leases"), str(tmp_path)
    token = leases.HOST_PID.set((_dead_pid(), None))
    try:
        assert leases.acquire(d, root, ["f"], {"session": "a"}) is None
    finally:
        leases.HOST_PID.reset(token)
    assert leases.acquire(d, root, ["f"], {"session": "b"}) is None  # long before its expiry


def test_a_reused_pid_does_not_keep_a_lease(tmp_path: Path) -> None:
    d, root = str(tmp_path / "leases"), str(tmp_path)
    assert leases.acquire(d, root, ["f"], {"session": "a"}) is None
    path = os.path.join(d, leases.key(os.path.join(root, "f")))
    lease = json.loads(Path(path).read_text())
    assert lease["pid"] == os.getpid() and lease["pid_start"] == leases.process_start(os.getpid())
    lease["pid_start"] -= 1  # the pid now names another process than the one that took the lease
    Path(path).write_text(json.dumps(lease))
    assert leases.acquire(d, root, ["f"], {"session": "b"}) is None


def test_a_forged_lease_cannot_block_a_file_for_good(tmp_path: Path) -> None:
    d, root = str(tmp_path / "leases"), str(tmp_path)
    os.makedirs(d)
    forged = {"session": "x", "pid": 0, "since": 0, "expires": 1e12, "path": "f"}
    Path(d, leases.key(os.path.join(root, "f"))).write_text(json.dumps(forged))
    assert leases.acquire(d, root, ["f"], {"session": "b"}) is None


def test_an_unknown_holder_ends_only_by_expiry(tmp_path: Path) -> None:
    d, root = str(tmp_path / "leases"), str(tmp_path)
    token = leases.HOST_PID.set((0, None))  # a daemon whose client sent no pid
    try:
        assert leases.acquire(d, root, ["f"], {"session": "a"}) is None
    finally:
        leases.HOST_PID.reset(token)
    assert leases.acquire(d, root, ["f"], {"session": "b"}) is not None


def test_hook_client_and_engine_name_the_same_agent_process() -> None:
    """The hook runs as ``agent -> sh -c -> python``: both walks skip the shell and name the agent (this test)."""
    code = ("import sys; sys.path.insert(0, %r); from orchestrator import hookclient; from orchestrator.state import leases; "
            "print(hookclient.agent_process(), '%%d:%%d' %% leases.agent_process())" % str(REPO))
    out = subprocess.run(["sh", "-c", f"{sys.executable} -c {json.dumps(code)}; true"], capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == [f"{os.getpid()}:{leases.process_start(os.getpid())}"] * 2
    assert hookclient.SHELLS == leases.SHELLS


# --- through the Governor --------------------------------------------------------------------------------------
def test_file_busy_names_the_holder_then_stale_once_the_write_lands(ws: Path) -> None:
    a, b = Governor(ws), Governor(ws)  # two sessions, two hook processes
    _select(a, "a", "b")
    _read(a, "a")
    _read(b, "b")
    write_a = to_call("Edit", {"file_path": "src/app.py"}, session_id="a", tool_use_id="toolu_a")
    assert a.pre(write_a).allowed
    v = b.pre(to_call("Edit", {"file_path": "src/app.py"}, session_id="b"))
    assert v.decision == "deny" and v.error["type"] == "file-busy" and v.error["hook"] == "lease"
    assert v.error["path"] == "src/app.py" and v.error["holder"]["session"] == "a"
    assert v.error["holder"]["intent"] == "INT-001" and v.error["holder"]["since"].endswith("Z")
    assert v.error["retry_after_seconds"] > 0 and "re-read" in v.error["hint"]
    (ws / "src" / "app.py").write_text("x = 2\nprint(x)\n")
    assert a.post(write_a) is not None
    v = b.pre(to_call("Edit", {"file_path": "src/app.py"}, session_id="b"))
    assert v.error["type"] == "stale-file"  # a's write landed: b must re-read first
    _read(b, "b")
    assert b.pre(to_call("Edit", {"file_path": "src/app.py"}, session_id="b")).allowed


def test_a_refusal_after_the_lease_releases_it(ws: Path) -> None:
    a = Governor(ws)
    _select(a, "a", "b")
    _read(a, "a")
    (ws / "src" / "app.py").write_text("changed elsewhere\n")
    assert a.pre(to_call("Edit", {"file_path": "src/app.py"}, session_id="a")).error["type"] == "stale-file"
    assert leases.held(a.workspace.leases_dir) == []
    assert a.pre(to_call("Edit", {"file_path": "src/app.py"}, session_id="b")).allowed


def test_a_failed_tool_releases_its_lease(ws: Path) -> None:
    a = Governor(ws)
    _select(a, "a", "b")
    call = to_call("Write", {"file_path": "src/app.py", "content": "x"}, session_id="a")
    assert a.pre(call).allowed
    assert a.post(call, ToolResult.failure()) is None
    assert a.pre(to_call("Write", {"file_path": "src/app.py"}, session_id="b")).allowed


def test_leases_are_shared_by_the_worktrees_of_a_repository(tmp_path: Path) -> None:
    from tests.conftest import make_workspace

    ws = make_workspace(tmp_path / "repo", git=True)
    gov = Governor(ws)
    assert Path(gov.workspace.leases_dir).parent == Path(gov.workspace.shared_run_dir)
    # the main worktree's .orchestration/run: no sandbox plan grants it, not even a git command's (issue 21)
    assert Path(gov.workspace.leases_dir) == Path(ws).resolve() / ".orchestration" / "run" / "leases"


def test_no_deadlock_when_the_agent_is_killed_between_pre_and_post(ws: Path) -> None:
    """``kill -9`` of the agent after its pre-hook: the next session gets the file at once, not after the TTL."""
    agent = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    a, b = Governor(ws), Governor(ws)
    _select(a, "a", "b")
    token = leases.HOST_PID.set((agent.pid, leases.process_start(agent.pid)))
    try:
        assert a.pre(to_call("Write", {"file_path": "src/app.py"}, session_id="a")).allowed
    finally:
        leases.HOST_PID.reset(token)
    assert b.pre(to_call("Write", {"file_path": "src/app.py"}, session_id="b")).error["type"] == "file-busy"
    agent.kill()
    agent.wait()
    assert b.pre(to_call("Write", {"file_path": "src/app.py"}, session_id="b")).allowed


# --- simultaneous writers ----------------------------------------------------------------------------------------
WORKER = textwrap.dedent("""\
    import json, sys
    sys.path.insert(0, sys.argv[3])
    from orchestrator.core.models import ToolResult
    from orchestrator.engine.pipeline import Governor
    from orchestrator.engine.tools import to_call
    root, session = sys.argv[1], sys.argv[2]
    gov = Governor(root)
    path = root + "/src/shared.py"
    for line in sys.stdin:
        n = line.strip()
        if n.startswith("read"):
            read = to_call("Read", {"file_path": "src/shared.py"}, session_id=session)
            gov.pre(read)
            seen = open(path).read()
            gov.post(read)
            print("ok", flush=True)
            continue
        call = to_call("Write", {"file_path": "src/shared.py"}, session_id=session, tool_use_id=f"{session}-{n}")
        v = gov.pre(call)
        if v.allowed:
            # the edit is based on what this session read: a lost update drops the other session's line
            with open(path, "w") as fh:
                fh.write(seen + f"{session} {n}\\n")
            gov.post(call, ToolResult())
        print(json.dumps({"allowed": v.allowed, "error": v.error}), flush=True)
""")


def test_twenty_simultaneous_rounds_of_two_sessions_lose_no_update(ws: Path) -> None:
    (ws / "src" / "shared.py").write_text("")
    gov = Governor(ws)
    _select(gov, "a", "b")
    script = ws.parent / "worker.py"
    script.write_text(WORKER)
    procs = {s: subprocess.Popen([sys.executable, str(script), str(ws), s, str(REPO)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True) for s in ("a", "b")}
    allowed, refusals = [], []
    try:
        for n in range(20):
            for p in procs.values():  # both read the file as it is now
                p.stdin.write("read\n")
                p.stdin.flush()
            assert [p.stdout.readline().strip() for p in procs.values()] == ["ok", "ok"]
            for p in procs.values():  # then both write at the same moment
                p.stdin.write(f"{n}\n")
                p.stdin.flush()
            for s, p in procs.items():
                answer = json.loads(p.stdout.readline())
                (allowed.append(f"{s} {n}") if answer["allowed"] else refusals.append(answer["error"]))
    finally:
        for p in procs.values():
            p.stdin.close()
            p.wait(timeout=60)
    lines = (ws / "src" / "shared.py").read_text().splitlines()
    assert sorted(lines) == sorted(allowed), "an allowed write was lost"
    assert len(allowed) == 20  # exactly one session wrote in every round: the other was refused
    for err in refusals:
        assert err["type"] in ("file-busy", "stale-file") and err["hint"] and err["path"] == "src/shared.py"
        if err["type"] == "file-busy":
            assert err["holder"]["session"] in ("a", "b") and err["holder"]["intent"] == "INT-001"
