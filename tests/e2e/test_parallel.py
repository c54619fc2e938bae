"""Parallel agents, end to end: four REAL Claude Code CLI processes at once, in two git worktrees of one repository.

A and B work in the main worktree, C and D in a linked one (``git worktree add``); each writes a few files in scope.
D's ``rm -rf build`` needs a person (channel ``tui``): it waits while A, B and C finish their whole scripts — nobody
waits on D's approval — and the request is listed and rejected from the *main* worktree with ``orch approvals`` /
``orch reject``, although D runs in the linked one. Each worktree's ledger records its own writes and verifies.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.e2e.claude_cli import CliRun, make_runner
from tests.e2e.fake_anthropic import FakeAnthropic, ToolUse
from tests.waiting import wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]
TOOLS = "Bash Write Edit Read Glob Grep mcp__orchestrator"
INTENTS = """\
active_intents:
  - id: INT-1
    name: app work
    status: IN_PROGRESS
    owned_scope: ["src/**", "build/**", "build"]
"""
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


def orch(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.run([sys.executable, "-m", "orchestrator", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=60)
    assert not check or proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def writes(root: Path, who: str, n: int) -> list[list[ToolUse]]:
    return [[ToolUse("Write", {"file_path": str(root / "src" / f"{who}{i}.py"), "content": f"{who} = {i}\n"},
                     id=f"{who}_write_{i}")] for i in range(n)]


def test_four_cli_sessions_in_two_worktrees_one_pending_approval(claude_bin: Path, tmp_path: Path) -> None:
    main, linked = tmp_path / "main", tmp_path / "linked"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    (main / "src").mkdir()
    (main / "src" / "app.py").write_text("x = 1\n")
    (main / "build").mkdir()
    (main / "build" / "out.txt").write_text("artefact\n")
    orch(main, "init")
    (main / ".orchestration" / "active_intents.yaml").write_text(INTENTS)
    orch(main, "install", "claude-code")
    git(main, "add", "-A")
    git(main, "commit", "-qm", "governed")
    git(main, "worktree", "add", "-q", str(linked), "-b", "feature")

    select = [ToolUse("mcp__orchestrator__select_active_intent", {"intent_id": "INT-1"}, id="select")]
    scripts = {
        "a": (main, FakeAnthropic([select, *writes(main, "a", 3), "a done"])),
        "b": (main, FakeAnthropic([select, *writes(main, "b", 3), "b done"])),
        "c": (linked, FakeAnthropic([select, *writes(linked, "c", 3), "c done"])),
        "d": (linked, FakeAnthropic([select, *writes(linked, "d", 1),
                                     [ToolUse("Bash", {"command": "rm -rf build", "description": "clean"},
                                              id="d_rm")], "d done"])),
    }
    env = {"PYTHONPATH": str(REPO_ROOT), "ORCH_APPROVAL_CHANNEL": "tui", "ORCH_DAEMON_IDLE": "60"}
    runs: dict[str, CliRun] = {}
    finished: dict[str, float] = {}

    def session(name: str) -> None:
        root, api = scripts[name]
        run = make_runner(claude_bin, tmp_path / f"home-{name}")
        with api:
            runs[name] = run(root, api.base_url, "--mcp-config", ".mcp.json", env=env, tools=TOOLS, timeout=300)
        finished[name] = time.monotonic()

    threads = {name: threading.Thread(target=session, args=(name,)) for name in scripts}
    try:
        for t in threads.values():
            t.start()
        # D's rm -rf waits for a person; it is filed in the repository-wide broker, seen from the main worktree
        def d_asked() -> list[dict]:
            assert threads["d"].is_alive(), "session d finished without asking for approval"
            return json.loads(orch(main, "approvals", "--json").stdout)

        pending = wait_until(d_asked, what="session d's rm -rf to be filed", timeout=240, interval=0.5)
        assert len(pending) == 1, pending
        request = pending[0]
        assert request["command"] == "rm -rf build"
        assert request["worktree"] == str(linked.resolve()) and request["branch"] == "feature"

        # the others run their whole scripts meanwhile: nobody waits on D's approval
        for name in "abc":
            threads[name].join(timeout=240)
            assert not threads[name].is_alive(), f"session {name} did not finish"
        assert threads["d"].is_alive()
        assert [p["id"] for p in json.loads(orch(main, "approvals", "--json").stdout)] == [request["id"]]
        status = json.loads(orch(main, "status", "--json").stdout)
        waiting = [s for s in status["sessions"] if s["pending_approvals"]]
        assert len(waiting) == 1 and waiting[0]["worktree"] == str(linked.resolve())

        # decided from the main worktree
        orch(main, "reject", request["id"], "--reason", "keep the build")
        threads["d"].join(timeout=120)
        assert not threads["d"].is_alive()
    finally:
        for req in json.loads(orch(main, "approvals", "--json", check=False).stdout or "[]"):
            orch(main, "reject", req["id"], "--reason", "test over", check=False)
        for t in threads.values():
            t.join(timeout=120)
        for root in (main, linked):
            orch(root, "serve", "--stop", check=False)

    for name, run in runs.items():
        assert run.returncode == 0, (name, run.stderr[-2000:])
        assert run.result["result"] == f"{name} done"
    assert finished["d"] > max(finished[n] for n in "abc")
    d_results = scripts["d"][1].tool_results()
    assert d_results["d_rm"]["is_error"] and "approval-rejected" in d_results["d_rm"]["content"]
    assert "keep the build" in d_results["d_rm"]["content"]
    assert (linked / "build" / "out.txt").exists()

    # every write landed and is recorded in its own worktree's ledger; both chains verify
    expected = {main: {f"src/{w}{i}.py" for w in "ab" for i in range(3)},
                linked: {f"src/c{i}.py" for i in range(3)} | {"src/d0.py"}}
    for root, paths in expected.items():
        assert all((root / p).exists() for p in paths)
        lines = (root / ".orchestration" / "agent_trace.jsonl").read_text().splitlines()
        recorded = {f["path"] for line in lines if line.strip() for f in json.loads(line)["files"]}
        assert recorded == paths, root
        assert orch(root, "trace", "verify").returncode == 0
