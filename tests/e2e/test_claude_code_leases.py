"""Write leases end to end: two REAL Claude Code CLI sessions change one file (issue 22, item 1).

Session A's Bash command is leased on ``src/shared.py`` and waits on a FIFO before it appends to it, so A holds the
lease for as long as the test wants (no clock involved). Session B read the file and edits it meanwhile: its hook
answers ``file-busy`` naming A. When A's write has landed (A's post-hook released the lease), B's edit based on its
first read is refused (its read is stale), B reads again and its edit lands. Both changes are in the file and in the
ledger, which verifies.
"""
from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

from orchestrator.state import leases
from orchestrator.config.workspace import Workspace
from tests.e2e.claude_cli import CliRun, make_runner
from tests.e2e.fake_anthropic import FakeAnthropic, ToolUse
from tests.e2e.orch_support import INTENTS, REPO_ROOT, orch
from tests.waiting import wait_until


def orch_(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """``orch ARGS`` in ``cwd``; the caller asserts on the exit code."""
    return orch(cwd, *args, check=False)

TOOLS = "Bash Write Edit Read Glob Grep mcp__orchestrator"


def _refusals(root: Path) -> list[dict]:
    path = root / ".orchestration" / "run" / "refusals.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def test_two_cli_sessions_on_one_file_lose_nothing(claude_bin: Path, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    shared = root / "src" / "shared.py"
    shared.write_text("x = 1\n")
    assert orch_(root, "init").returncode == 0
    (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS)
    assert orch_(root, "install", "claude-code").returncode == 0
    gate_a, gate_b = tmp_path / "gate-a", tmp_path / "gate-b"
    os.mkfifo(gate_a)
    os.mkfifo(gate_b)

    select = [ToolUse("mcp__orchestrator__select_active_intent", {"intent_id": "INT-1"}, id="select")]
    read = {"file_path": str(shared)}
    edit = {"file_path": str(shared), "old_string": "x = 1", "new_string": "x = 2"}
    api_a = FakeAnthropic([select, [ToolUse("Read", read, id="a_read")],
                           [ToolUse("Bash", {"command": f"read go < {gate_a} && echo 'a = 1' >> src/shared.py",
                                             "description": "append"}, id="a_append")], "a done"])
    api_b = FakeAnthropic([select, [ToolUse("Read", read, id="b_read")],
                           [ToolUse("Edit", edit, id="b_edit_busy")],
                           [ToolUse("Bash", {"command": f"read go < {gate_b}", "description": "wait"}, id="b_wait")],
                           [ToolUse("Edit", edit, id="b_edit_stale")],
                           [ToolUse("Read", read, id="b_reread")],
                           [ToolUse("Edit", edit, id="b_edit")], "b done"])
    env = {"PYTHONPATH": str(REPO_ROOT), "ORCH_DAEMON_IDLE": "60"}
    runs: dict[str, CliRun] = {}

    def session(name: str, api: FakeAnthropic) -> None:
        run = make_runner(claude_bin, tmp_path / f"home-{name}")
        with api:
            runs[name] = run(root, api.base_url, "--mcp-config", ".mcp.json", env=env, tools=TOOLS, timeout=300)

    lease_dir = Workspace.at(root).leases_dir
    threads = {"a": threading.Thread(target=session, args=("a", api_a)),
               "b": threading.Thread(target=session, args=("b", api_b))}
    try:
        threads["a"].start()
        holder = wait_until(lambda: leases.held(lease_dir), what="session A's lease on src/shared.py", timeout=240,
                            interval=0.2)
        assert [lease["path"] for lease in holder] == ["src/shared.py"]
        threads["b"].start()
        busy = wait_until(lambda: [r for r in _refusals(root) if r.get("type") == "file-busy"],
                          what="session B's edit to be refused as file-busy", timeout=240, interval=0.2)
        assert busy[0]["path"] == "src/shared.py"
        with open(gate_a, "w") as fh:  # A's command goes on: it appends, its post-hook releases the lease
            fh.write("go\n")
        threads["a"].join(timeout=240)
        assert not threads["a"].is_alive()
        wait_until(lambda: not leases.held(lease_dir), what="A's lease to be released", timeout=60)
        with open(gate_b, "w") as fh:  # B goes on with its edit based on its first read
            fh.write("go\n")
        threads["b"].join(timeout=240)
        assert not threads["b"].is_alive()
    finally:
        for gate in (gate_a, gate_b):  # never leave a session blocked on its FIFO
            fd = os.open(gate, os.O_RDWR | os.O_NONBLOCK)
            os.write(fd, b"go\n")
            os.close(fd)
        for t in threads.values():
            t.join(timeout=120)
        orch_(root, "serve", "--stop")

    for name, run in runs.items():
        assert run.returncode == 0, (name, run.stderr[-2000:])
        assert run.result["result"] == f"{name} done"
    results = api_b.tool_results()
    refused = results["b_edit_busy"]
    assert refused["is_error"] and "file-busy" in refused["content"], refused
    error = json.loads(refused["content"][refused["content"].index("{"):])
    assert error["holder"]["intent"] == "INT-1" and error["hint"]
    assert error["holder"]["session"] == runs["a"].result["session_id"]
    # once A's write landed, B's edit from its first read is refused (by orchestrator's stale check, or by Claude
    # Code's own "modified since read" check, which runs before the hooks), until B reads again
    assert results["b_edit_stale"]["is_error"], results["b_edit_stale"]
    assert not results["b_edit"]["is_error"], results["b_edit"]
    assert shared.read_text() == "x = 2\na = 1\n"  # nothing lost
    lines = (root / ".orchestration" / "agent_trace.jsonl").read_text().splitlines()
    tools = sorted(json.loads(line)["metadata"]["dev.orchestrator"]["tool_name"] for line in lines if line.strip())
    assert tools == ["Bash", "Edit"]
    assert orch_(root, "trace", "verify").returncode == 0
