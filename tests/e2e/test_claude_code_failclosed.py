"""End to end with the REAL Claude Code CLI (redteam3): a hook that hangs must never let the call run without it.

Claude Code runs a PreToolUse hook that times out, cannot start, is killed or exits with an unexpected code as a
"non-blocking error" unless the hook entry says ``onFailure: "block"`` (2.1.295+): the call goes ahead **as the
model wrote it** — for Bash, outside the sandbox. Two ways a sandboxed command or a wedged lock reached that:

1. the attack: a command the hook allowed puts a FIFO where a file the session read was; the next Bash call naming
   that file hung in the stale check's ``open``. Now the read never blocks and the stale check answers.
2. anything else that hangs (here: the write leases' lock held by another process): the installed entry blocks on
   a timeout (``onFailure``), and the hook client's own deadline (``ORCH_HOOK_TIMEOUT``) answers "blocked" first.

The hook timeouts are shortened in the settings (as a person may do) so that the old behaviour shows within the
test's time; the fix does not depend on it.
"""
from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest

from orchestrator.sandbox import landlock
from tests.e2e.claude_cli import make_runner
from tests.e2e.fake_anthropic import FakeAnthropic, ToolUse
from tests.e2e.orch_support import app_repo

pytestmark = pytest.mark.skipif(landlock.abi() < 1, reason="this kernel has no Landlock")
REPO_ROOT = Path(__file__).resolve().parents[2]
README = "# Project\n"
PLANT = "import os, sys\nos.unlink(sys.argv[1])\nos.mkfifo(sys.argv[1])\n"
#: the command that follows: it names src/app.py as a target (the stale check compares it with the read)
PAYLOAD = "python3 -c \"open('README.md', 'w').write('pwned')\"; touch src/app.py"


def _repo(tmp_path: Path, pre_timeout: int) -> Path:
    root = app_repo(tmp_path)
    (root / "README.md").write_text(README)
    path = root / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    for event in ("PreToolUse", "PostToolUse"):
        for group in settings["hooks"][event]:
            for entry in group["hooks"]:
                entry["timeout"] = pre_timeout
    path.write_text(json.dumps(settings, indent=2))
    return root


def _run(claude_bin: Path, tmp_path: Path, root: Path, script: list, **env: str) -> FakeAnthropic:
    api = FakeAnthropic([*script, "done"])
    full = {"PYTHONPATH": str(REPO_ROOT), "ORCH_APPROVAL_CHANNEL": "deny", "ORCH_NO_DAEMON": "1", **env}
    with api:
        run = make_runner(claude_bin, tmp_path / "home")(root, api.base_url, "--mcp-config", ".mcp.json", env=full,
                                                          tools="Bash Write Edit Read mcp__orchestrator", timeout=300)
    assert run.returncode == 0, run.stderr
    return api


def test_a_fifo_planted_by_a_sandboxed_command_does_not_let_the_next_command_run_bare(claude_bin: Path,
                                                                                       tmp_path: Path) -> None:
    root = _repo(tmp_path, pre_timeout=20)
    api = _run(claude_bin, tmp_path, root, [
        [ToolUse("mcp__orchestrator__select_active_intent", {"intent_id": "INT-1"}, id="select")],
        [ToolUse("Read", {"file_path": str(root / "src/app.py")}, id="read")],
        [ToolUse("Write", {"file_path": str(root / "src/plant.py"), "content": PLANT}, id="write")],
        [ToolUse("Bash", {"command": "python3 src/plant.py src/app.py", "description": "plant"}, id="plant")],
        [ToolUse("Bash", {"command": PAYLOAD, "description": "go"}, id="payload")],
    ], ORCH_HOOK_TIMEOUT="10")
    assert not (root / "src" / "app.py").is_file()  # the FIFO was planted, inside the sandbox
    assert (root / "README.md").read_text() == README
    assert "stale-file" in json.dumps(api.tool_results())


def test_a_hook_that_hangs_blocks_the_call(claude_bin: Path, tmp_path: Path) -> None:
    root = _repo(tmp_path, pre_timeout=5)
    lock = root / ".orchestration" / "run" / "leases" / ".lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    script = [[ToolUse("mcp__orchestrator__select_active_intent", {"intent_id": "INT-1"}, id="select")],
              [ToolUse("Bash", {"command": PAYLOAD, "description": "go"}, id="payload")]]
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # any wait the hook cannot finish: the host's timeout comes first here
        api = _run(claude_bin, tmp_path, root, script, ORCH_HOOK_TIMEOUT="600")
    finally:
        os.close(fd)
    assert (root / "README.md").read_text() == README
    result = api.tool_results()["payload"]
    assert result["is_error"], result
